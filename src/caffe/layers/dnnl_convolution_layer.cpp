#include "caffe/layers/dnnl_convolution_layer.hpp"

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdlib>
#include <unordered_map>
#include <vector>

#include <glog/logging.h>

#include "caffe/util/math_functions.hpp"

namespace caffe {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& Stream() {
  thread_local dnnl::stream stream(Engine());
  return stream;
}

// Staging memory for the blocked copies of one call's arguments, shared by every oneDNN layer on
// the thread: layers run one at a time, so a net needs the largest call's worth, not one copy of
// every activation per layer. Slots: 0 src, 1 weights, 2 dst or diff_src, 3 diff_dst, 4
// diff_weights (the backward passes run one after the other, so they share).
float* ScratchSlot(int slot, size_t bytes) {
  struct Buffer {
    float* data = nullptr;
    size_t bytes = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local std::vector<Buffer> slots(5);
  Buffer& buffer = slots.at(slot);
  if (buffer.bytes < bytes) {
    std::free(buffer.data);
    buffer.bytes = (bytes + 63) / 64 * 64;
    buffer.data = static_cast<float*>(std::aligned_alloc(64, buffer.bytes));
    CHECK(buffer.data) << "out of memory allocating " << buffer.bytes << " bytes of oneDNN staging";
  }
  return buffer.data;
}

Tag PlainDataTag(int spatial_axes) {
  return spatial_axes == 1 ? Tag::ncw : spatial_axes == 2 ? Tag::nchw : Tag::ncdhw;
}

Tag PlainWeightsTag(int spatial_axes, bool grouped) {
  if (grouped) return spatial_axes == 1 ? Tag::goiw : spatial_axes == 2 ? Tag::goihw : Tag::goidhw;
  return spatial_axes == 1 ? Tag::oiw : spatial_axes == 2 ? Tag::oihw : Tag::oidhw;
}

// One argument of a primitive: the blob's plain layout, the layout the primitive wants, and the
// reorders between them (none where they agree, the blob's memory is then used as it is).
class Staged {
 public:
  Staged() = default;
  Staged(const memory::desc& plain, const memory::desc& wanted, int slot)
      : plain_(plain), wanted_(wanted), slot_(slot), same_(plain == wanted) {
    if (!same_) {
      to_wanted_ = dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), plain, Engine(), wanted));
      to_plain_ = dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), wanted, Engine(), plain));
    }
  }
  const memory::desc& wanted() const { return wanted_; }
  /// The blob's values in the wanted layout.
  memory In(const float* data) const {
    memory plain(plain_, Engine(), const_cast<float*>(data));
    if (same_) return plain;
    memory staged = Buffer();
    to_wanted_.execute(Stream(), plain, staged);
    return staged;
  }
  /// Where the primitive writes; Out(data, target) then puts the values into the blob.
  memory Target(float* data) const {
    return same_ ? memory(plain_, Engine(), data) : Buffer();
  }
  void Out(const memory& target, float* data) const {
    if (same_) return;
    memory plain(plain_, Engine(), data), source = target;
    to_plain_.execute(Stream(), source, plain);
  }

 private:
  memory Buffer() const {
    return memory(wanted_, Engine(), ScratchSlot(slot_, wanted_.get_size()));
  }
  memory::desc plain_, wanted_;
  int slot_ = 0;
  bool same_ = true;
  dnnl::reorder to_wanted_, to_plain_;
};

// oneDNN's fast kernels work on channels in blocks of 16 (inputs with a handful of channels, as
// the first layer of an image net has, have their own kernel). Other channel counts are padded to
// whole blocks, and then im2col + GEMM wins: on LeNet (1 -> 20 -> 50 channels) oneDNN took 1.3x
// Caffe's time, while on CIFAR-10 quick (3 -> 32 -> 32 -> 64) it took 0.55x and on CaffeNet 0.78x
// (caffe time, one thread, docs/PERFORMANCE.md).
bool FasterOnDnnl(int group_inputs, int group_outputs) {
  return group_outputs % 16 == 0 && (group_inputs % 16 == 0 || group_inputs <= 4);
}

}  // namespace

struct DnnlConvolutionLayer::Primitives {
  memory::desc src_md, weights_md, bias_md, dst_md;  // Caffe's plain layouts
  memory::dims strides, dilates, pad_left, pad_right;
  bool bias = false;
  dnnl::convolution_forward::primitive_desc forward_pd;
  dnnl::convolution_forward forward;
  Staged src, weights, dst;
  // Backward, made on its first use (nets in the TEST phase never need it).
  bool backward_ready = false;
  dnnl::convolution_backward_data backward_data;
  Staged data_diff_dst, data_weights, data_diff_src;
  dnnl::convolution_backward_weights backward_weights;
  Staged weights_src, weights_diff_dst, weights_diff_weights;
  std::vector<float> weight_diff, bias_diff;  // one call's gradients, before they accumulate

  memory::desc Any(const memory::desc& plain) const {
    return memory::desc(plain.dims(), memory::data_type::f32, Tag::any);
  }

  void MakeForward() {
    const auto kind = dnnl::prop_kind::forward_training;
    const auto algorithm = dnnl::algorithm::convolution_direct;
    auto desc = bias ? dnnl::convolution_forward::desc(kind, algorithm, Any(src_md),
                                                       Any(weights_md), bias_md, Any(dst_md),
                                                       strides, dilates, pad_left, pad_right)
                     : dnnl::convolution_forward::desc(kind, algorithm, Any(src_md),
                                                       Any(weights_md), Any(dst_md), strides,
                                                       dilates, pad_left, pad_right);
    forward_pd = dnnl::convolution_forward::primitive_desc(desc, Engine());
    forward = dnnl::convolution_forward(forward_pd);
    src = Staged(src_md, forward_pd.src_desc(), 0);
    weights = Staged(weights_md, forward_pd.weights_desc(), 1);
    dst = Staged(dst_md, forward_pd.dst_desc(), 2);
  }

  void MakeBackward() {
    const auto algorithm = dnnl::algorithm::convolution_direct;
    dnnl::convolution_backward_data::primitive_desc data_pd(
        dnnl::convolution_backward_data::desc(algorithm, Any(src_md), Any(weights_md),
                                              Any(dst_md), strides, dilates, pad_left, pad_right),
        Engine(), forward_pd);
    backward_data = dnnl::convolution_backward_data(data_pd);
    data_diff_dst = Staged(dst_md, data_pd.diff_dst_desc(), 3);
    data_weights = Staged(weights_md, data_pd.weights_desc(), 1);
    data_diff_src = Staged(src_md, data_pd.diff_src_desc(), 2);
    auto weights_desc =
        bias ? dnnl::convolution_backward_weights::desc(algorithm, Any(src_md), Any(weights_md),
                                                        bias_md, Any(dst_md), strides, dilates,
                                                        pad_left, pad_right)
             : dnnl::convolution_backward_weights::desc(algorithm, Any(src_md), Any(weights_md),
                                                        Any(dst_md), strides, dilates, pad_left,
                                                        pad_right);
    dnnl::convolution_backward_weights::primitive_desc weights_pd(weights_desc, Engine(),
                                                                  forward_pd);
    backward_weights = dnnl::convolution_backward_weights(weights_pd);
    weights_src = Staged(src_md, weights_pd.src_desc(), 0);
    weights_diff_dst = Staged(dst_md, weights_pd.diff_dst_desc(), 3);
    weights_diff_weights = Staged(weights_md, weights_pd.diff_weights_desc(), 4);
    weight_diff.resize(weights_md.get_size() / sizeof(float));
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
  if (channel_axis_ != 1 || num_spatial_axes_ < 1 || num_spatial_axes_ > 3) return;
  if (only_where_faster_ && !FasterOnDnnl(channels_ / group_, num_output_ / group_)) return;
  auto p = std::make_unique<Primitives>();
  memory::dims src_dims{num_, channels_}, dst_dims{num_, num_output_}, weights_dims;
  if (group_ > 1) weights_dims = {group_, num_output_ / group_, channels_ / group_};
  else weights_dims = {num_output_, channels_};
  for (int i = 0; i < num_spatial_axes_; ++i) {
    const int input = bottom[0]->shape(2 + i), output = output_shape_[i];
    const int extent = dilation_[i] * (kernel_shape_[i] - 1) + 1;
    src_dims.push_back(input);
    dst_dims.push_back(output);
    weights_dims.push_back(kernel_shape_[i]);
    p->strides.push_back(stride_[i]);
    p->dilates.push_back(dilation_[i] - 1);  // oneDNN counts the gaps between taps
    p->pad_left.push_back(pad_[i]);
    // Caffe rounds the output size down, so the last window may stop short of the right padding.
    const int pad_right = (output - 1) * stride_[i] + extent - input - pad_[i];
    if (pad_right < 0) return;  // the window skips input on the right: Caffe's engine does this
    p->pad_right.push_back(pad_right);
  }
  const auto f32 = memory::data_type::f32;
  p->src_md = memory::desc(src_dims, f32, PlainDataTag(num_spatial_axes_));
  p->dst_md = memory::desc(dst_dims, f32, PlainDataTag(num_spatial_axes_));
  p->weights_md = memory::desc(weights_dims, f32, PlainWeightsTag(num_spatial_axes_, group_ > 1));
  p->bias = bias_term_;
  p->bias_md = memory::desc({num_output_}, f32, Tag::x);
  try {
    p->MakeForward();
  } catch (const dnnl::error& error) {
    LOG(WARNING) << "layer '" << layer_param_.name() << "': oneDNN has no convolution for this "
                 << "geometry (" << error.what() << "); using Caffe's engine";
    return;
  }
  primitives_ = std::move(p);
}

void DnnlConvolutionLayer::Forward_cpu(const Blobs<float>& bottom, const Blobs<float>& top) {
  if (!primitives_) return ConvolutionLayer<float>::Forward_cpu(bottom, top);
  Primitives& p = *primitives_;
  const memory weights = p.weights.In(blobs_[0]->cpu_data());
  for (size_t i = 0; i < bottom.size(); ++i) {
    const memory src = p.src.In(bottom[i]->cpu_data());
    float* top_data = top[i]->mutable_cpu_data();
    const memory dst = p.dst.Target(top_data);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
    if (p.bias) {
      args[DNNL_ARG_BIAS] =
          memory(p.bias_md, Engine(), const_cast<float*>(blobs_[1]->cpu_data()));
    }
    p.forward.execute(Stream(), args);
    p.dst.Out(dst, top_data);
  }
  Stream().wait();
}

void DnnlConvolutionLayer::Backward_cpu(const Blobs<float>& top,
                                        const vector<bool>& propagate_down,
                                        const Blobs<float>& bottom) {
  if (!primitives_) return ConvolutionLayer<float>::Backward_cpu(top, propagate_down, bottom);
  Primitives& p = *primitives_;
  if (!p.backward_ready) p.MakeBackward();
  const bool weight_grad = param_propagate_down_[0];
  const bool bias_grad = bias_term_ && param_propagate_down_[1];
  for (size_t i = 0; i < top.size(); ++i) {
    const float* top_diff = top[i]->cpu_diff();
    memory weights_diff_dst;  // the top diff as backward-weights wants it, once made
    if (weight_grad || bias_grad) {
      weights_diff_dst = p.weights_diff_dst.In(top_diff);
      // oneDNN writes the gradients; Caffe's accumulate (iter_size, shared weights, several
      // bottoms), so they are computed apart and added.
      const memory diff_weights = p.weights_diff_weights.Target(p.weight_diff.data());
      std::unordered_map<int, memory> args{
          {DNNL_ARG_SRC, p.weights_src.In(bottom[i]->cpu_data())},
          {DNNL_ARG_DIFF_DST, weights_diff_dst},
          {DNNL_ARG_DIFF_WEIGHTS, diff_weights}};
      if (p.bias) args[DNNL_ARG_DIFF_BIAS] = memory(p.bias_md, Engine(), p.bias_diff.data());
      p.backward_weights.execute(Stream(), args);
      p.weights_diff_weights.Out(diff_weights, p.weight_diff.data());
      Stream().wait();
      if (weight_grad) {
        caffe_axpy<float>(blobs_[0]->count(), 1.f, p.weight_diff.data(),
                          blobs_[0]->mutable_cpu_diff());
      }
      if (bias_grad) {
        caffe_axpy<float>(blobs_[1]->count(), 1.f, p.bias_diff.data(),
                          blobs_[1]->mutable_cpu_diff());
      }
    }
    if (propagate_down[i]) {
      float* bottom_diff = bottom[i]->mutable_cpu_diff();
      const memory diff_src = p.data_diff_src.Target(bottom_diff);
      // Both backward passes usually want the same layout: reorder the top diff once.
      const bool reuse = weights_diff_dst && p.data_diff_dst.wanted() == p.weights_diff_dst.wanted();
      p.backward_data.execute(Stream(), {{DNNL_ARG_DIFF_DST,
                                          reuse ? weights_diff_dst : p.data_diff_dst.In(top_diff)},
                                         {DNNL_ARG_WEIGHTS, p.data_weights.In(blobs_[0]->cpu_data())},
                                         {DNNL_ARG_DIFF_SRC, diff_src}});
      p.data_diff_src.Out(diff_src, bottom_diff);
      Stream().wait();
    }
  }
}

}  // namespace caffe
