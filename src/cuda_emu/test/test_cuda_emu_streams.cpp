// The CUDA emulator's streams (streams.hpp): work waits in its stream's queue until something
// needs it done, so results read too early, and streams that nothing orders, show up as wrong
// values, as on a GPU some of the time.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "device_array.hpp"
#include "emu_kernels.hpp"

namespace caffe_emu_test {
namespace {

// A float in pinned host memory, which kernels and copies reach and the test reads directly.
class Pinned {
 public:
  explicit Pinned(float value) {
    EXPECT_EQ(cudaHostAlloc(&data_, sizeof(float), cudaHostAllocDefault), cudaSuccess);
    *data_ = value;
  }
  ~Pinned() { cudaFreeHost(data_); }
  float* get() const { return data_; }
  float value() const { return *data_; }

 private:
  float* data_ = nullptr;
};

class CudaEmuStreamsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override { EXPECT_EQ(cudaStreamDestroy(side_), cudaSuccess); }

  // One float on the device, set to `value` (the copy waits for it).
  void SetDevice(DeviceArray<float>* x, float value) { x->Write(std::vector<float>{value}); }

  cudaStream_t side_ = nullptr;  // a stream that nothing orders with the default one
};

TEST_F(CudaEmuStreamsTest, AKernelsResultIsThereOnlyOnceItsStreamIsWaitedFor) {
  Pinned counter(41);
  LaunchIncrement(counter.get());
  EXPECT_EQ(counter.value(), 41) << "the kernel is still queued";
  ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  EXPECT_EQ(counter.value(), 42);
}

// The race the emulator exists to show: a copy on another stream reads what the default stream
// has yet to write, unless an event orders the two.
TEST_F(CudaEmuStreamsTest, AnotherStreamSeesTheDefaultStreamsWorkOnlyAfterAnEvent) {
  DeviceArray<float> x(1);
  SetDevice(&x, 1);
  Pinned copy(0);
  LaunchIncrement(x.get());
  ASSERT_EQ(cudaMemcpyAsync(copy.get(), x.get(), sizeof(float), cudaMemcpyDeviceToHost, side_),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(side_), cudaSuccess);
  EXPECT_EQ(copy.value(), 1) << "the copy ran before the increment nothing made it wait for";

  cudaEvent_t incremented = nullptr;
  ASSERT_EQ(cudaEventCreateWithFlags(&incremented, cudaEventDisableTiming), cudaSuccess);
  LaunchIncrement(x.get());
  ASSERT_EQ(cudaEventRecord(incremented, nullptr), cudaSuccess);
  ASSERT_EQ(cudaStreamWaitEvent(side_, incremented, 0), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(copy.get(), x.get(), sizeof(float), cudaMemcpyDeviceToHost, side_),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(side_), cudaSuccess);
  EXPECT_EQ(copy.value(), 3) << "both increments, then the copy";
  EXPECT_EQ(cudaEventDestroy(incremented), cudaSuccess);
}

TEST_F(CudaEmuStreamsTest, ABlockingStreamIsOrderedWithTheDefaultStream) {
  cudaStream_t blocking = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&blocking, cudaStreamDefault), cudaSuccess);
  DeviceArray<float> x(1);
  SetDevice(&x, 1);
  Pinned copy(0);
  LaunchIncrement(x.get());  // default stream: 2
  ASSERT_EQ(cudaMemcpyAsync(copy.get(), x.get(), sizeof(float), cudaMemcpyDeviceToHost, blocking),
            cudaSuccess);              // waits for it
  LaunchIncrement(x.get(), blocking);  // 3
  LaunchIncrement(x.get());            // default, after the above: 4
  ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  EXPECT_EQ(copy.value(), 2);
  EXPECT_EQ(x.Read()[0], 4);
  EXPECT_EQ(cudaStreamDestroy(blocking), cudaSuccess);
}

TEST_F(CudaEmuStreamsTest, QueriesAreNotReadyWhileWorkIsQueuedAndLetItRun) {
  Pinned counter(0);
  cudaEvent_t start = nullptr, end = nullptr;
  ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&end), cudaSuccess);
  ASSERT_EQ(cudaEventRecord(start, side_), cudaSuccess);
  LaunchIncrement(counter.get(), side_);
  ASSERT_EQ(cudaEventRecord(end, side_), cudaSuccess);
  float ms = 0;
  EXPECT_EQ(cudaEventElapsedTime(&ms, start, end), cudaErrorNotReady);
  EXPECT_EQ(cudaEventQuery(end), cudaErrorNotReady);
  EXPECT_EQ(cudaEventQuery(end), cudaSuccess) << "the first poll let the work run";
  EXPECT_EQ(counter.value(), 1);
  EXPECT_EQ(cudaEventElapsedTime(&ms, start, end), cudaSuccess);
  LaunchIncrement(counter.get(), side_);
  EXPECT_EQ(cudaStreamQuery(side_), cudaErrorNotReady);
  EXPECT_EQ(cudaStreamQuery(side_), cudaSuccess);
  EXPECT_EQ(counter.value(), 2);
  EXPECT_EQ(cudaEventDestroy(start), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(end), cudaSuccess);
}

// As CUDA treats pageable host memory: an asynchronous copy from it takes the data at the call,
// one into it returns with the data there.
TEST_F(CudaEmuStreamsTest, AsynchronousCopiesWithPageableMemoryAsInCuda) {
  DeviceArray<float> x(1);
  std::vector<float> host{5};
  ASSERT_EQ(cudaMemcpyAsync(x.get(), host.data(), sizeof(float), cudaMemcpyHostToDevice, side_),
            cudaSuccess);
  host[0] = 6;
  LaunchIncrement(x.get(), side_);
  ASSERT_EQ(cudaMemcpyAsync(host.data(), x.get(), sizeof(float), cudaMemcpyDeviceToHost, side_),
            cudaSuccess);
  EXPECT_EQ(host[0], 6) << "5 copied, incremented, copied back before the call returned";
  cudaStream_t destroyed = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&destroyed, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(destroyed), cudaSuccess);
  EXPECT_EQ(cudaMemcpyAsync(host.data(), x.get(), 4, cudaMemcpyDeviceToHost, destroyed),
            cudaErrorInvalidResourceHandle);
  cudaGetLastError();
}

TEST_F(CudaEmuStreamsTest, MemsetsAndCopiesBetweenDeviceBuffersAreQueued) {
  DeviceArray<float> x(1), y(1);
  SetDevice(&x, 7);
  SetDevice(&y, 1);
  Pinned copy(0);
  ASSERT_EQ(cudaMemcpy(y.get(), x.get(), sizeof(float), cudaMemcpyDeviceToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(x.get(), 0, sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(copy.get(), y.get(), sizeof(float), cudaMemcpyDeviceToHost, side_),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(side_), cudaSuccess);
  EXPECT_EQ(copy.value(), 1) << "the device-to-device copy is still queued";
  EXPECT_EQ(y.Read()[0], 7);
  EXPECT_EQ(x.Read()[0], 0);
}

// cuBLAS queues what writes device memory, with alpha as it was at the call; what returns a
// result to the host first runs the work queued before it.
TEST_F(CudaEmuStreamsTest, CublasQueuesItsWorkOnTheHandlesStream) {
  cublasHandle_t handle;
  ASSERT_EQ(cublasCreate(&handle), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasSetStream(handle, side_), CUBLAS_STATUS_SUCCESS);
  DeviceArray<float> x(1);
  SetDevice(&x, 2);
  float alpha = 3;
  ASSERT_EQ(cublasSscal(handle, 1, &alpha, x.get(), 1), CUBLAS_STATUS_SUCCESS);
  alpha = 100;
  float dot = 0;
  ASSERT_EQ(cublasSdot(handle, 1, x.get(), 1, x.get(), 1, &dot), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(dot, 36) << "(2 * 3)^2";
  EXPECT_EQ(cublasDestroy(handle), CUBLAS_STATUS_SUCCESS);
}

// A cuRAND fill is drawn at the call (later calls get the next values) and written by work
// queued on the default stream, like cuRAND's kernel.
TEST_F(CudaEmuStreamsTest, CurandFillsAreQueuedOnTheDefaultStream) {
  curandGenerator_t generator;
  ASSERT_EQ(curandCreateGenerator(&generator, CURAND_RNG_PSEUDO_DEFAULT), CURAND_STATUS_SUCCESS);
  DeviceArray<float> x(2);
  x.Write({-1, -1});
  Pinned copy(0);
  ASSERT_EQ(curandGenerateUniform(generator, x.get(), 2), CURAND_STATUS_SUCCESS);
  ASSERT_EQ(cudaMemcpyAsync(copy.get(), x.get(), sizeof(float), cudaMemcpyDeviceToHost, side_),
            cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(side_), cudaSuccess);
  EXPECT_EQ(copy.value(), -1) << "the fill is still queued";
  const std::vector<float> first = x.Read();
  EXPECT_GT(first[0], 0);
  EXPECT_LE(first[0], 1);
  ASSERT_EQ(curandGenerateUniform(generator, x.get(), 2), CURAND_STATUS_SUCCESS);
  EXPECT_NE(x.Read(), first) << "the next values";
  EXPECT_EQ(curandDestroyGenerator(generator), CURAND_STATUS_SUCCESS);
}

TEST_F(CudaEmuStreamsTest, FreeingDeviceMemoryRunsTheDevicesQueuedWork) {
  Pinned counter(0);
  LaunchIncrement(counter.get(), side_);
  LaunchIncrement(counter.get());
  void* block = nullptr;
  ASSERT_EQ(cudaMalloc(&block, 256), cudaSuccess);
  ASSERT_EQ(cudaFree(block), cudaSuccess);
  EXPECT_EQ(counter.value(), 2);
}

// Two host threads drive two GPUs whose default streams keep waiting on each other's events, so
// each thread also runs the other GPU's queued work: streams run on several threads at once
// without deadlock, and every increment lands exactly once.
TEST_F(CudaEmuStreamsTest, TwoThreadsWhoseStreamsWaitOnEachOtherFinish) {
  constexpr int kRounds = 300;
  Pinned first(0), second(0);
  float* counters[2] = {first.get(), second.get()};
  cudaEvent_t done[2] = {nullptr, nullptr};
  for (int device = 0; device < 2; ++device) {
    ASSERT_EQ(cudaSetDevice(device), cudaSuccess);
    ASSERT_EQ(cudaEventCreateWithFlags(&done[device], cudaEventDisableTiming), cudaSuccess);
  }
  auto drive = [&](int device) {
    cudaSetDevice(device);
    for (int round = 0; round < kRounds; ++round) {
      LaunchIncrement(counters[device]);
      cudaEventRecord(done[device], nullptr);
      cudaStreamWaitEvent(nullptr, done[1 - device], 0);
      if (round % 7 == 0) cudaEventSynchronize(done[1 - device]);
    }
    cudaDeviceSynchronize();
  };
  std::thread other(drive, 1);
  drive(0);
  other.join();
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_EQ(first.value(), kRounds);
  EXPECT_EQ(second.value(), kRounds);
  for (cudaEvent_t event : done) EXPECT_EQ(cudaEventDestroy(event), cudaSuccess);
}

}  // namespace
}  // namespace caffe_emu_test
