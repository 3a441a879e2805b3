// CUDA helpers for GPU builds (not included when CPU_ONLY is defined): error-checking macros that
// name the failing call and the library's own error string, and the kernel launch geometry.
#ifndef CAFFE_UTIL_DEVICE_ALTERNATE_HPP_
#define CAFFE_UTIL_DEVICE_ALTERNATE_HPP_

#ifndef CPU_ONLY

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>

#include "caffe/util/error.hpp"

// A failed CUDA runtime call is reported as a caffe::Error (out of memory, no device, busy device
// are things a user causes and can fix), with the call and CUDA's description of the failure.
#define CUDA_CHECK(condition)                                                             \
  do {                                                                                    \
    cudaError_t caffe_cuda_error_ = (condition);                                          \
    CAFFE_CHECK(caffe_cuda_error_ == cudaSuccess)                                         \
        << "CUDA call failed: " #condition ": " << cudaGetErrorString(caffe_cuda_error_); \
  } while (0)

#define CUDA_POST_KERNEL_CHECK CUDA_CHECK(cudaPeekAtLastError())

#define CUBLAS_CHECK(condition)                                                                   \
  do {                                                                                            \
    cublasStatus_t caffe_cublas_status_ = (condition);                                            \
    CAFFE_CHECK(caffe_cublas_status_ == CUBLAS_STATUS_SUCCESS)                                    \
        << "cuBLAS call failed: " #condition ": " << cublasGetStatusString(caffe_cublas_status_); \
  } while (0)

#define CURAND_CHECK(condition)                                \
  do {                                                         \
    curandStatus_t caffe_curand_status_ = (condition);         \
    CAFFE_CHECK(caffe_curand_status_ == CURAND_STATUS_SUCCESS) \
        << "cuRAND call failed: " #condition ": status "       \
        << static_cast<int>(caffe_curand_status_);             \
  } while (0)

// Explicit instantiation of a layer's GPU passes for float and double, in its .cu file.
#define INSTANTIATE_LAYER_GPU_FORWARD(classname)                            \
  template void classname<float>::Forward_gpu(const Blobs<float>& bottom,   \
                                              const Blobs<float>& top);     \
  template void classname<double>::Forward_gpu(const Blobs<double>& bottom, \
                                               const Blobs<double>& top)
#define INSTANTIATE_LAYER_GPU_BACKWARD(classname)                                        \
  template void classname<float>::Backward_gpu(const Blobs<float>& top,                  \
                                               const std::vector<bool>& propagate_down,  \
                                               const Blobs<float>& bottom);              \
  template void classname<double>::Backward_gpu(const Blobs<double>& top,                \
                                                const std::vector<bool>& propagate_down, \
                                                const Blobs<double>& bottom)
#define INSTANTIATE_LAYER_GPU_FUNCS(classname) \
  INSTANTIATE_LAYER_GPU_FORWARD(classname);    \
  INSTANTIATE_LAYER_GPU_BACKWARD(classname)
// The GPU passes of a layer that runs the layers after it as one (LayerFusion::FuseWithNext).
#define INSTANTIATE_LAYER_GPU_FUSED_FUNCS(classname)                                               \
  template void classname<float>::ForwardFused_gpu(const Blobs<float>&, const Blobs<float>&);      \
  template void classname<double>::ForwardFused_gpu(const Blobs<double>&, const Blobs<double>&);   \
  template void classname<float>::BackwardFused_gpu(const Blobs<float>&, const std::vector<bool>&, \
                                                    const Blobs<float>&,                           \
                                                    const std::vector<std::vector<bool>>&);        \
  template void classname<double>::BackwardFused_gpu(                                              \
      const Blobs<double>&, const std::vector<bool>&, const Blobs<double>&,                        \
      const std::vector<std::vector<bool>>&)

// Grid-stride loop over n elements (n <= INT_MAX). The index stays an int (32-bit index
// arithmetic in the bodies), but it never overflows: with about one thread per element the
// stride is about n, and `i += stride` would pass INT_MAX once n passes 2^30 (a 4 GB blob), so
// the loop only steps when the next index is still below n.
#define CUDA_KERNEL_LOOP(i, n)                                                                   \
  for (int i = caffe::KernelLoopFirst(n), caffe_kernel_loop_stride_ = caffe::KernelLoopStride(); \
       i<(n); i = (n)-i> caffe_kernel_loop_stride_ ? i + caffe_kernel_loop_stride_ : (n))

namespace caffe {
constexpr int CAFFE_CUDA_NUM_THREADS = 512;
/// Blocks of CAFFE_CUDA_NUM_THREADS covering n threads (no overflow near INT_MAX).
inline int CAFFE_GET_BLOCKS(const int n) {
  return n / CAFFE_CUDA_NUM_THREADS + (n % CAFFE_CUDA_NUM_THREADS != 0);
}
// Device code: nvcc's, or the CUDA emulator's (src/cuda_emu), where .cu files compile as C++.
#if defined(__CUDACC__) || defined(CAFFE_CUDA_EMU)
/// This thread's first index of CUDA_KERNEL_LOOP, or n when it has none.
template <typename Count>
__device__ inline int KernelLoopFirst(Count n) {
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  return first < static_cast<long long>(n) ? static_cast<int>(first) : static_cast<int>(n);
}
/// The grid's thread count, the stride of CUDA_KERNEL_LOOP (at most INT_MAX).
__device__ inline int KernelLoopStride() {
  const long long stride = static_cast<long long>(blockDim.x) * gridDim.x;
  return stride < 0x7fffffffLL ? static_cast<int>(stride) : 0x7fffffff;
}
#endif
}  // namespace caffe

#endif  // CPU_ONLY
#endif  // CAFFE_UTIL_DEVICE_ALTERNATE_HPP_
