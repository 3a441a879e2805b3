// The algorithms of the emulated cuDNN's convolution passes (convolution_algorithms.hpp): the
// ranking, what each kind runs, its workspace and its modelled time.
#include "cudnn/convolution_algorithms.hpp"

#include <cudnn.h>

#include <cstddef>
#include <vector>

#include "cudnn/convolution.hpp"
#include "cudnn/internal.hpp"
#include "emu_state.hpp"

namespace caffe_emu {
namespace {

// The ranking's entry for `algo`, or null where `algo` is no algorithm of the pass.
const Ranked* FindAlgorithm(Pass pass, int algo) {
  for (const Ranked& entry : Ranking(pass)) {
    if (entry.algo == algo) return &entry;
  }
  return nullptr;
}

size_t NextPowerOfTwo(long value) {
  size_t power = 1;
  while (power < static_cast<size_t>(value)) power *= 2;
  return power;
}

}  // namespace

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
    case Kind::kNotImplemented:
      return "is not implemented";
    default:
      return nullptr;
  }
}

size_t WorkspaceBytes(Kind kind, const ConvPlan& p) {
  const size_t element = p.x.element_size();
  const size_t x_group = p.x_channels / p.groups;
  const size_t kernel = size_t(p.kernel[0]) * p.kernel[1] * p.kernel[2];
  const size_t out = size_t(p.out[0]) * p.out[1] * p.out[2];
  // Transformed images, filters and outputs.
  const size_t planes =
      size_t(p.num) * p.x_channels + p.y_channels * x_group + size_t(p.num) * p.y_channels;
  switch (kind) {
    case Kind::kIndices:
      return sizeof(int) * x_group * kernel;
    case Kind::kIm2col:
      return element * x_group * kernel * out;
    case Kind::kPartialSums:
      return element * p.y_channels * x_group * kernel;
    case Kind::kFft:  // complex planes of the padded input, rounded up to powers of two
      return 2 * element * planes * NextPowerOfTwo(p.in[1] + 2 * p.pad[1]) *
             NextPowerOfTwo(p.in[2] + 2 * p.pad[2]);
    case Kind::kFftTiling:
      return 2 * element * planes * 32 * 32;
    case Kind::kWinogradNonfused:  // 4x4 transforms of 2x2 output tiles
      return 16 * element * planes * ((p.out[1] + 1) / 2) * ((p.out[2] + 1) / 2);
    default:
      return 0;
  }
}

float ModelledMilliseconds(const Ranked& entry, const ConvPlan& p) {
  double cost = 1;
  switch (entry.kind) {
    case Kind::kWinograd:
      cost = 0.5;
      break;
    case Kind::kWinogradNonfused:
      cost = 0.6;
      break;
    case Kind::kFftTiling:
      cost = 0.7;
      break;
    case Kind::kFft:
      cost = 0.8;
      break;
    case Kind::kIndices:
      cost = 1.0;
      break;
    case Kind::kPartialSums:
      cost = 1.1;
      break;
    case Kind::kIm2col:
      cost = 1.2;
      break;
    case Kind::kNoWorkspace:
      cost = 1.4;
      break;
    case Kind::kNotImplemented:
      cost = 0;
      break;
  }
  if (entry.tensor_op) cost /= 4;
  const double taps = double(p.num) * p.y_channels * (p.x_channels / p.groups) * p.out[0] *
                      p.out[1] * p.out[2] * p.kernel[0] * p.kernel[1] * p.kernel[2];
  return static_cast<float>(taps * cost * 1e-6);
}

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

}  // namespace caffe_emu
