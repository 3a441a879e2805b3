// The CUDA emulator's own tests (docs/CUDA_EMU.md): kernels cover their grid and meet at barriers,
// and the mistakes a GPU punishes (host memory in a kernel, device memory touched by the host, a
// copy of the wrong kind or past an allocation, an empty grid, bad BLAS sizes, an odd normal fill)
// are caught as a GPU or its libraries would catch them, or louder. Its main (emu_test_main.cpp)
// makes two emulated GPUs.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <thread>
#include <vector>

#include "device_array.hpp"
#include "emu_kernels.hpp"

namespace caffe_emu_test {
namespace {

class CudaEmuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    cudaGetLastError();
  }
};

TEST_F(CudaEmuTest, TwoDevicesFromTheEnvironment) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  EXPECT_EQ(count, 2) << "main sets CAFFE_CUDA_EMU_DEVICES=2";
  EXPECT_EQ(cudaSetDevice(2), cudaErrorInvalidDevice);
  cudaDeviceProp prop;
  ASSERT_EQ(cudaGetDeviceProperties(&prop, 1), cudaSuccess);
  EXPECT_EQ(prop.major, 9);
  EXPECT_EQ(prop.totalGlobalMem, size_t{256} << 20) << "CAFFE_CUDA_EMU_MEMORY=256M";
}

TEST_F(CudaEmuTest, GridStrideLoopCoversEveryElement) {
  const int n = 1000;
  DeviceArray<int> y(n);
  for (int blocks : {1, 3, 8}) {
    for (int threads : {1, 32, 512}) {
      LaunchIota(n, blocks, threads, y.get());
      ASSERT_EQ(cudaPeekAtLastError(), cudaSuccess);
      const std::vector<int> values = y.Read();
      for (int i = 0; i < n; ++i) ASSERT_EQ(values[i], i) << blocks << "x" << threads;
      ASSERT_EQ(cudaMemset(y.get(), 0, n * sizeof(int)), cudaSuccess);
    }
  }
}

TEST_F(CudaEmuTest, BlocksMeetAtBarriers) {
  const int blocks = 3, threads = 256;
  std::vector<float> host(blocks * threads);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % 7);
  DeviceArray<float> x(host.size()), sums(blocks);
  x.Write(host);
  LaunchBlockSums(x.get(), blocks, threads, sums.get());
  ASSERT_EQ(cudaPeekAtLastError(), cudaSuccess);
  const std::vector<float> result = sums.Read();
  for (int b = 0; b < blocks; ++b) {
    float expected = 0;
    for (int t = 0; t < threads; ++t) expected += host[b * threads + t];
    EXPECT_EQ(result[b], expected) << "block " << b;
  }
}

TEST_F(CudaEmuTest, AtomicsCountEveryThread) {
  DeviceArray<int> y(1);
  ASSERT_EQ(cudaMemset(y.get(), 0, sizeof(int)), cudaSuccess);
  LaunchCount(100, y.get());
  EXPECT_EQ(y.Read()[0], 200);
}

// CAFFE_CUDA_EMU_ORDER=reverse (SetThreadOrder) runs blocks and threads last first, so a kernel
// whose threads race gives another result than in the default order.
TEST_F(CudaEmuTest, TheThreadOrderCanBeReversedToShowRaces) {
  DeviceArray<int> last(1), shared_last(3);
  const caffe_emu::ThreadOrder before = caffe_emu::SetThreadOrder(caffe_emu::ThreadOrder::kForward);
  LaunchLastWriter(3, 64, last.get());
  LaunchSharedLastWriter(3, 64, shared_last.get());
  EXPECT_EQ(last.Read()[0], 3 * 64 - 1);
  EXPECT_EQ(shared_last.Read(), std::vector<int>(3, 63));
  caffe_emu::SetThreadOrder(caffe_emu::ThreadOrder::kReverse);
  LaunchLastWriter(3, 64, last.get());
  LaunchSharedLastWriter(3, 64, shared_last.get());
  EXPECT_EQ(last.Read()[0], 0);
  EXPECT_EQ(shared_last.Read(), std::vector<int>(3, 0));
  // Kernels without races give the same results either way.
  const int n = 1000;
  DeviceArray<int> y(n);
  LaunchIota(n, 3, 32, y.get());
  const std::vector<int> values = y.Read();
  for (int i = 0; i < n; ++i) ASSERT_EQ(values[i], i);
  std::vector<float> host(2 * 256);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i % 5);
  DeviceArray<float> x(host.size()), sums(2);
  x.Write(host);
  LaunchBlockSums(x.get(), 2, 256, sums.get());
  const std::vector<float> result = sums.Read();
  EXPECT_EQ(result[0], std::accumulate(host.begin(), host.begin() + 256, 0.0f));
  EXPECT_EQ(result[1], std::accumulate(host.begin() + 256, host.end(), 0.0f));
  caffe_emu::SetThreadOrder(before);
}

TEST_F(CudaEmuTest, AnEmptyGridIsAnInvalidConfiguration) {
  DeviceArray<int> y(1);
  LaunchIota(0, 0, 512, y.get());  // what CAFFE_GET_BLOCKS(0) launches
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  LaunchIota(1, 1, 2048, y.get());
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "reading the error clears it";
}

TEST_F(CudaEmuTest, FreshDeviceMemoryIsNotZero) {
  DeviceArray<float> x(16);
  for (float value : x.Read()) EXPECT_TRUE(std::isnan(value));
}

TEST_F(CudaEmuTest, MemoryIsBudgetedPerDevice) {
  size_t free_before = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  void* block = nullptr;
  ASSERT_EQ(cudaMalloc(&block, 64 << 20), cudaSuccess);
  size_t free_after = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_EQ(free_before - free_after, size_t{64} << 20);
  void* too_big = nullptr;
  EXPECT_EQ(cudaMalloc(&too_big, total), cudaErrorMemoryAllocation);
  EXPECT_EQ(too_big, nullptr);
  cudaGetLastError();
  ASSERT_EQ(cudaFree(block), cudaSuccess);
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_EQ(free_after, free_before);
  EXPECT_EQ(cudaFree(static_cast<char*>(block) + 256), cudaErrorInvalidValue);
}

TEST_F(CudaEmuTest, CopiesCheckTheirKindAndBounds) {
  DeviceArray<float> x(4);
  std::vector<float> host(8, 1.0f);
  EXPECT_EQ(cudaMemcpy(host.data(), x.get(), 4 * sizeof(float), cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(x.get(), host.data(), 8 * sizeof(float), cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(x.get(), host.data(), 4 * sizeof(float), cudaMemcpyDefault), cudaSuccess);
  EXPECT_EQ(x.Read()[3], 1.0f);
}

// Events time the device's time between them (here, between the moments their marks ran); events
// made without timing, or never recorded, cannot be timed.
TEST_F(CudaEmuTest, EventsTimeTheWorkBetweenThem) {
  cudaEvent_t start = nullptr, end = nullptr, untimed = nullptr, unrecorded = nullptr;
  ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&end), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&unrecorded), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(start), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(start), cudaSuccess);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(cudaEventRecord(end), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(untimed), cudaSuccess);
  ASSERT_EQ(cudaEventSynchronize(untimed), cudaSuccess);
  float ms = 0;
  ASSERT_EQ(cudaEventElapsedTime(&ms, start, end), cudaSuccess);
  EXPECT_GE(ms, 20);
  EXPECT_LT(ms, 5000);
  ASSERT_EQ(cudaEventElapsedTime(&ms, end, start), cudaSuccess);
  EXPECT_LE(ms, -20);
  EXPECT_EQ(cudaEventElapsedTime(&ms, start, untimed), cudaErrorInvalidResourceHandle);
  EXPECT_EQ(cudaEventElapsedTime(&ms, unrecorded, end), cudaErrorInvalidResourceHandle);
  cudaGetLastError();
  for (cudaEvent_t event : {start, end, untimed, unrecorded}) {
    EXPECT_EQ(cudaEventDestroy(event), cudaSuccess);
  }
}

TEST_F(CudaEmuTest, PinnedHostMemoryIsVisibleToKernels) {
  float* pinned = nullptr;
  ASSERT_EQ(cudaHostAlloc(&pinned, sizeof(float), cudaHostAllocDefault), cudaSuccess);
  pinned[0] = 41;
  LaunchIncrement(pinned);
  ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  EXPECT_EQ(pinned[0], 42);
  EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
}

TEST_F(CudaEmuTest, PointerAttributesTellDevicePinnedAndPageableMemoryApart) {
  DeviceArray<float> device(4);
  float* pinned = nullptr;
  ASSERT_EQ(cudaHostAlloc(&pinned, 4 * sizeof(float), cudaHostAllocDefault), cudaSuccess);
  std::vector<float> pageable(4);
  cudaPointerAttributes attributes;
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, device.get() + 1), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);
  EXPECT_EQ(attributes.device, 0);
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, pinned + 3), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
  EXPECT_EQ(attributes.hostPointer, pinned + 3);
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, pageable.data()), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeUnregistered);
  EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
  ASSERT_EQ(cudaPointerGetAttributes(&attributes, pinned), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeUnregistered) << "freed";
}

TEST_F(CudaEmuTest, CublasComputesColumnMajorProductsAndChecksSizes) {
  cublasHandle_t handle;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  // A is 2x3, B is 3x2, column-major; C = A * B.
  DeviceArray<float> a(6), b(6), c(4);
  a.Write({1, 4, 2, 5, 3, 6});
  b.Write({1, 0, 1, 0, 1, 1});
  const float one = 1, zero = 0;
  ASSERT_EQ(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, a.get(), 2, b.get(), 3,
                        &zero, c.get(), 2),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(c.Read(), (std::vector<float>{4, 10, 5, 11}));
  EXPECT_EQ(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, a.get(), 1, b.get(), 3,
                        &zero, c.get(), 2),
            CUBLAS_STATUS_INVALID_VALUE);
  float dot = 0;
  ASSERT_EQ(cublasSdot(handle, 3, a.get(), 2, b.get(), 1, &dot), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(dot, 1 * 1 + 2 * 0 + 3 * 1);
  std::vector<float> host(6);
  EXPECT_EQ(cublasSaxpy(handle, 6, &one, host.data(), 1, b.get(), 1),
            CUBLAS_STATUS_EXECUTION_FAILED)
      << "x is host memory";
  EXPECT_EQ(cublasSdot(handle, 3, a.get(), 1, b.get(), 1, c.get()), CUBLAS_STATUS_EXECUTION_FAILED)
      << "the result goes to host memory in the default pointer mode";
  EXPECT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
}

TEST_F(CudaEmuTest, CurandFillsDeviceMemoryAsCurandDoes) {
  curandGenerator_t generator;
  ASSERT_EQ(curandCreateGenerator(&generator, CURAND_RNG_PSEUDO_DEFAULT), CURAND_STATUS_SUCCESS);
  ASSERT_EQ(curandSetPseudoRandomGeneratorSeed(generator, 1701), CURAND_STATUS_SUCCESS);
  DeviceArray<float> x(1000);
  ASSERT_EQ(curandGenerateUniform(generator, x.get(), 1000), CURAND_STATUS_SUCCESS);
  const std::vector<float> first = x.Read();
  for (float value : first) {
    EXPECT_GT(value, 0.0f);
    EXPECT_LE(value, 1.0f);
  }
  ASSERT_EQ(curandSetPseudoRandomGeneratorSeed(generator, 1701), CURAND_STATUS_SUCCESS);
  ASSERT_EQ(curandGenerateUniform(generator, x.get(), 1000), CURAND_STATUS_SUCCESS);
  EXPECT_EQ(x.Read(), first) << "the same seed gives the same numbers";
  EXPECT_EQ(curandGenerateNormal(generator, x.get(), 999, 0.0f, 1.0f),
            CURAND_STATUS_LENGTH_NOT_MULTIPLE);
  std::vector<float> host(4);
  EXPECT_NE(curandGenerateUniform(generator, host.data(), 4), CURAND_STATUS_SUCCESS);
  EXPECT_EQ(curandDestroyGenerator(generator), CURAND_STATUS_SUCCESS);
}

using CudaEmuDeathTest = CudaEmuTest;

TEST_F(CudaEmuDeathTest, HostCodeTouchingDeviceMemoryDiesWithAMessage) {
  DeviceArray<float> x(4);
  float* device = x.get();
  EXPECT_DEATH(device[1] = 3.0f, "host code read or wrote GPU 0's memory");
}

TEST_F(CudaEmuDeathTest, AKernelGivenHostMemoryDiesWithAMessage) {
  std::vector<int> host(8);
  EXPECT_DEATH(LaunchIota(8, 1, 8, host.data()), "kernel argument 1 .* is host memory");
}

TEST_F(CudaEmuDeathTest, AKernelGivenAnotherGpusMemoryDies) {
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  DeviceArray<int> y(8);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_DEATH(LaunchIota(8, 1, 8, y.get()), "is GPU 1's memory, but the kernel runs on GPU 0");
}

TEST_F(CudaEmuDeathTest, ThreadsThatSkipABarrierDie) {
  DeviceArray<int> y(4);
  EXPECT_DEATH(
      {
        LaunchDivergentBarrier(y.get());
        cudaDeviceSynchronize();
      },
      "left the kernel while others waited");
}

}  // namespace
}  // namespace caffe_emu_test
