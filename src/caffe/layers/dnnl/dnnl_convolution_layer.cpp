#include "caffe/layers/dnnl/dnnl_convolution_layer.hpp"

#include <glog/logging.h>

#include <algorithm>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <vector>

#include "caffe/kernels/dnnl_context.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/kernels/thread_scratch.hpp"
#include "caffe/util/environment.hpp"

namespace caffe {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// Staging memory for the blocked copies of one call's arguments, shared by every oneDNN layer on
// the thread: layers run one at a time, so a net needs the largest call's worth, not one copy of
// every activation per layer. Slots: 0 src, 1 weights, 2 dst or diff_src, 3 diff_dst, 4
// diff_weights as oneDNN lays them out (one call's gradient, before it is added to the blob's), 5
// oneDNN's own scratchpad (the backward passes run one after the other, so they share), 6 the
// positions a downsampling 1x1 convolution reads of a blocked input (or their gradient).
// The first three are also Winograd's (kernels/thread_scratch.hpp); a call runs one or the other.
enum Slot {
  kSrc = kConvolutionSrc,
  kWeights = kConvolutionWeights,
  kDst = kConvolutionDst,
  kDiffDst,
  kDiffWeights,
  kScratchpad,
  kSampled
};

float* ScratchSlot(int slot, size_t bytes) {
  return static_cast<float*>(ThreadScratch(ScratchUser::kConvolution, slot, bytes));
}

// A call's activations are staged a few images at a time, so that staging stays near this size
// whatever the batch: at CaffeNet's batch 256, conv1's output alone is 297 MB, and a whole-batch
// copy of it (and of its gradient) would be memory that BVLC's im2col engine never needs.
constexpr size_t kStagingBytes = 4 << 20;

// The images per oneDNN call: the largest divisor of `num` whose staged activations (the larger
// of input and output, per image) fit kStagingBytes; at least 1.
int ImagesPerCall(int num, size_t image_bytes) {
  for (int images = num; images > 1; --images) {
    if (num % images == 0 && images * image_bytes <= kStagingBytes) return images;
  }
  return 1;
}

// Winograd's scratch holds the weights transformed (4x their size) and the tiles of one call, and
// its weight gradient's about twice the forward's (per thread sums): the net's scratch is its
// largest call's, so one such layer raises the net's peak by that much. Past this forward size
// the direct algorithm runs: ResNet-50's res5 (512 -> 512 channels on 7x7, 48.8 MB forward, 126
// MB for the weight gradient at batch 8), which Winograd's 4x4 tiles cover badly (its 3x3s took
// 53 ms a step against 49 direct), and CaffeNet's conv3 (35 and 66 MB at batch 10: its peak
// went 51 MB past BVLC's), but not res4's (25 and 46 MB, 1.6x faster).
constexpr size_t kWinogradScratchBytes = 32 << 20;

// oneDNN's scratchpad comes from the thread's staging (slot kScratchpad) rather than from each
// primitive, so the net holds one, the largest call's.
dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

memory Scratchpad(const memory::desc& desc) {
  return memory(desc, DnnlEngine(), ScratchSlot(kScratchpad, desc.get_size()));
}

Tag PlainDataTag(int spatial_axes) {
  return spatial_axes == 1 ? Tag::ncw : spatial_axes == 2 ? Tag::nchw : Tag::ncdhw;
}

Tag PlainWeightsTag(int spatial_axes, bool grouped) {
  if (grouped) return spatial_axes == 1 ? Tag::goiw : spatial_axes == 2 ? Tag::goihw : Tag::goidhw;
  return spatial_axes == 1 ? Tag::oiw : spatial_axes == 2 ? Tag::oihw : Tag::oidhw;
}

// A reorder that adds to its destination instead of overwriting it.
dnnl::primitive_attr Summing() {
  dnnl::post_ops sum;
  sum.append_sum(1.f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(sum);
  return attr;
}

// One argument of a primitive: the blob's plain layout, the layout the primitive wants, and the
// reorders between them (none where they agree, the blob's memory is then used as it is). An
// accumulating argument is always staged, and Out adds the primitive's values to the blob's
// (Caffe's gradients accumulate over calls, bottoms and iter_size; oneDNN's overwrite): one pass
// over the blob, where a reorder into Caffe's layout and then an axpy made two.
class Staged {
 public:
  enum Mode { kOverwrite, kAccumulate };
  Staged() = default;
  Staged(const memory::desc& plain, const memory::desc& wanted, int slot, Mode mode = kOverwrite)
      : plain_(plain), wanted_(wanted), slot_(slot), same_(plain == wanted && mode == kOverwrite) {
    if (!same_) {
      const dnnl::engine& engine = DnnlEngine();
      to_wanted_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine, plain, engine, wanted));
      to_plain_ = dnnl::reorder(dnnl::reorder::primitive_desc(
          engine, wanted, engine, plain, mode == kAccumulate ? Summing() : dnnl::primitive_attr()));
    }
  }
  const memory::desc& wanted() const { return wanted_; }
  /// The blob's values in the wanted layout.
  memory In(const float* data) const {
    memory plain(plain_, DnnlEngine(), const_cast<float*>(data));
    if (same_) return plain;
    memory staged = Buffer();
    to_wanted_.execute(DnnlStream(), plain, staged);
    return staged;
  }
  /// Where the primitive writes; Out(target, data) then puts (or adds) the values into the blob.
  memory Target(float* data) const { return same_ ? memory(plain_, DnnlEngine(), data) : Buffer(); }
  void Out(const memory& target, float* data) const {
    if (same_) return;
    memory plain(plain_, DnnlEngine(), data), source = target;
    to_plain_.execute(DnnlStream(), source, plain);
  }

 private:
  memory Buffer() const {
    return memory(wanted_, DnnlEngine(), ScratchSlot(slot_, wanted_.get_size()));
  }
  memory::desc plain_, wanted_;
  int slot_ = 0;
  bool same_ = true;
  dnnl::reorder to_wanted_, to_plain_;
};

// oneDNN's nCw / nChw / nCdhw layout in channel blocks of `block` (16 or 8), for data of `rank`
// axes (3 to 5).
Tag BlockedDataTag(size_t rank, int block) {
  if (block == 16) return rank == 3 ? Tag::nCw16c : rank == 4 ? Tag::nChw16c : Tag::nCdhw16c;
  return rank == 3 ? Tag::nCw8c : rank == 4 ? Tag::nChw8c : Tag::nCdhw8c;
}

// The channel block of `wanted` where it is oneDNN's nChw16c or nChw8c (or their 1-D and 3-D
// forms) over whole blocks of `channels`, which a blob can hold (memory/channel_layout.hpp);
// else 1.
int BlockOf(const memory::desc& wanted, int channels) {
  const memory::dims dims = wanted.dims();
  if (dims.size() < 3 || dims.size() > 5) return 1;
  for (int block : {16, 8}) {
    if (channels % block == 0 &&
        wanted == memory::desc(dims, wanted.data_type(), BlockedDataTag(dims.size(), block))) {
      return block;
    }
  }
  return 1;
}

// An activation argument of a primitive, from (or to) a blob held plain or channel-blocked: a
// blob already in the block the primitive wants is read (written) where it is, one call's images
// at an offset; a plain one goes through the reorders of Staged.
struct Activation {
  Staged plain, blocked;
  int block = 1;  // the blocked form's, 1: none

  Activation() = default;
  Activation(const memory::desc& plain_md, const memory::desc& wanted, int channels, int slot,
             bool allow_blocked)
      : plain(plain_md, wanted, slot), block(allow_blocked ? BlockOf(wanted, channels) : 1) {
    if (block > 1) {
      const memory::desc blocked_md(plain_md.dims(), memory::data_type::f32,
                                    BlockedDataTag(plain_md.dims().size(), block));
      blocked = Staged(blocked_md, wanted, slot);
    }
  }
  const Staged& For(int blob_block) const {
    return block > 1 && blob_block == block ? blocked : plain;
  }
};

// Adds a 1x1 convolution's weight gradient in oneDNN's OIhw16i16o layout (16x16 tiles of input
// by output channels, in output-block-major order) to Caffe's plain outputs x inputs: each tile
// adds to 16 whole lines of 16 floats, one row of the plain array at a time. oneDNN's reorder
// (with a sum post-op) writes down a tile's columns instead, and where a plain row is a multiple
// of 4 KiB those 16 rows share one L1 set: 5.0 ms for ResNet-50's 2048x1024 gradient against 0.8
// here, 0.62 against 0.09 for 256x1024, and as fast or faster on other shapes (2 threads).
void AddTiledWeightGradient(const float* tiles, int outputs, int inputs, float* plain) {
  const int out_blocks = outputs / 16, in_blocks = inputs / 16;
#pragma omp parallel for collapse(2) schedule(static)
  for (int ob = 0; ob < out_blocks; ++ob) {
    for (int ib = 0; ib < in_blocks; ++ib) {
      const float* tile = tiles + (static_cast<size_t>(ob) * in_blocks + ib) * 256;
      for (int o = 0; o < 16; ++o) {
        float* row = plain + static_cast<size_t>(ob * 16 + o) * inputs + ib * 16;
        for (int i = 0; i < 16; ++i) row[i] += tile[i * 16 + o];
      }
    }
  }
}

// Whether `desc`, ungrouped weights, is a 1x1 convolution's in whole OIhw16i16o tiles (or its
// 1-D or 3-D form), which AddTiledWeightGradient takes.
bool InWholeOneByOneTiles(const memory::desc& desc) {
  const memory::dims dims = desc.dims();
  if (dims.size() < 3 || dims[0] % 16 != 0 || dims[1] % 16 != 0) return false;
  for (size_t axis = 2; axis < dims.size(); ++axis) {
    if (dims[axis] != 1) return false;
  }
  const Tag tag = dims.size() == 3   ? Tag::OIw16i16o
                  : dims.size() == 4 ? Tag::OIhw16i16o
                                     : Tag::OIdhw16i16o;
  return desc == memory::desc(dims, memory::data_type::f32, tag);
}

// oneDNN's fast kernels work on channels in blocks of 16 (inputs with a handful of channels, as
// the first layer of an image net has, have their own kernel). Other channel counts are padded to
// whole blocks, and then im2col + GEMM wins: on LeNet (1 -> 20 -> 50 channels) oneDNN took 1.3x
// Caffe's time, while on CIFAR-10 quick (3 -> 32 -> 32 -> 64) it took 0.55x and on CaffeNet 0.78x
// (caffe time, one thread, docs/PERFORMANCE.md).
bool FasterOnDnnl(int group_inputs, int group_outputs) {
  return group_outputs % 16 == 0 && (group_inputs % 16 == 0 || group_inputs <= 4);
}

}  // namespace

// A downsampling 1x1 convolution (stride > 1, no padding) on a blocked input reads every
// stride-th position; they are gathered into a blocked array of the output's size, which oneDNN
// takes as a 1x1 convolution of stride 1 (as the strided view does for a plain input), and their
// gradient is scattered back.
struct Sampling {
  int blocks = 0, block = 1;
  int in_h = 0, in_w = 0, out_h = 0, out_w = 0, stride_h = 1, stride_w = 1;

  // `images` blocked images of the input -> their sampled positions, blocked (kGather), or back
  // into images whose other positions are zeros already.
  template <bool kGather>
  void Copy(const float* from, int images, float* to) const {
#pragma omp parallel for collapse(2) schedule(static)
    for (int plane = 0; plane < images * blocks; ++plane) {
      for (int oh = 0; oh < out_h; ++oh) {
        const size_t input_row = (static_cast<size_t>(plane) * in_h + oh * stride_h) * in_w;
        const size_t sampled_row = (static_cast<size_t>(plane) * out_h + oh) * out_w;
        for (int ow = 0; ow < out_w; ++ow) {
          const size_t input = (input_row + ow * stride_w) * block;
          const size_t sampled = (sampled_row + ow) * block;
          std::memcpy(to + (kGather ? sampled : input), from + (kGather ? input : sampled),
                      block * sizeof(float));
        }
      }
    }
  }
  size_t SampledFloats(int images) const {
    return static_cast<size_t>(images) * blocks * out_h * out_w * block;
  }
};

struct DnnlConvolutionLayer::Primitives {
  memory::desc src_md, weights_md, bias_md, dst_md;  // Caffe's plain layouts, of one call
  int images = 1;                                    // images per call (a divisor of the batch)
  size_t src_image = 0, dst_image = 0;               // floats per image in the blobs
  memory::dims strides, dilates, pad_left, pad_right;
  bool bias = false;
  bool partial_src = false;  // src_md leaves out input that no window reads
  dnnl::convolution_forward::primitive_desc forward_pd;
  dnnl::convolution_backward_data::primitive_desc data_pd;
  dnnl::convolution_backward_weights::primitive_desc weights_pd;
  dnnl::convolution_forward forward;
  Activation src, dst;
  Staged weights;
  bool blocked = false;  // activations may stay channel-blocked in the blobs
  bool sampled = false;  // a downsampling 1x1 convolution shown only the positions it reads
  Sampling sampling;     // their gathering from a blocked input (blocked && sampled)
  int channels = 0, outputs = 0;
  // With the layers after it folded in (ForwardFolded): the forward with a bias whatever the
  // layer's bias_term and, for a ReLU, an eltwise post-op; made on its first use (the group, and
  // so the ReLU and its slope, are fixed at the net's setup).
  dnnl::convolution_forward::primitive_desc folded_pd;
  dnnl::convolution_forward folded;
  enum class Folded { kNotMade, kMade, kUnavailable } folded_state = Folded::kNotMade;
  // Backward, made on its first use (nets in the TEST phase never need it).
  bool backward_ready = false;
  dnnl::convolution_backward_data backward_data;
  Activation data_diff_dst, data_diff_src;
  Staged data_weights;
  dnnl::convolution_backward_weights backward_weights;
  Activation weights_src, weights_diff_dst;
  Staged weights_diff_weights;
  bool tiled_weight_diff = false;  // added by AddTiledWeightGradient, not by the reorder
  std::vector<float> bias_diff;    // one call's bias gradient, before it accumulates

  // The arithmetic's types: bf16 rounds the factors (activations, weights, the top's gradient);
  // what the primitives write (outputs, gradients) stays fp32 either way.
  memory::data_type forward_type = memory::data_type::f32;
  memory::data_type backward_type = memory::data_type::f32;
  // The fp32 primitives' algorithm: direct, or Winograd's F(4x4, 3x3) where the caller asked for
  // it and oneDNN has it for the geometry (3x3, stride 1, ungrouped, AVX-512).
  dnnl::algorithm fp32_algorithm = dnnl::algorithm::convolution_direct;

  float* SampledBuffer() const {
    return ScratchSlot(kSampled, sampling.SampledFloats(images) * sizeof(float));
  }
  // One call's images of a blocked input, only the positions a sampled convolution reads.
  const float* Gathered(const float* images_data) const {
    float* gathered = SampledBuffer();
    sampling.Copy</*kGather=*/true>(images_data, images, gathered);
    return gathered;
  }

  static memory::desc Any(const memory::desc& plain,
                          memory::data_type type = memory::data_type::f32) {
    return memory::desc(plain.dims(), type, Tag::any);
  }

  dnnl::algorithm AlgorithmFor(memory::data_type type) const {
    return type == memory::data_type::f32 ? fp32_algorithm : dnnl::algorithm::convolution_direct;
  }

  dnnl::convolution_forward::primitive_desc ForwardDesc(memory::data_type type) const {
    const auto kind = dnnl::prop_kind::forward_training;
    const auto algorithm = AlgorithmFor(type);
    auto desc = bias ? dnnl::convolution_forward::desc(kind, algorithm, Any(src_md, type),
                                                       Any(weights_md, type), bias_md, Any(dst_md),
                                                       strides, dilates, pad_left, pad_right)
                     : dnnl::convolution_forward::desc(kind, algorithm, Any(src_md, type),
                                                       Any(weights_md, type), Any(dst_md), strides,
                                                       dilates, pad_left, pad_right);
    return dnnl::convolution_forward::primitive_desc(desc, UserScratchpad(), DnnlEngine());
  }

  // The forward with a bias and, where `relu`, the ReLU of negative slope `slope` after it, in the
  // layouts the plain forward chose (so the staging serves both); the plain forward's algorithm
  // first, then direct. False where oneDNN has neither. (forward_training, as the plain one:
  // oneDNN 2.6 has no Winograd forward_inference for most geometries, and the prop kind changes
  // nothing else here.)
  bool MakeFolded(bool relu, float slope) {
    if (folded_state == Folded::kMade) return true;
    if (folded_state == Folded::kUnavailable) return false;
    dnnl::post_ops ops;
    if (relu) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, slope, 0.f);
    dnnl::primitive_attr attr = UserScratchpad();
    attr.set_post_ops(ops);
    for (dnnl::algorithm algorithm :
         {AlgorithmFor(forward_type), dnnl::algorithm::convolution_direct}) {
      try {
        folded_pd = dnnl::convolution_forward::primitive_desc(
            dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, algorithm,
                                            forward_pd.src_desc(), forward_pd.weights_desc(),
                                            bias_md, forward_pd.dst_desc(), strides, dilates,
                                            pad_left, pad_right),
            attr, DnnlEngine());
        folded = dnnl::convolution_forward(folded_pd);
        folded_state = Folded::kMade;
        return true;
      } catch (const dnnl::error&) {
      }
    }
    folded_state = Folded::kUnavailable;
    return false;
  }

  // Winograd first where asked for; direct where oneDNN has no Winograd for the geometry.
  void MakeForward(bool winograd) {
    if (winograd && forward_type == memory::data_type::f32) {
      fp32_algorithm = dnnl::algorithm::convolution_winograd;
      try {
        forward_pd = ForwardDesc(forward_type);
        if (forward_pd.scratchpad_desc().get_size() > kWinogradScratchBytes) {
          fp32_algorithm = dnnl::algorithm::convolution_direct;
        }
      } catch (const dnnl::error&) {
        fp32_algorithm = dnnl::algorithm::convolution_direct;
      }
    }
    if (fp32_algorithm != dnnl::algorithm::convolution_winograd) {
      forward_pd = ForwardDesc(forward_type);
    }
    forward = dnnl::convolution_forward(forward_pd);
    src = Activation(src_md, forward_pd.src_desc(), channels, kSrc, blocked);
    weights = Staged(weights_md, forward_pd.weights_desc(), kWeights);
    dst = Activation(dst_md, forward_pd.dst_desc(), outputs, kDst, blocked);
  }

  void MakeBackward() {
    const auto type = backward_type;
    try {
      MakeBackward(AlgorithmFor(type));
    } catch (const dnnl::error&) {
      if (AlgorithmFor(type) == dnnl::algorithm::convolution_direct) throw;
      MakeBackward(dnnl::algorithm::convolution_direct);  // no Winograd backward for it
    }
  }

  void MakeBackward(dnnl::algorithm algorithm) {
    const auto type = backward_type;
    // The backward primitives take a forward one of their own types as their hint.
    const dnnl::convolution_forward::primitive_desc hint =
        type == forward_type ? forward_pd : ForwardDesc(type);
    data_pd = dnnl::convolution_backward_data::primitive_desc(
        dnnl::convolution_backward_data::desc(algorithm, Any(src_md), Any(weights_md, type),
                                              Any(dst_md, type), strides, dilates, pad_left,
                                              pad_right),
        UserScratchpad(), DnnlEngine(), hint);
    backward_data = dnnl::convolution_backward_data(data_pd);
    data_diff_dst = Activation(dst_md, data_pd.diff_dst_desc(), outputs, kDiffDst, blocked);
    data_weights = Staged(weights_md, data_pd.weights_desc(), kWeights);
    data_diff_src = Activation(src_md, data_pd.diff_src_desc(), channels, kDst, blocked);
    auto weights_desc = bias ? dnnl::convolution_backward_weights::desc(
                                   algorithm, Any(src_md, type), Any(weights_md), bias_md,
                                   Any(dst_md, type), strides, dilates, pad_left, pad_right)
                             : dnnl::convolution_backward_weights::desc(
                                   algorithm, Any(src_md, type), Any(weights_md), Any(dst_md, type),
                                   strides, dilates, pad_left, pad_right);
    weights_pd = dnnl::convolution_backward_weights::primitive_desc(weights_desc, UserScratchpad(),
                                                                    DnnlEngine(), hint);
    backward_weights = dnnl::convolution_backward_weights(weights_pd);
    weights_src = Activation(src_md, weights_pd.src_desc(), channels, kSrc, blocked);
    weights_diff_dst = Activation(dst_md, weights_pd.diff_dst_desc(), outputs, kDiffDst, blocked);
    weights_diff_weights =
        Staged(weights_md, weights_pd.diff_weights_desc(), kDiffWeights, Staged::kAccumulate);
    // Ungrouped weights have the data's rank (outputs, inputs, kernel axes); grouped one more.
    tiled_weight_diff = weights_md.dims().size() == src_md.dims().size() &&
                        InWholeOneByOneTiles(weights_pd.diff_weights_desc());
    bias_diff.resize(bias ? bias_md.get_size() / sizeof(float) : 0);
    backward_ready = true;
  }
};

DnnlConvolutionLayer::DnnlConvolutionLayer(const LayerParameter& param, bool only_where_faster)
    : ConvolutionLayer<float>(param), only_where_faster_(only_where_faster) {}

DnnlConvolutionLayer::~DnnlConvolutionLayer() = default;

void DnnlConvolutionLayer::Reshape(const Blobs<float>& bottom, const Blobs<float>& top) {
  ConvolutionLayer<float>::Reshape(bottom, top);
  if (primitive_bottom_shape_ == bottom[0]->shape()) return;
  primitive_bottom_shape_ = bottom[0]->shape();
  primitives_.reset();
  own_winograd_ = false;
  top_plain_wanted_.clear();
  top_left_blocked_.clear();
  if (channel_axis_ != 1 || num_spatial_axes_ < 1 || num_spatial_axes_ > 3) return;
  const bool bf16 = this->forward_math() == BFLOAT16 || this->backward_math() == BFLOAT16;
  if (only_where_faster_ && !bf16 && !FasterOnDnnl(channels_ / group_, num_output_ / group_)) {
    return;
  }
  // Activations held channel-blocked (memory/channel_layout.hpp) pass between oneDNN's
  // primitives with no reorder. That needs the convolution's whole input (no rows no window
  // reaches; a downsampling 1x1 convolution gathers the positions it reads); where oneDNN wants
  // no blocks for the output, the plain primitives serve.
  const bool blocked_layout = BlockedLayoutFromEnvironment();  // read where the shape changes
  std::unique_ptr<Primitives> p;
  try {
    if (blocked_layout) p = MakePrimitives(*bottom[0], *top[0], /*blocked=*/true);
    if (!p || !p->blocked || p->dst.block == 1) {
      p = MakePrimitives(*bottom[0], *top[0], /*blocked=*/false);
    }
  } catch (const dnnl::error& error) {
    LOG(WARNING) << "layer '" << layer_param_.name() << "': oneDNN has no convolution for this "
                 << "geometry (" << error.what() << "); using Caffe's engine";
    return;
  }
  primitives_ = std::move(p);
  own_winograd_ = TakesOwnWinograd();
}

std::unique_ptr<DnnlConvolutionLayer::Primitives> DnnlConvolutionLayer::MakePrimitives(
    const Blob<float>& bottom, const Blob<float>& top, bool blocked) const {
  auto p = std::make_unique<Primitives>();
  if (this->forward_math() == BFLOAT16) p->forward_type = memory::data_type::bf16;
  if (this->backward_math() == BFLOAT16) p->backward_type = memory::data_type::bf16;
  p->channels = channels_;
  p->outputs = num_output_;
  p->src_image = bottom.count(1);
  p->dst_image = top.count(1);
  p->images = ImagesPerCall(num_, std::max(p->src_image, p->dst_image) * sizeof(float));
  memory::dims src_dims{p->images, channels_}, dst_dims{p->images, num_output_}, weights_dims;
  if (group_ > 1)
    weights_dims = {group_, num_output_ / group_, channels_ / group_};
  else
    weights_dims = {num_output_, channels_};
  // A strided 1x1 convolution without padding (ResNet's downsampling ones) reads every
  // stride-th input: oneDNN is shown only those, through a strided view of the input, as a 1x1
  // convolution of stride 1, so the reorder into its layout gathers a quarter of the input at
  // stride 2 instead of copying all of it. oneDNN takes such a view where output x stride fits
  // the input on every axis (even sizes at stride 2); other sizes get the plain path.
  // On a blocked input, the positions are gathered (Sampling), in 2-D.
  bool subsample = !blocked || num_spatial_axes_ == 2;
  for (int i = 0; i < num_spatial_axes_; ++i) {
    subsample = subsample && kernel_shape_[i] == 1 && pad_[i] == 0 &&
                output_shape_[i] * stride_[i] <= bottom.shape(2 + i);
  }
  bool unreached = false;  // input rows (or columns...) that no window reads
  // The input's plain layout, strided per axis as oneDNN is to read it.
  memory::dims steps(2 + num_spatial_axes_, 1);
  for (int axis = num_spatial_axes_; axis >= 0; --axis) {
    steps[axis] = steps[axis + 1] * bottom.shape(axis + 1);
  }
  for (int i = 0; i < num_spatial_axes_; ++i) {
    const int input = bottom.shape(2 + i), output = output_shape_[i];
    const int extent = dilation_[i] * (kernel_shape_[i] - 1) + 1;
    // Caffe rounds the output size down, so the last window may stop short of the right padding,
    // or even of the input's end (a 3x3 convolution of stride 2 on an even size without
    // padding). oneDNN takes no negative padding: there the input it sees ends where the windows
    // do.
    const int reach = (output - 1) * stride_[i] + extent - pad_[i];  // input the windows cover
    const bool sampled = subsample && stride_[i] > 1;
    src_dims.push_back(sampled ? output : std::min(input, reach));
    if (sampled) steps[2 + i] *= stride_[i];
    p->partial_src = p->partial_src || sampled || reach < input;
    p->sampled = p->sampled || sampled;
    unreached = unreached || reach < input;
    dst_dims.push_back(output);
    weights_dims.push_back(kernel_shape_[i]);
    p->strides.push_back(sampled ? 1 : stride_[i]);
    p->dilates.push_back(dilation_[i] - 1);  // oneDNN counts the gaps between taps
    p->pad_left.push_back(pad_[i]);
    p->pad_right.push_back(std::max(0, reach - input));
  }
  // Rows no window reaches are left out of a plain view; a blocked input keeps them.
  p->blocked = blocked && (p->sampled || !unreached);
  const auto f32 = memory::data_type::f32;
  p->src_md = p->partial_src ? memory::desc(src_dims, f32, steps)
                             : memory::desc(src_dims, f32, PlainDataTag(num_spatial_axes_));
  p->dst_md = memory::desc(dst_dims, f32, PlainDataTag(num_spatial_axes_));
  p->weights_md = memory::desc(weights_dims, f32, PlainWeightsTag(num_spatial_axes_, group_ > 1));
  p->bias = bias_term_;
  p->bias_md = memory::desc({num_output_}, f32, Tag::x);
  // Winograd's F(4x4, 3x3) makes a 4x4 tile of outputs with 36 multiplications per channel pair
  // where the direct form takes 144, in fp32 (docs/PERFORMANCE.md: VGG-16 1.7x, ResNet-50 1.2x).
  // oneDNN's pads channels to blocks of 16 and so loses where they are few (VGG's conv1_1, 3 ->
  // 64: 6.8 against 2.3 ms forward at batch 4); it has no grouped form.
  p->MakeForward(WinogradFromEnvironment() && group_ == 1 && channels_ % 16 == 0 &&
                 num_output_ % 16 == 0);
  if (p->blocked && p->sampled) {
    Sampling& sampling = p->sampling;
    sampling.block = p->src.block;
    sampling.blocks = channels_ / std::max(1, sampling.block);
    sampling.in_h = bottom.shape(2);
    sampling.in_w = bottom.shape(3);
    sampling.out_h = output_shape_[0];
    sampling.out_w = output_shape_[1];
    sampling.stride_h = stride_[0];
    sampling.stride_w = stride_[1];
  }
  return p;
}

bool DnnlConvolutionLayer::runs_winograd() const {
  return primitives_ && (own_winograd_ || primitives_->AlgorithmFor(primitives_->forward_type) ==
                                              dnnl::algorithm::convolution_winograd);
}

void DnnlConvolutionLayer::Forward_cpu(const Blobs<float>& bottom, const Blobs<float>& top) {
  if (!primitives_) return ConvolutionLayer<float>::Forward_cpu(bottom, top);
  if (own_winograd_) {
    return WinogradForward(bottom, top, nullptr, bias_term_ ? blobs_[1]->cpu_data() : nullptr,
                           false, 0.f);
  }
  const Primitives& p = *primitives_;
  RunForward(/*folded=*/false, p.weights.In(blobs_[0]->cpu_data()),
             p.bias ? blobs_[1]->cpu_data() : nullptr, bottom, top);
}

bool DnnlConvolutionLayer::ForwardFolded(const Blobs<float>& bottom, const Blobs<float>& top,
                                         const vector<float>& scales, const float* bias, bool relu,
                                         float slope) {
  if (primitives_ && own_winograd_) {
    WinogradForward(bottom, top, scales.data(), bias, relu, slope);
    return true;
  }
  if (!primitives_ || !primitives_->MakeFolded(relu, slope)) return false;
  const Primitives& p = *primitives_;
  // The weights go into oneDNN's layout (and type) scaled per output, in the reorder they take
  // anyway: in bf16 they are rounded after scaling, as a net with the folding done on its weights
  // would round them. The reorder is made per pass (its scales are the statistics and the Scale's
  // values of this pass); oneDNN's primitive cache hands back the same one while they stay so.
  dnnl::primitive_attr attr;
  const int first_output_axis = group_ > 1 ? 2 : 1;  // goihw: g and o; oihw: o
  attr.set_output_scales((1 << first_output_axis) - 1, scales);
  const memory::desc& wanted = p.folded_pd.weights_desc();
  const dnnl::engine& engine = DnnlEngine();
  memory plain(p.weights_md, engine, const_cast<float*>(blobs_[0]->cpu_data()));
  memory scaled(wanted, engine, ScratchSlot(kWeights, wanted.get_size()));
  dnnl::reorder(dnnl::reorder::primitive_desc(engine, p.weights_md, engine, wanted, attr))
      .execute(DnnlStream(), plain, scaled);
  RunForward(/*folded=*/true, scaled, bias, bottom, top);
  return true;
}

int DnnlConvolutionLayer::TopBlock(size_t i, const Blob<float>& top) {
  top_plain_wanted_.resize(std::max(top_plain_wanted_.size(), i + 1), false);
  top_left_blocked_.resize(top_plain_wanted_.size(), false);
  // The top is left blocked for the layers after this one until one of them turns out to want it
  // plain: then it is plain when this layer runs next (it converted it in place).
  const int block = primitives_->dst.block;
  if (top_left_blocked_[i] && top.cpu_data_block() != block) top_plain_wanted_[i] = true;
  const int top_block = top_plain_wanted_[i] ? 1 : block;
  top_left_blocked_[i] = top_block > 1;
  return top_block;
}

void DnnlConvolutionLayer::RunForward(bool folded, const dnnl::memory& weights, const float* bias,
                                      const Blobs<float>& bottom, const Blobs<float>& top) {
  const Primitives& p = *primitives_;
  const dnnl::convolution_forward& forward = folded ? p.folded : p.forward;
  const dnnl::convolution_forward::primitive_desc& pd = folded ? p.folded_pd : p.forward_pd;
  // Weights, bias and scratchpad serve every call; each call stages its own images.
  std::unordered_map<int, memory> args{{DNNL_ARG_WEIGHTS, weights},
                                       {DNNL_ARG_SCRATCHPAD, Scratchpad(pd.scratchpad_desc())}};
  if (bias != nullptr) {
    args[DNNL_ARG_BIAS] = memory(p.bias_md, DnnlEngine(), const_cast<float*>(bias));
  }
  for (size_t i = 0; i < bottom.size(); ++i) {
    const int src_block = bottom[i]->cpu_data_block() == p.src.block ? p.src.block : 1;
    const Staged& src = p.src.For(src_block);
    const float* bottom_data = bottom[i]->cpu_data_in(src_block);
    const int dst_block = TopBlock(i, *top[i]);
    const Staged& dst_staged = p.dst.For(dst_block);
    float* top_data = top[i]->mutable_cpu_data_in(dst_block, /*keep_values=*/false);
    const bool gather = p.sampled && src_block > 1;
    for (int first = 0; first < num_; first += p.images) {
      float* dst_data = top_data + first * p.dst_image;
      const memory dst = dst_staged.Target(dst_data);
      args[DNNL_ARG_SRC] = src.In(gather ? p.Gathered(bottom_data + first * p.src_image)
                                         : bottom_data + first * p.src_image);
      args[DNNL_ARG_DST] = dst;
      forward.execute(DnnlStream(), args);
      dst_staged.Out(dst, dst_data);
    }
  }
  DnnlStream().wait();
}

void DnnlConvolutionLayer::Backward_cpu(const Blobs<float>& top, const vector<bool>& propagate_down,
                                        const Blobs<float>& bottom) {
  if (!primitives_) return ConvolutionLayer<float>::Backward_cpu(top, propagate_down, bottom);
  if (own_winograd_) return WinogradBackward(top, propagate_down, bottom);
  Primitives& p = *primitives_;
  if (!p.backward_ready) p.MakeBackward();
  const bool weight_grad = param_propagate_down_[0];
  const bool bias_grad = bias_term_ && param_propagate_down_[1];
  bool any_bottom_grad = false;
  for (size_t i = 0; i < bottom.size(); ++i) any_bottom_grad |= propagate_down[i];
  const memory data_weights = any_bottom_grad ? p.data_weights.In(blobs_[0]->cpu_data()) : memory();
  const bool params_grad = weight_grad || bias_grad;
  for (size_t i = 0; i < top.size(); ++i) {
    // Blobs held in the blocks the primitives want are read and written where they are; the
    // bottom's gradient is blocked where its data is (its producer handed that on blocked).
    int dy_block = top[i]->cpu_diff_block();
    if (params_grad && dy_block != p.weights_diff_dst.block) dy_block = 1;
    if (propagate_down[i] && dy_block != p.data_diff_dst.block) dy_block = 1;
    const int src_block =
        params_grad && bottom[i]->cpu_data_block() == p.weights_src.block ? p.weights_src.block : 1;
    const int dx_block = propagate_down[i] && bottom[i]->cpu_data_block() == p.data_diff_src.block
                             ? p.data_diff_src.block
                             : 1;
    const Staged& weights_diff_dst_staged = p.weights_diff_dst.For(dy_block);
    const Staged& data_diff_dst_staged = p.data_diff_dst.For(dy_block);
    const Staged& weights_src_staged = p.weights_src.For(src_block);
    const Staged& data_diff_src_staged = p.data_diff_src.For(dx_block);
    const float* top_diff = top[i]->cpu_diff_in(dy_block);
    const float* bottom_data = params_grad ? bottom[i]->cpu_data_in(src_block) : nullptr;
    float* bottom_diff = propagate_down[i]
                             ? bottom[i]->mutable_cpu_diff_in(dx_block, /*keep_values=*/false)
                             : nullptr;
    // Input no window reaches has no gradient; oneDNN writes only the rest.
    if (bottom_diff && p.partial_src) caffe_set(bottom[i]->count(), 0.f, bottom_diff);
    for (int first = 0; first < num_; first += p.images) {
      const float* dy = top_diff + first * p.dst_image;
      memory weights_diff_dst;  // the top diff as backward-weights wants it, once made
      if (params_grad) {
        weights_diff_dst = weights_diff_dst_staged.In(dy);
        // oneDNN writes the gradients; Caffe's accumulate (iter_size, shared weights, several
        // bottoms, several calls), so they are computed apart and added. The weights' are
        // staged (accumulating), so Target's argument is not written.
        const memory diff_weights = p.weights_diff_weights.Target(nullptr);
        std::unordered_map<int, memory> args{
            {DNNL_ARG_SRC, weights_src_staged.In(p.sampled && src_block > 1
                                                     ? p.Gathered(bottom_data + first * p.src_image)
                                                     : bottom_data + first * p.src_image)},
            {DNNL_ARG_DIFF_DST, weights_diff_dst},
            {DNNL_ARG_DIFF_WEIGHTS, diff_weights},
            {DNNL_ARG_SCRATCHPAD, Scratchpad(p.weights_pd.scratchpad_desc())}};
        if (p.bias) args[DNNL_ARG_DIFF_BIAS] = memory(p.bias_md, DnnlEngine(), p.bias_diff.data());
        p.backward_weights.execute(DnnlStream(), args);
        DnnlStream().wait();
        if (weight_grad && p.tiled_weight_diff) {
          AddTiledWeightGradient(static_cast<const float*>(diff_weights.get_data_handle()),
                                 num_output_, channels_, blobs_[0]->mutable_cpu_diff());
        } else if (weight_grad) {
          p.weights_diff_weights.Out(diff_weights, blobs_[0]->mutable_cpu_diff());
          DnnlStream().wait();
        }
        if (bias_grad) {
          caffe_axpy<float>(blobs_[1]->count(), 1.f, p.bias_diff.data(),
                            blobs_[1]->mutable_cpu_diff());
        }
      }
      if (propagate_down[i]) {
        float* dx = bottom_diff + first * p.src_image;
        // A blocked gradient of sampled positions goes through kSampled, then to its places.
        const bool scatter = p.sampled && dx_block > 1;
        float* dx_target = scatter ? p.SampledBuffer() : dx;
        const memory diff_src = data_diff_src_staged.Target(dx_target);
        // Both backward passes usually want the same layout: reorder the top diff once.
        const bool reuse =
            weights_diff_dst && data_diff_dst_staged.wanted() == weights_diff_dst_staged.wanted();
        p.backward_data.execute(
            DnnlStream(),
            {{DNNL_ARG_DIFF_DST, reuse ? weights_diff_dst : data_diff_dst_staged.In(dy)},
             {DNNL_ARG_WEIGHTS, data_weights},
             {DNNL_ARG_DIFF_SRC, diff_src},
             {DNNL_ARG_SCRATCHPAD, Scratchpad(p.data_pd.scratchpad_desc())}});
        data_diff_src_staged.Out(diff_src, dx_target);
        DnnlStream().wait();
        if (scatter) p.sampling.Copy</*kGather=*/false>(dx_target, p.images, dx);
      }
    }
  }
}

// The DNNL engine of Convolution layers, for float nets (layer_engine.hpp chooses; chosen by
// default, the layer falls back to Caffe's engine at setup for the shapes DNNL runs slower).
static LayerEngineRegisterer<float> g_engine_dnnl_convolution(
    "Convolution", LayerEngine::kDnnl,
    {[](const LayerParameter&) { return true; },
     [](const LayerParameter& param, bool by_default) -> shared_ptr<Layer<float>> {
       return std::make_shared<DnnlConvolutionLayer>(param, by_default);
     }});

}  // namespace caffe
