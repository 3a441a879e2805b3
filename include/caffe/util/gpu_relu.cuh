// The ReLU's element formulas on the GPU, for ReLULayer and for the layers that run an in-place
// ReLU in their own passes (BatchNorm with the Scale and ReLU after it): one definition, so that
// a fused group and the layers apart agree bit for bit. Only for .cu files.
#ifndef CAFFE_UTIL_GPU_RELU_CUH_
#define CAFFE_UTIL_GPU_RELU_CUH_

#ifndef CPU_ONLY

#include "caffe/util/device_alternate.hpp"

namespace caffe {

/// max(x, 0) + negative_slope * min(x, 0), as std::max and std::min give it on the CPU (NaN
/// passes through; products rather than selections, so the signed zeros agree too).
template <typename Dtype>
__device__ __forceinline__ Dtype ReLUOf(Dtype x, Dtype negative_slope) {
  const Dtype positive = x < Dtype(0) ? Dtype(0) : x;
  const Dtype negative = Dtype(0) < x ? Dtype(0) : x;
  return positive + negative_slope * negative;
}

/// The gradient's factor at x: 1 where x > 0, negative_slope elsewhere. Backward in place reads
/// the output for x, which has the input's sign where negative_slope >= 0.
template <typename Dtype>
__device__ __forceinline__ Dtype ReLUGradientFactor(Dtype x, Dtype negative_slope) {
  return Dtype(x > 0) + negative_slope * Dtype(x <= 0);
}

}  // namespace caffe

#endif  // CPU_ONLY

#endif  // CAFFE_UTIL_GPU_RELU_CUH_
