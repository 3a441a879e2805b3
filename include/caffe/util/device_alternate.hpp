// CUDA helpers for GPU builds (not included when CPU_ONLY is defined): error-checking macros that
// name the failing call and the library's own error string, and the kernel launch geometry.
#ifndef CAFFE_UTIL_DEVICE_ALTERNATE_HPP_
#define CAFFE_UTIL_DEVICE_ALTERNATE_HPP_

#ifndef CPU_ONLY

#include <cuda_runtime.h>

#include "caffe/util/error.hpp"

// A failed CUDA runtime call is reported as a caffe::Error (out of memory, no device, busy device
// are things a user causes and can fix), with the call and CUDA's description of the failure.
#define CUDA_CHECK(condition)                                                                  \
  do {                                                                                         \
    cudaError_t caffe_cuda_error_ = (condition);                                               \
    CAFFE_CHECK(caffe_cuda_error_ == cudaSuccess)                                              \
        << "CUDA call failed: " #condition ": " << cudaGetErrorString(caffe_cuda_error_);      \
  } while (0)

#define CUDA_POST_KERNEL_CHECK CUDA_CHECK(cudaPeekAtLastError())

// Grid-stride loop over n elements.
#define CUDA_KERNEL_LOOP(i, n)                                                       \
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)

namespace caffe {
constexpr int CAFFE_CUDA_NUM_THREADS = 512;
inline int CAFFE_GET_BLOCKS(const int n) {
  return (n + CAFFE_CUDA_NUM_THREADS - 1) / CAFFE_CUDA_NUM_THREADS;
}
}  // namespace caffe

#endif  // CPU_ONLY
#endif  // CAFFE_UTIL_DEVICE_ALTERNATE_HPP_
