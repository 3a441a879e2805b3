#include <cuda_runtime.h>

#include "emu_kernels.hpp"

namespace caffe_emu_test {

namespace {

__global__ void Iota(int n, int* y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    y[i] = i;
  }
}

template <typename T>
__global__ void BlockSums(const T* x, T* sums) {
  __shared__ T partial[1024];
  partial[threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  for (unsigned int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = partial[0];
}

__global__ void DivergentBarrier(int* y) {
  if (threadIdx.x % 2 == 1) return;
  __syncthreads();
  y[threadIdx.x] = 1;
}

__global__ void Count(int* y) { atomicAdd(y, 1); }

__global__ void Increment(float* x) { x[0] += 1; }

// A race on a GPU: every thread writes y[0]; whichever runs last wins.
__global__ void LastWriter(int* y) { y[0] = blockIdx.x * blockDim.x + threadIdx.x; }

// The same race in shared memory, between barriers: which thread wrote slot 0 last.
__global__ void SharedLastWriter(int* y) {
  __shared__ int slot;
  __syncthreads();
  slot = threadIdx.x;
  __syncthreads();
  if (threadIdx.x == 0) y[blockIdx.x] = slot;
}

}  // namespace

void LaunchIota(int n, int blocks, int threads, int* y) { Iota<<<blocks, threads>>>(n, y); }

void LaunchBlockSums(const float* x, int blocks, int threads, float* sums) {
  BlockSums<<<blocks, threads>>>(x, sums);
}

void LaunchDivergentBarrier(int* y) { DivergentBarrier<<<1, 4>>>(y); }

void LaunchCount(int threads, int* y) { Count<<<dim3(2, 1, 1), threads, 0, nullptr>>>(y); }

void LaunchIncrement(float* x, cudaStream_t stream) { Increment<<<1, 1, 0, stream>>>(x); }

void LaunchLastWriter(int blocks, int threads, int* y) { LastWriter<<<blocks, threads>>>(y); }

void LaunchSharedLastWriter(int blocks, int threads, int* y) {
  SharedLastWriter<<<blocks, threads>>>(y);
}

}  // namespace caffe_emu_test
