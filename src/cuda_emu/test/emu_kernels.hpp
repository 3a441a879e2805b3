// Kernels of the CUDA emulator's own tests (emu_kernels.cu, compiled through rewrite_launches.py
// like Caffe's .cu files).
#ifndef CAFFE_CUDA_EMU_TEST_EMU_KERNELS_HPP_
#define CAFFE_CUDA_EMU_TEST_EMU_KERNELS_HPP_

#include <cuda_runtime.h>

namespace caffe_emu_test {

/// y[i] = i for i < n, with `blocks` blocks of `threads` threads striding over n.
void LaunchIota(int n, int blocks, int threads, int* y);
/// sums[b] = sum of x[b * threads .. (b + 1) * threads), one block of `threads` per sum, with a
/// shared-memory tree and __syncthreads.
void LaunchBlockSums(const float* x, int blocks, int threads, float* sums);
/// Threads of odd index return before the barrier that the others wait at.
void LaunchDivergentBarrier(int* y);
/// y[0] += 1 from every one of `threads` threads, with atomicAdd.
void LaunchCount(int threads, int* y);
/// Adds 1 to x[0] (a kernel that reads and writes its argument), on `stream`.
void LaunchIncrement(float* x, cudaStream_t stream = nullptr);
/// y[0] = the global index of each of blocks x threads threads in turn: the last one run wins.
void LaunchLastWriter(int blocks, int threads, int* y);
/// y[b] = the index of the thread of block b that wrote a shared slot last, between barriers.
void LaunchSharedLastWriter(int blocks, int threads, int* y);

}  // namespace caffe_emu_test

#endif  // CAFFE_CUDA_EMU_TEST_EMU_KERNELS_HPP_
