// The ReLU's element formulas and kernels on the GPU, for ReLULayer and for the layers that run
// an in-place ReLU in their own passes (BatchNorm with the Scale and ReLU after it, a sum, a
// convolution): one definition, so that a fused group and the layers apart agree bit for bit.
// Only for .cu files.
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

/// top = ReLU(bottom), one thread per element (top may be bottom).
template <typename Dtype>
__global__ void ReLUForwardKernel(int count, Dtype negative_slope, const Dtype* bottom_data,
                                  Dtype* top_data) {
  CUDA_KERNEL_LOOP(i, count) { top_data[i] = ReLUOf(bottom_data[i], negative_slope); }
}

/// bottom_diff = top_diff times the gradient's factor at bottom_data (in place: the output, and
/// bottom_diff may be top_diff).
template <typename Dtype>
__global__ void ReLUBackwardKernel(int count, Dtype negative_slope, const Dtype* bottom_data,
                                   const Dtype* top_diff, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, count) {
    bottom_diff[i] = top_diff[i] * ReLUGradientFactor(bottom_data[i], negative_slope);
  }
}

}  // namespace caffe

#endif  // CPU_ONLY

#endif  // CAFFE_UTIL_GPU_RELU_CUH_
