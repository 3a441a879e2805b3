// Block-wide reductions for kernels that give one thread block to each row they reduce (softmax
// over a row of classes, MVN's and BatchNorm's per-row statistics). Only for .cu files: the block
// size is fixed at kBlockReduceThreads, a power of two, so the tree below halves evenly.
#ifndef CAFFE_KERNELS_GPU_BLOCK_REDUCE_CUH_
#define CAFFE_KERNELS_GPU_BLOCK_REDUCE_CUH_

#ifndef CPU_ONLY

#include "caffe/util/device_alternate.hpp"

namespace caffe {

/// Threads per block of every kernel that calls BlockReduce.
constexpr int kBlockReduceThreads = 256;

struct BlockSumOp {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};

struct BlockMaxOp {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a > b ? a : b;
  }
};

/// Combines every thread's `value` with `op` and returns the result to every thread of the block.
/// All threads of the block must call it (it synchronizes); it may be called repeatedly in one
/// kernel, since it synchronizes again before its shared buffer can be reused.
template <typename T, typename Op>
__device__ T BlockReduce(T value, Op op) {
  __shared__ T partial[kBlockReduceThreads];
  partial[threadIdx.x] = value;
  __syncthreads();
  for (int stride = kBlockReduceThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      partial[threadIdx.x] = op(partial[threadIdx.x], partial[threadIdx.x + stride]);
    }
    __syncthreads();
  }
  const T result = partial[0];
  __syncthreads();
  return result;
}

}  // namespace caffe

#endif  // CPU_ONLY
#endif  // CAFFE_KERNELS_GPU_BLOCK_REDUCE_CUH_
