// The ReLU's kernels on the GPU (its element formulas: relu_math.hpp). Only for .cu files.
#ifndef CAFFE_KERNELS_GPU_RELU_CUH_
#define CAFFE_KERNELS_GPU_RELU_CUH_

#ifndef CPU_ONLY

#include "caffe/kernels/relu_math.hpp"
#include "caffe/util/device_alternate.hpp"

namespace caffe {

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

#endif  // CAFFE_KERNELS_GPU_RELU_CUH_
