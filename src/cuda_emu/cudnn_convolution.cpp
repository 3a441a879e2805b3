// The CUDA emulator's cuDNN convolutions: the convolution descriptor, the forward, backward-data,
// backward-filter and backward-bias passes, and the algorithm getters. Each call checks and
// computes as cudnn.cpp's top comment says, with the pieces it shares from cudnn_internal.hpp.
//
// The algorithm getters rank several algorithms, some needing a workspace, some
// non-deterministic, some (for float) in tensor-op math and some not supported for the geometry,
// so the caller's choice among them is exercised. The Find*AlgorithmEx calls return the same
// algorithms ordered by a model of their time that disagrees with that ranking. Every algorithm
// computes the same exact result, except that float operands are rounded to TF32 unless the
// descriptor's math type is CUDNN_FMA_MATH (on A100 and later, the other math types let cuDNN
// use TF32 tensor cores). A pass checks that its workspace is device memory of at least the size
// the getters report, and fills it with NaN before computing, as a GPU's scratch holds garbage.
//
// Legend: N images, C channels of x, K filters (channels of y), G groups, x input, y output,
// w filters (K, C / G, spatial...), dx/dy/dw gradients. Tensors are read into row-major (packed)
// arrays of double, whatever their strides, and written back through the strides.
#include <cudnn.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cudnn_internal.hpp"
#include "cudnn_queue.hpp"
#include "emu_state.hpp"

struct cudnnConvolutionStruct {
  bool set = false;
  std::vector<int> pad, stride, dilation;  // one per spatial axis
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  cudnnDataType_t compute_type = CUDNN_DATA_FLOAT;
  int groups = 1;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};

namespace caffe_emu {
namespace {

// A filter is packed: NCHW is (K, C, spatial...) row-major, NHWC keeps C innermost.
Layout FilterLayout(cudnnFilterDescriptor_t filter) {
  Layout layout{filter->type, filter->dims, std::vector<long>(filter->dims.size())};
  std::vector<int> order(filter->dims.size());  // axes from outermost to innermost
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  if (filter->format == CUDNN_TENSOR_NHWC)
    std::rotate(order.begin() + 1, order.begin() + 2, order.end());
  long stride = 1;
  for (int i = static_cast<int>(order.size()) - 1; i >= 0; --i) {
    layout.strides[order[i]] = stride;
    stride *= filter->dims[order[i]];
  }
  return layout;
}

// A convolution as cuDNN checks it, with every shape in row-major order and 2-D convolutions
// given a leading unit axis, so that the loops always run over three spatial axes.
struct ConvPlan {
  Layout x, w, y;
  int spatial_axes = 0;  // 2 or 3, as given
  int num = 0, x_channels = 0, y_channels = 0, groups = 1;
  int in[3], out[3], kernel[3], pad[3], stride[3], dilation[3];
  bool flip = false;  // CUDNN_CONVOLUTION mirrors the filter; cross-correlation does not
  bool tf32 = false;  // float operands rounded to TF32 (tensor cores)
};

// y's dims for x and w (cudnnGetConvolutionNdForwardOutputDim), after cuDNN's checks of the
// three descriptors.
cudnnStatus_t ForwardOutputDims(const char* call, cudnnConvolutionDescriptor_t conv,
                                cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                                std::vector<int>* dims) {
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "the convolution descriptor", conv && conv->set));
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "x's descriptor", x && x->set));
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "the filter descriptor", w && w->set));
  const int rank = static_cast<int>(x->dims.size());
  if (static_cast<int>(w->dims.size()) != rank) {
    return Reject(kBadParam, call, "x is %s but the filter is %s: not the same number of dims",
                  Dims(x->dims).c_str(), Dims(w->dims).c_str());
  }
  if (static_cast<int>(conv->pad.size()) != rank - 2) {
    return Reject(kBadParam, call, "the convolution has %zu spatial axes but x is %s",
                  conv->pad.size(), Dims(x->dims).c_str());
  }
  if (x->type != w->type) {
    return Reject(kBadParam, call, "x is %s but the filter is %s", TypeName(x->type),
                  TypeName(w->type));
  }
  if (w->dims[1] * conv->groups != x->dims[1]) {
    return Reject(kBadParam, call,
                  "the filter has %d input channels x %d groups = %d, but x has %d channels",
                  w->dims[1], conv->groups, w->dims[1] * conv->groups, x->dims[1]);
  }
  if (w->dims[0] % conv->groups != 0) {
    return Reject(kBadParam, call, "%d filters do not divide into %d groups", w->dims[0],
                  conv->groups);
  }
  *dims = {x->dims[0], w->dims[0]};
  for (int axis = 0; axis < rank - 2; ++axis) {
    const int extent = (w->dims[2 + axis] - 1) * conv->dilation[axis] + 1;
    const int padded = x->dims[2 + axis] + 2 * conv->pad[axis];
    if (extent > padded) {
      return Reject(kBadParam, call,
                    "spatial axis %d: the dilated filter spans %d, more than the padded input's %d",
                    axis, extent, padded);
    }
    dims->push_back(1 + (padded - extent) / conv->stride[axis]);
  }
  return kSuccess;
}

cudnnStatus_t PlanConvolution(const char* call, cudnnTensorDescriptor_t x,
                              cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv,
                              cudnnTensorDescriptor_t y, ConvPlan* plan) {
  std::vector<int> y_dims;
  CAFFE_EMU_RETURN_IF_FAILED(ForwardOutputDims(call, conv, x, w, &y_dims));
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "y's descriptor", y && y->set));
  const int rank = static_cast<int>(x->dims.size());
  if (y->dims.size() != x->dims.size() || y->type != x->type) {
    return Reject(kBadParam, call, "x is %s %s but y is %s %s", TypeName(x->type),
                  Dims(x->dims).c_str(), TypeName(y->type), Dims(y->dims).c_str());
  }
  if (rank != 4 && rank != 5) {
    return Reject(kNotSupported, call, "convolutions are 2-D or 3-D; x is %s",
                  Dims(x->dims).c_str());
  }
  if (conv->compute_type != x->type) {
    return Reject(kNotSupported, call, "%s tensors need compute type %s, not %s", TypeName(x->type),
                  TypeName(x->type), TypeName(conv->compute_type));
  }
  if (y->dims[0] != y_dims[0] || y->dims[1] != y_dims[1]) {
    return Reject(kBadParam, call, "y is %s but x and the filter give %s", Dims(y->dims).c_str(),
                  Dims(y_dims).c_str());
  }
  if (y->dims != y_dims) {  // cuDNN documents NOT_SUPPORTED for spatial sizes
    return Reject(kNotSupported, call, "y is %s but cudnnGetConvolutionNdForwardOutputDim gives %s",
                  Dims(y->dims).c_str(), Dims(y_dims).c_str());
  }
  plan->x = TensorLayout(x);
  plan->w = FilterLayout(w);
  plan->y = TensorLayout(y);
  plan->spatial_axes = rank - 2;
  plan->num = x->dims[0];
  plan->x_channels = x->dims[1];
  plan->y_channels = y->dims[1];
  plan->groups = conv->groups;
  const int lead = 5 - rank;  // unit axes in front of a 2-D convolution's two
  for (int axis = 0; axis < 3; ++axis) {
    const int given = axis - lead;  // the descriptors' spatial axis
    const bool unit = given < 0;
    plan->in[axis] = unit ? 1 : x->dims[2 + given];
    plan->out[axis] = unit ? 1 : y->dims[2 + given];
    plan->kernel[axis] = unit ? 1 : w->dims[2 + given];
    plan->pad[axis] = unit ? 0 : conv->pad[given];
    plan->stride[axis] = unit ? 1 : conv->stride[given];
    plan->dilation[axis] = unit ? 1 : conv->dilation[given];
  }
  plan->flip = conv->mode == CUDNN_CONVOLUTION;
  plan->tf32 = x->type == CUDNN_DATA_FLOAT && conv->math != CUDNN_FMA_MATH;
  return kSuccess;
}

// Calls tap(x_index, w_index, y_index) for every product x[x_index] * w[w_index] that adds to
// y[y_index] (row-major indices). Forward and both backward passes are sums over these taps.
template <typename Tap>
void ForEachTap(const ConvPlan& p, Tap tap) {
  const int x_group = p.x_channels / p.groups, y_group = p.y_channels / p.groups;
  const long in_size = long{p.in[0]} * p.in[1] * p.in[2];
  const long out_size = long{p.out[0]} * p.out[1] * p.out[2];
  const long kernel_size = long{p.kernel[0]} * p.kernel[1] * p.kernel[2];
  auto filter_index = [&p](int axis, int r) { return p.flip ? p.kernel[axis] - 1 - r : r; };
  for (int n = 0; n < p.num; ++n) {
    for (int k = 0; k < p.y_channels; ++k) {
      const int group = k / y_group;
      for (long o = 0; o < out_size; ++o) {
        const int o0 = static_cast<int>(o / (p.out[1] * p.out[2]));
        const int o1 = static_cast<int>(o / p.out[2] % p.out[1]),
                  o2 = static_cast<int>(o % p.out[2]);
        const long y_index = (long{n} * p.y_channels + k) * out_size + o;
        for (int c = 0; c < x_group; ++c) {
          const long x_plane = (long{n} * p.x_channels + group * x_group + c) * in_size;
          const long w_plane = (long{k} * x_group + c) * kernel_size;
          for (int r0 = 0; r0 < p.kernel[0]; ++r0) {
            const int i0 = o0 * p.stride[0] - p.pad[0] + r0 * p.dilation[0];
            if (i0 < 0 || i0 >= p.in[0]) continue;
            for (int r1 = 0; r1 < p.kernel[1]; ++r1) {
              const int i1 = o1 * p.stride[1] - p.pad[1] + r1 * p.dilation[1];
              if (i1 < 0 || i1 >= p.in[1]) continue;
              for (int r2 = 0; r2 < p.kernel[2]; ++r2) {
                const int i2 = o2 * p.stride[2] - p.pad[2] + r2 * p.dilation[2];
                if (i2 < 0 || i2 >= p.in[2]) continue;
                const long w_offset =
                    (long{filter_index(0, r0)} * p.kernel[1] + filter_index(1, r1)) * p.kernel[2] +
                    filter_index(2, r2);
                tap(x_plane + (long{i0} * p.in[1] + i1) * p.in[2] + i2, w_plane + w_offset,
                    y_index);
              }
            }
          }
        }
      }
    }
  }
}

// Rounds to TF32 (10 mantissa bits, to nearest even), as tensor cores read float operands.
double Tf32(double value) {
  float single = static_cast<float>(value);
  if (!std::isfinite(single)) return single;
  uint32_t bits;
  std::memcpy(&bits, &single, sizeof(bits));
  bits += 0xfffu + ((bits >> 13) & 1u);
  bits &= ~0x1fffu;
  std::memcpy(&single, &bits, sizeof(bits));
  return single;
}

// A convolution operand as the plan's math reads it.
std::vector<double> LoadOperand(const ConvPlan& plan, const Operand& input) {
  std::vector<double> values = Load(input);
  if (plan.tf32) std::transform(values.begin(), values.end(), values.begin(), Tf32);
  return values;
}

enum class Pass { kForward, kBackwardData, kBackwardFilter };

// What an algorithm needs: its workspace, and which geometries it handles.
enum class Kind {
  kNoWorkspace,       // any geometry
  kIndices,           // any; precomputed offsets
  kIm2col,            // any; one image's column buffer per group
  kPartialSums,       // any; a copy of the filter gradient
  kFft,               // 2-D, unit strides and dilation
  kFftTiling,         // as kFft, in 32 x 32 tiles
  kWinograd,          // 2-D 3x3, unit strides and dilation; no workspace
  kWinogradNonfused,  // as kWinograd, with transformed tensors in the workspace
  kNotImplemented,    // listed by cuDNN, never runs
};

// One entry of the emulator's ranking of a pass's algorithms, expected fastest first.
struct Ranked {
  int algo;
  Kind kind;
  bool deterministic;
  bool tensor_op;  // listed for float only, with CUDNN_TENSOR_OP_MATH
};

// Ranked so that the caller's choice matters: tensor-op entries first (a caller keeping float
// in FMA math must skip them), non-deterministic ones and ones with large workspaces early.
const std::vector<Ranked>& Ranking(Pass pass) {
  static const std::vector<Ranked> forward = {
      {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, Kind::kIndices, true, true},
      {CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, Kind::kWinogradNonfused, true, true},
      {CUDNN_CONVOLUTION_FWD_ALGO_FFT, Kind::kFft, true, false},
      {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, Kind::kIndices, true, false},
      {CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, Kind::kWinogradNonfused, true, false},
      {CUDNN_CONVOLUTION_FWD_ALGO_GEMM, Kind::kIm2col, true, false},
      {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, Kind::kNoWorkspace, true, false},
      {CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING, Kind::kFftTiling, true, false},
      {CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, Kind::kWinograd, true, false},
      {CUDNN_CONVOLUTION_FWD_ALGO_DIRECT, Kind::kNotImplemented, true, false},
  };
  static const std::vector<Ranked> backward_data = {
      {CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, Kind::kIndices, true, true},
      {CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, Kind::kNoWorkspace, false, false},
      {CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING, Kind::kFftTiling, true, false},
      {CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, Kind::kIndices, true, false},
      {CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED, Kind::kWinogradNonfused, true, false},
      {CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT, Kind::kFft, true, false},
      {CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD, Kind::kWinograd, true, false},
  };
  static const std::vector<Ranked> backward_filter = {
      {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, Kind::kIndices, true, true},
      {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, Kind::kNoWorkspace, false, false},
      {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, Kind::kPartialSums, false, false},
      {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT, Kind::kFft, true, false},
      {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, Kind::kIndices, true, false},
      {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED, Kind::kWinogradNonfused, true, false},
      {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING, Kind::kFftTiling, true, false},
      {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD, Kind::kNotImplemented, true, false},
  };
  return pass == Pass::kForward        ? forward
         : pass == Pass::kBackwardData ? backward_data
                                       : backward_filter;
}

// The ranking's entry for `algo`, or null where `algo` is no algorithm of the pass.
const Ranked* FindAlgorithm(Pass pass, int algo) {
  for (const Ranked& entry : Ranking(pass)) {
    if (entry.algo == algo) return &entry;
  }
  return nullptr;
}

// Why `kind` cannot run `plan`, or null where it can.
const char* Unsupported(Kind kind, const ConvPlan& p) {
  const bool unit = p.spatial_axes == 2 && p.stride[1] == 1 && p.stride[2] == 1 &&
                    p.dilation[1] == 1 && p.dilation[2] == 1;
  switch (kind) {
    case Kind::kFft:
    case Kind::kFftTiling:
      return unit ? nullptr : "needs a 2-D convolution with unit strides and dilation";
    case Kind::kWinograd:
    case Kind::kWinogradNonfused:
      return unit && p.kernel[1] == 3 && p.kernel[2] == 3
                 ? nullptr
                 : "needs a 2-D 3x3 convolution with unit strides and dilation";
    case Kind::kNotImplemented: return "is not implemented";
    default: return nullptr;
  }
}

size_t NextPowerOfTwo(long value) {
  size_t power = 1;
  while (power < static_cast<size_t>(value)) power *= 2;
  return power;
}

// The workspace `kind` needs for `plan`, in bytes: a model of what such an algorithm stores.
size_t WorkspaceBytes(Kind kind, const ConvPlan& p) {
  const size_t element = p.x.element_size();
  const size_t x_group = p.x_channels / p.groups;
  const size_t kernel = size_t(p.kernel[0]) * p.kernel[1] * p.kernel[2];
  const size_t out = size_t(p.out[0]) * p.out[1] * p.out[2];
  // Transformed images, filters and outputs.
  const size_t planes =
      size_t(p.num) * p.x_channels + p.y_channels * x_group + size_t(p.num) * p.y_channels;
  switch (kind) {
    case Kind::kIndices: return sizeof(int) * x_group * kernel;
    case Kind::kIm2col: return element * x_group * kernel * out;
    case Kind::kPartialSums: return element * p.y_channels * x_group * kernel;
    case Kind::kFft:  // complex planes of the padded input, rounded up to powers of two
      return 2 * element * planes * NextPowerOfTwo(p.in[1] + 2 * p.pad[1]) *
             NextPowerOfTwo(p.in[2] + 2 * p.pad[2]);
    case Kind::kFftTiling: return 2 * element * planes * 32 * 32;
    case Kind::kWinogradNonfused:  // 4x4 transforms of 2x2 output tiles
      return 16 * element * planes * ((p.out[1] + 1) / 2) * ((p.out[2] + 1) / 2);
    default: return 0;
  }
}

// The emulator's model of how long `entry` takes on `plan`, in milliseconds: a nanosecond per
// multiply-add at cost 1, each kind at its own cost and tensor-op entries four times faster.
// The costs order the algorithms unlike the getters' ranking (Winograd and the FFTs fastest
// where they apply), so that choosing by time and trusting the getters pick differently.
float ModelledMilliseconds(const Ranked& entry, const ConvPlan& p) {
  double cost = 1;
  switch (entry.kind) {
    case Kind::kWinograd: cost = 0.5; break;
    case Kind::kWinogradNonfused: cost = 0.6; break;
    case Kind::kFftTiling: cost = 0.7; break;
    case Kind::kFft: cost = 0.8; break;
    case Kind::kIndices: cost = 1.0; break;
    case Kind::kPartialSums: cost = 1.1; break;
    case Kind::kIm2col: cost = 1.2; break;
    case Kind::kNoWorkspace: cost = 1.4; break;
    case Kind::kNotImplemented: cost = 0; break;
  }
  if (entry.tensor_op) cost /= 4;
  const double taps = double(p.num) * p.y_channels * (p.x_channels / p.groups) * p.out[0] *
                      p.out[1] * p.out[2] * p.kernel[0] * p.kernel[1] * p.kernel[2];
  return static_cast<float>(taps * cost * 1e-6);
}

// The ranking's entries for `plan` with `conv`'s math, as perf entries: tensor-op entries for
// float data only, the other entries in the descriptor's math when it asks for FMA, else in
// default math; each runnable one with its workspace (and, when `timed`, its modelled time), the
// others with status NOT_SUPPORTED.
template <typename Perf>
std::vector<Perf> Candidates(Pass pass, const ConvPlan& plan, cudnnConvolutionDescriptor_t conv,
                             bool timed) {
  const bool float_data = plan.x.type == CUDNN_DATA_FLOAT;
  const cudnnMathType_t plain_math =
      conv->math == CUDNN_FMA_MATH ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
  std::vector<Perf> candidates;
  for (const Ranked& entry : Ranking(pass)) {
    if (entry.tensor_op && !float_data) continue;
    Perf perf{};
    perf.algo = static_cast<decltype(perf.algo)>(entry.algo);
    const bool runs = Unsupported(entry.kind, plan) == nullptr;
    perf.status = runs ? kSuccess : kNotSupported;
    perf.time = timed && runs ? ModelledMilliseconds(entry, plan) : -1;  // heuristics do not time
    perf.memory = runs ? WorkspaceBytes(entry.kind, plan) : 0;
    perf.determinism = entry.deterministic ? CUDNN_DETERMINISTIC : CUDNN_NON_DETERMINISTIC;
    perf.mathType = entry.tensor_op ? CUDNN_TENSOR_OP_MATH : plain_math;
    candidates.push_back(perf);
  }
  return candidates;
}

// The first `requested` of `perfs` after a stable partition that puts the successful ones
// first, into `results`.
template <typename Perf>
void ReturnPerfs(std::vector<Perf> perfs, int requested, int* returned, Perf* results) {
  std::stable_partition(perfs.begin(), perfs.end(),
                        [](const Perf& perf) { return perf.status == kSuccess; });
  *returned = std::min(requested, static_cast<int>(perfs.size()));
  std::copy(perfs.begin(), perfs.begin() + *returned, results);
}

// The checks an algorithm query (a _v7 getter or a Find call) makes of its handle, result
// arguments and descriptors, and the convolution they describe, in `plan`.
cudnnStatus_t PlanQuery(const char* call, cudnnHandle_t handle, cudnnTensorDescriptor_t x,
                        cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv,
                        cudnnTensorDescriptor_t y, int requested, const int* returned,
                        const void* results, ConvPlan* plan) {
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  if (returned == nullptr || results == nullptr || requested <= 0) {
    return Reject(kBadParam, call, "needs requestedAlgoCount > 0 (got %d) and result pointers",
                  requested);
  }
  return PlanConvolution(call, x, w, conv, y, plan);
}

// The perf list a _v7 getter returns: the candidates in the ranking's order, the unsupported ones
// moved to the end.
template <typename Perf>
cudnnStatus_t ListAlgorithms(const char* call, Pass pass, cudnnHandle_t handle,
                             cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                             cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y,
                             int requested, int* returned, Perf* results) {
  ConvPlan plan;
  CAFFE_EMU_RETURN_IF_FAILED(
      PlanQuery(call, handle, x, w, conv, y, requested, returned, results, &plan));
  ReturnPerfs(Candidates<Perf>(pass, plan, conv, /*timed=*/false), requested, returned, results);
  return kSuccess;
}

// The workspace (bytes) that `algo` of `pass` needs for `plan`; fails where `algo` is no algorithm
// of the pass, or cannot run the plan.
cudnnStatus_t AlgorithmWorkspace(const char* call, Pass pass, int algo, const ConvPlan& plan,
                                 size_t* bytes) {
  const Ranked* entry = FindAlgorithm(pass, algo);
  if (entry == nullptr) return Reject(kBadParam, call, "%d is not an algorithm of this pass", algo);
  if (const char* why = Unsupported(entry->kind, plan)) {
    return Reject(kNotSupported, call, "algorithm %d %s", algo, why);
  }
  *bytes = WorkspaceBytes(entry->kind, plan);
  return kSuccess;
}

cudnnStatus_t WorkspaceSize(const char* call, Pass pass, cudnnHandle_t handle,
                            cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                            cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, int algo,
                            size_t* bytes) {
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  if (bytes == nullptr) return Reject(kBadParam, call, "sizeInBytes is null");
  ConvPlan plan;
  CAFFE_EMU_RETURN_IF_FAILED(PlanConvolution(call, x, w, conv, y, &plan));
  return AlgorithmWorkspace(call, pass, algo, plan, bytes);
}

// A pass's algorithm runs its plan, and its workspace is device memory of the size the getters
// report; `needed` gets that size.
cudnnStatus_t CheckAlgorithm(const char* call, Pass pass, int algo, const ConvPlan& plan,
                             void* workspace, size_t workspace_bytes, size_t* needed) {
  CAFFE_EMU_RETURN_IF_FAILED(AlgorithmWorkspace(call, pass, algo, plan, needed));
  if (*needed == 0) return kSuccess;
  if (workspace == nullptr || workspace_bytes < *needed) {
    return Reject(kBadParam, call, "algorithm %d needs a workspace of %zu bytes, got %zu at %p",
                  algo, *needed, workspace_bytes, workspace);
  }
  return UsableOnDevice(call, workspace, *needed, "the workspace") ? kSuccess : kBadParam;
}

// The workspace holds garbage on a GPU; here NaN, so that no result can depend on it.
void Scribble(void* workspace, size_t bytes) {
  if (bytes > 0) std::memset(workspace, 0xff, bytes);
}

// How many algorithms a pass has (the *AlgorithmMaxCount calls).
cudnnStatus_t AlgorithmCount(const char* call, Pass pass, cudnnHandle_t handle, int* count) {
  if (handle == nullptr || count == nullptr) return Reject(kBadParam, call, "null argument");
  *count = static_cast<int>(Ranking(pass).size());
  return kSuccess;
}

// One pass over a convolution's x, w and y (`data`, named `names` as the call names them): the
// tensor the pass writes (y forward, x backward data, w backward filter) gets, at each tap, the
// product of the other two, then alpha and beta; first the checks of its descriptors, algorithm
// and operands.
cudnnStatus_t RunConvolutionPass(const char* call, Pass pass, cudnnHandle_t handle, int algo,
                                 cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                                 cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y,
                                 void* workspace, size_t workspace_bytes, const void* alpha,
                                 const void* beta, const std::array<const char*, 3>& names,
                                 const std::array<const void*, 3>& data) {
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  ConvPlan plan;
  CAFFE_EMU_RETURN_IF_FAILED(PlanConvolution(call, x, w, conv, y, &plan));
  size_t needed = 0;
  CAFFE_EMU_RETURN_IF_FAILED(
      CheckAlgorithm(call, pass, algo, plan, workspace, workspace_bytes, &needed));
  const int out = pass == Pass::kForward ? 2 : pass == Pass::kBackwardData ? 0 : 1;
  const int a = out == 0 ? 1 : 0, b = out == 2 ? 1 : 2;  // the inputs, in x, w, y order
  const std::array<const Layout*, 3> layouts = {&plan.x, &plan.w, &plan.y};
  const Operand in_a{names[a], layouts[a], data[a]}, in_b{names[b], layouts[b], data[b]};
  const Operand output{names[out], layouts[out], data[out]};
  Scaling scaling;
  CAFFE_EMU_RETURN_IF_FAILED(CheckCall(call, alpha, beta, output, {in_a, in_b}, &scaling));
  CAFFE_EMU_CUDNN_COMPUTE;
  Scribble(workspace, needed);
  const std::vector<double> as = LoadOperand(plan, in_a), bs = LoadOperand(plan, in_b);
  std::vector<double> result(layouts[out]->count(), 0.0);
  ForEachTap(plan, [&](long xi, long wi, long yi) {
    const long at[3] = {xi, wi, yi};
    result[at[out]] += as[at[a]] * bs[at[b]];
  });
  Store(output, result, scaling);
  return kSuccess;
}

// A Find*AlgorithmEx call: "runs" every candidate whose workspace fits the one given (the others
// get ALLOC_FAILED), returns them fastest first by the emulator's time model, and leaves in the
// output (`names`/`data` as RunConvolutionPass takes them) what the fastest computes, with alpha 1
// and beta 0, as cuDNN's timing runs overwrite it.
template <typename Perf>
cudnnStatus_t FindAlgorithms(const char* call, Pass pass, cudnnHandle_t handle,
                             cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                             cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y,
                             const std::array<const char*, 3>& names,
                             const std::array<const void*, 3>& data, int requested,
                             int* returned, Perf* results, void* workspace,
                             size_t workspace_bytes) {
  ConvPlan plan;
  CAFFE_EMU_RETURN_IF_FAILED(
      PlanQuery(call, handle, x, w, conv, y, requested, returned, results, &plan));
  if (workspace_bytes > 0 && !UsableOnDevice(call, workspace, workspace_bytes, "the workspace")) {
    return kBadParam;
  }
  Drain(handle->stream);  // a Find call runs at once, after the work queued before it
  std::vector<Perf> perfs = Candidates<Perf>(pass, plan, conv, /*timed=*/true);
  for (Perf& perf : perfs) {
    if (perf.status == kSuccess && perf.memory > workspace_bytes) {
      perf.status = CUDNN_STATUS_ALLOC_FAILED;
      perf.memory = 0;
      perf.time = -1;
    }
  }
  std::stable_sort(perfs.begin(), perfs.end(), [](const Perf& a, const Perf& b) {
    if ((a.status == kSuccess) != (b.status == kSuccess)) return a.status == kSuccess;
    return a.status == kSuccess && a.time < b.time;
  });
  if (perfs.empty() || perfs.front().status != kSuccess) {
    return Reject(kNotSupported, call, "no algorithm runs within a %zu-byte workspace",
                  workspace_bytes);
  }
  static const float float_one = 1, float_zero = 0;
  static const double double_one = 1, double_zero = 0;
  const bool float_data = plan.x.type == CUDNN_DATA_FLOAT;
  CAFFE_EMU_RETURN_IF_FAILED(RunConvolutionPass(
      call, pass, handle, perfs.front().algo, x, w, conv, y, workspace, workspace_bytes,
      float_data ? static_cast<const void*>(&float_one) : &double_one,
      float_data ? static_cast<const void*>(&float_zero) : &double_zero, names, data));
  ReturnPerfs(perfs, requested, returned, results);
  return kSuccess;
}

}  // namespace
}  // namespace caffe_emu

using namespace caffe_emu;  // NOLINT: the C API below only forwards to it

// ---- Descriptor ----

cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* convDesc) {
  return Create("cudnnCreateConvolutionDescriptor", convDesc);
}
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t convDesc) {
  delete convDesc;
  return kSuccess;
}

cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t convDesc,
                                              int arrayLength, const int padA[],
                                              const int filterStrideA[], const int dilationA[],
                                              cudnnConvolutionMode_t mode,
                                              cudnnDataType_t computeType) {
  const char* call = "cudnnSetConvolutionNdDescriptor";
  if (convDesc == nullptr) return Reject(kBadParam, call, "the descriptor is null");
  if (arrayLength < 1) return Reject(kBadParam, call, "arrayLength is %d", arrayLength);
  if (arrayLength > CUDNN_DIM_MAX - 2) {
    return Reject(kNotSupported, call, "arrayLength is %d; must be <= %d", arrayLength,
                  CUDNN_DIM_MAX - 2);
  }
  CAFFE_EMU_RETURN_IF_FAILED(CheckPositive(call, "padA", arrayLength, padA, 0));
  CAFFE_EMU_RETURN_IF_FAILED(CheckPositive(call, "filterStrideA", arrayLength, filterStrideA, 1));
  CAFFE_EMU_RETURN_IF_FAILED(CheckPositive(call, "dilationA", arrayLength, dilationA, 1));
  if (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION) {
    return Reject(kBadParam, call, "mode %d is not a cudnnConvolutionMode_t", int(mode));
  }
  CAFFE_EMU_RETURN_IF_FAILED(CheckDataType(call, computeType));
  convDesc->set = true;
  convDesc->pad.assign(padA, padA + arrayLength);
  convDesc->stride.assign(filterStrideA, filterStrideA + arrayLength);
  convDesc->dilation.assign(dilationA, dilationA + arrayLength);
  convDesc->mode = mode;
  convDesc->compute_type = computeType;
  return kSuccess;
}

cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc, int groupCount) {
  const char* call = "cudnnSetConvolutionGroupCount";
  if (convDesc == nullptr) return Reject(kBadParam, call, "the descriptor is null");
  if (groupCount < 1) return Reject(kBadParam, call, "groupCount is %d; must be >= 1", groupCount);
  convDesc->groups = groupCount;
  return kSuccess;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc,
                                          cudnnMathType_t mathType) {
  const char* call = "cudnnSetConvolutionMathType";
  if (convDesc == nullptr) return Reject(kBadParam, call, "the descriptor is null");
  if (mathType < CUDNN_DEFAULT_MATH || mathType > CUDNN_FMA_MATH) {
    return Reject(kBadParam, call, "math type %d is not a cudnnMathType_t", int(mathType));
  }
  convDesc->math = mathType;
  return kSuccess;
}

cudnnStatus_t cudnnGetConvolutionNdForwardOutputDim(const cudnnConvolutionDescriptor_t convDesc,
                                                    const cudnnTensorDescriptor_t inputTensorDesc,
                                                    const cudnnFilterDescriptor_t filterDesc,
                                                    int nbDims, int tensorOuputDimA[]) {
  const char* call = "cudnnGetConvolutionNdForwardOutputDim";
  std::vector<int> dims;
  CAFFE_EMU_RETURN_IF_FAILED(ForwardOutputDims(call, convDesc, inputTensorDesc, filterDesc, &dims));
  if (nbDims != static_cast<int>(dims.size()) || tensorOuputDimA == nullptr) {
    return Reject(kBadParam, call, "nbDims is %d but x has %zu dims", nbDims, dims.size());
  }
  std::copy(dims.begin(), dims.end(), tensorOuputDimA);
  return kSuccess;
}

// ---- Algorithms and passes ----

cudnnStatus_t cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t handle, int* count) {
  return AlgorithmCount("cudnnGetConvolutionForwardAlgorithmMaxCount",
                        Pass::kForward, handle, count);
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
    const cudnnFilterDescriptor_t filterDesc, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t destDesc, const int requestedAlgoCount, int* returnedAlgoCount,
    cudnnConvolutionFwdAlgoPerf_t* perfResults) {
  return ListAlgorithms("cudnnGetConvolutionForwardAlgorithm_v7", Pass::kForward, handle, srcDesc,
                        filterDesc, convDesc, destDesc, requestedAlgoCount, returnedAlgoCount,
                        perfResults);
}

cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnFilterDescriptor_t wDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t yDesc,
    cudnnConvolutionFwdAlgo_t algo, size_t* sizeInBytes) {
  return WorkspaceSize("cudnnGetConvolutionForwardWorkspaceSize", Pass::kForward, handle, xDesc,
                       wDesc, convDesc, yDesc, algo, sizeInBytes);
}

// y = conv(x, w).
cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void* alpha,
                                      const cudnnTensorDescriptor_t xDesc, const void* x,
                                      const cudnnFilterDescriptor_t wDesc, const void* w,
                                      const cudnnConvolutionDescriptor_t convDesc,
                                      cudnnConvolutionFwdAlgo_t algo, void* workSpace,
                                      size_t workSpaceSizeInBytes, const void* beta,
                                      const cudnnTensorDescriptor_t yDesc, void* y) {
  CAFFE_EMU_CUDNN_QUEUED(cudnnConvolutionForward, handle, alpha, xDesc, x, wDesc, w, convDesc, algo,
                         workSpace, workSpaceSizeInBytes, beta, yDesc, y);
  return RunConvolutionPass("cudnnConvolutionForward", Pass::kForward, handle, algo, xDesc, wDesc,
                            convDesc, yDesc, workSpace, workSpaceSizeInBytes, alpha, beta,
                            {"x", "w", "y"}, {x, w, y});
}

cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnnHandle_t handle, int* count) {
  return AlgorithmCount("cudnnGetConvolutionBackwardDataAlgorithmMaxCount",
                        Pass::kBackwardData, handle, count);
}

cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t filterDesc,
    const cudnnTensorDescriptor_t diffDesc, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t gradDesc, const int requestedAlgoCount, int* returnedAlgoCount,
    cudnnConvolutionBwdDataAlgoPerf_t* perfResults) {
  return ListAlgorithms("cudnnGetConvolutionBackwardDataAlgorithm_v7", Pass::kBackwardData, handle,
                        gradDesc, filterDesc, convDesc, diffDesc, requestedAlgoCount,
                        returnedAlgoCount, perfResults);
}

cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc,
    cudnnConvolutionBwdDataAlgo_t algo, size_t* sizeInBytes) {
  return WorkspaceSize("cudnnGetConvolutionBackwardDataWorkspaceSize", Pass::kBackwardData, handle,
                       dxDesc, wDesc, convDesc, dyDesc, algo, sizeInBytes);
}

// dx = the adjoint of conv(., w) applied to dy.
cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void* alpha,
                                           const cudnnFilterDescriptor_t wDesc, const void* w,
                                           const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                           const cudnnConvolutionDescriptor_t convDesc,
                                           cudnnConvolutionBwdDataAlgo_t algo, void* workSpace,
                                           size_t workSpaceSizeInBytes, const void* beta,
                                           const cudnnTensorDescriptor_t dxDesc, void* dx) {
  CAFFE_EMU_CUDNN_QUEUED(cudnnConvolutionBackwardData, handle, alpha, wDesc, w, dyDesc, dy,
                         convDesc, algo, workSpace, workSpaceSizeInBytes, beta, dxDesc, dx);
  return RunConvolutionPass("cudnnConvolutionBackwardData", Pass::kBackwardData, handle, algo,
                            dxDesc, wDesc, convDesc, dyDesc, workSpace, workSpaceSizeInBytes,
                            alpha, beta, {"dx", "w", "dy"}, {dx, w, dy});
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnnHandle_t handle, int* count) {
  return AlgorithmCount("cudnnGetConvolutionBackwardFilterAlgorithmMaxCount",
                        Pass::kBackwardFilter, handle, count);
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
    const cudnnTensorDescriptor_t diffDesc, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnFilterDescriptor_t gradDesc, const int requestedAlgoCount, int* returnedAlgoCount,
    cudnnConvolutionBwdFilterAlgoPerf_t* perfResults) {
  return ListAlgorithms("cudnnGetConvolutionBackwardFilterAlgorithm_v7", Pass::kBackwardFilter,
                        handle, srcDesc, gradDesc, convDesc, diffDesc, requestedAlgoCount,
                        returnedAlgoCount, perfResults);
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t gradDesc,
    cudnnConvolutionBwdFilterAlgo_t algo, size_t* sizeInBytes) {
  return WorkspaceSize("cudnnGetConvolutionBackwardFilterWorkspaceSize", Pass::kBackwardFilter,
                       handle, xDesc, gradDesc, convDesc, dyDesc, algo, sizeInBytes);
}

// dw = the gradient of sum(dy * conv(x, w)) by w.
cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void* alpha,
                                             const cudnnTensorDescriptor_t xDesc, const void* x,
                                             const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                             const cudnnConvolutionDescriptor_t convDesc,
                                             cudnnConvolutionBwdFilterAlgo_t algo, void* workSpace,
                                             size_t workSpaceSizeInBytes, const void* beta,
                                             const cudnnFilterDescriptor_t dwDesc, void* dw) {
  CAFFE_EMU_CUDNN_QUEUED(cudnnConvolutionBackwardFilter, handle, alpha, xDesc, x, dyDesc, dy,
                         convDesc, algo, workSpace, workSpaceSizeInBytes, beta, dwDesc, dw);
  return RunConvolutionPass("cudnnConvolutionBackwardFilter", Pass::kBackwardFilter, handle,
                            algo, xDesc, dwDesc, convDesc, dyDesc, workSpace,
                            workSpaceSizeInBytes, alpha, beta, {"x", "dw", "dy"}, {x, dw, dy});
}

// The Find*AlgorithmEx calls: every algorithm timed (by the emulator's model) on the caller's
// tensors and workspace, fastest first; the output holds what the fastest computed.
cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const void* x,
    const cudnnFilterDescriptor_t wDesc, const void* w, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t yDesc, void* y, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t* perfResults, void* workSpace,
    size_t workSpaceSizeInBytes) {
  return FindAlgorithms("cudnnFindConvolutionForwardAlgorithmEx", Pass::kForward, handle, xDesc,
                        wDesc, convDesc, yDesc, {"x", "w", "y"}, {x, w, y}, requestedAlgoCount,
                        returnedAlgoCount, perfResults, workSpace, workSpaceSizeInBytes);
}

cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const void* w,
    const cudnnTensorDescriptor_t dyDesc, const void* dy,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc, void* dx,
    const int requestedAlgoCount, int* returnedAlgoCount,
    cudnnConvolutionBwdDataAlgoPerf_t* perfResults, void* workSpace,
    size_t workSpaceSizeInBytes) {
  return FindAlgorithms("cudnnFindConvolutionBackwardDataAlgorithmEx", Pass::kBackwardData, handle,
                        dxDesc, wDesc, convDesc, dyDesc, {"dx", "w", "dy"}, {dx, w, dy},
                        requestedAlgoCount, returnedAlgoCount, perfResults, workSpace,
                        workSpaceSizeInBytes);
}

cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const void* x,
    const cudnnTensorDescriptor_t dyDesc, const void* y,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t dwDesc, void* dw,
    const int requestedAlgoCount, int* returnedAlgoCount,
    cudnnConvolutionBwdFilterAlgoPerf_t* perfResults, void* workSpace,
    size_t workSpaceSizeInBytes) {
  return FindAlgorithms("cudnnFindConvolutionBackwardFilterAlgorithmEx", Pass::kBackwardFilter,
                        handle, xDesc, dwDesc, convDesc, dyDesc, {"x", "dw", "dy"}, {x, dw, y},
                        requestedAlgoCount, returnedAlgoCount, perfResults, workSpace,
                        workSpaceSizeInBytes);
}

// db[k] = the sum of dy over images and positions of channel k.
cudnnStatus_t cudnnConvolutionBackwardBias(cudnnHandle_t handle, const void* alpha,
                                           const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                           const void* beta, const cudnnTensorDescriptor_t dbDesc,
                                           void* db) {
  CAFFE_EMU_CUDNN_QUEUED(cudnnConvolutionBackwardBias, handle, alpha, dyDesc, dy, beta, dbDesc, db);
  const char* call = "cudnnConvolutionBackwardBias";
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "dy's descriptor", dyDesc && dyDesc->set));
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "db's descriptor", dbDesc && dbDesc->set));
  const Layout dy_layout = TensorLayout(dyDesc), db_layout = TensorLayout(dbDesc);
  std::vector<int> bias_dims(dy_layout.dims.size(), 1);
  bias_dims[1] = dy_layout.dims[1];
  if (db_layout.type != dy_layout.type || db_layout.dims != bias_dims) {
    return Reject(kBadParam, call, "dy is %s %s, so db must be %s %s, not %s %s",
                  TypeName(dy_layout.type), Dims(dy_layout.dims).c_str(), TypeName(dy_layout.type),
                  Dims(bias_dims).c_str(), TypeName(db_layout.type), Dims(db_layout.dims).c_str());
  }
  const Operand dy_in{"dy", &dy_layout, dy}, db_out{"db", &db_layout, db};
  Scaling scaling;
  CAFFE_EMU_RETURN_IF_FAILED(CheckCall(call, alpha, beta, db_out, {dy_in}, &scaling));
  CAFFE_EMU_CUDNN_COMPUTE;
  const std::vector<double> dys = Load(dy_in);
  const long channels = dy_layout.dims[1], inner = Product(dy_layout.dims, 2);
  std::vector<double> sums(channels, 0.0);
  for (size_t i = 0; i < dys.size(); ++i) sums[i / inner % channels] += dys[i];
  Store(db_out, sums, scaling);
  return kSuccess;
}
