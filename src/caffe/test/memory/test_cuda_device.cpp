// LMS's CUDA device against the same expectations as the fake device: copies round-trip, the
// budget holds, and the manager keeps every value under a budget smaller than the buffers.
// Needs a GPU: skips with the reason on CPU-only builds and machines without one.
#include <cstring>
#include <memory>
#include <vector>

#include "caffe/lms/memory_manager.hpp"
#include "caffe/test/test_caffe_main.hpp"
#ifndef CPU_ONLY
#include "caffe/memory/cuda_device.hpp"
#endif

namespace caffe {
namespace lms {  // the device under LMS's manager

#ifdef CPU_ONLY
TEST(CudaDeviceTest, NeedsAGpuBuild) {
  GTEST_SKIP() << "CPU-only build: LMS's CUDA device is compiled only with CUDA";
}
#else

class CudaDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
  }
  void TearDown() override { MemoryManager::Install(nullptr); }
};

TEST_F(CudaDeviceTest, CopiesRoundTripThroughPinnedHomes) {
  CudaDevice device(0);
  EXPECT_GT(device.capacity(), 0u);
  void* home = nullptr;
  bool pinned = false;
  device.HostAlloc(&home, 4096, &pinned);
  EXPECT_TRUE(pinned);
  std::memset(home, 7, 4096);
  void* on_device = device.Malloc(4096);
  ASSERT_NE(on_device, nullptr);
  const uint64_t in = device.CopyToDeviceAsync(on_device, home, 4096);
  std::vector<unsigned char> back(4096, 0);
  const uint64_t out = device.CopyToHostAsync(back.data(), on_device, 4096);
  EXPECT_EQ(out, in + 1);
  device.ComputeWaitsForCopy(in);
  device.WaitForCopy(out);
  EXPECT_TRUE(device.CopyDone(in));
  EXPECT_TRUE(device.CopyDone(out));
  EXPECT_EQ(back, std::vector<unsigned char>(4096, 7));
  // The events of finished copies are reused: many copies, waited for out of order.
  std::vector<uint64_t> tickets;
  for (int i = 0; i < 64; ++i) tickets.push_back(device.CopyToDeviceAsync(on_device, home, 4096));
  device.WaitForCopy(tickets[40]);
  EXPECT_TRUE(device.CopyDone(tickets[3]));
  device.WaitForCopies();
  EXPECT_TRUE(device.CopyDone(tickets.back()));
  device.Free(on_device);
  CaffeFreeHost(home, pinned);
}

TEST_F(CudaDeviceTest, ManagerKeepsEveryValueUnderASmallBudget) {
  Options options;
  options.threshold_kb = 0;
  options.budget = 3 << 20;  // three of the ten 1 MiB buffers
  auto manager = std::make_shared<MemoryManager>(std::make_unique<CudaDevice>(0), options);
  MemoryManager::Install(manager);
  std::vector<std::unique_ptr<SyncedMemory> > buffers;
  for (int i = 0; i < 10; ++i) {
    buffers.emplace_back(new SyncedMemory(1 << 20));
    std::memset(buffers.back()->mutable_cpu_data(), i, 1 << 20);
    manager->BeginStep("test step");
    buffers.back()->mutable_gpu_data();  // device copy newer: evictions must copy it home
    manager->EndStep();
  }
  for (int i = 0; i < 10; ++i) {
    std::vector<unsigned char> back(1 << 20);
    manager->BeginStep("test step");
    CUDA_CHECK(cudaMemcpy(back.data(), buffers[i]->gpu_data(), 1 << 20, cudaMemcpyDeviceToHost));
    manager->EndStep();
    EXPECT_EQ(back, std::vector<unsigned char>(1 << 20, static_cast<unsigned char>(i))) << i;
  }
  EXPECT_LE(manager->allocator().peak_reserved(), options.budget);
  EXPECT_GT(manager->stats().swaps_out, 0u);
}

bool PageLocked(const void* host) {
  cudaPointerAttributes attributes;
  CUDA_CHECK(cudaPointerGetAttributes(&attributes, host));
  return attributes.type == cudaMemoryTypeHost;
}

// Weights a filler wrote, an input the user set: their homes were pageable before LMS saw them,
// and every copy from or to pageable memory makes the host wait. A managed one moves to pinned
// memory with its values on its first device access; one below the threshold crosses once and
// stays, as does memory the SyncedMemory does not own.
TEST_F(CudaDeviceTest, HomesTheHostWroteFirstMoveToPinnedMemoryWhenManaged) {
  Options options;
  options.threshold_kb = 1024;
  options.budget = 16 << 20;
  auto manager = std::make_shared<MemoryManager>(std::make_unique<CudaDevice>(0), options);
  MemoryManager::Install(manager);
  const size_t big = 1 << 20, small = 1 << 19;
  SyncedMemory managed(big), resident(small), outside(big);
  std::vector<unsigned char> users(big, 5);
  outside.set_cpu_data(users.data());
  std::memset(managed.mutable_cpu_data(), 3, big);
  std::memset(resident.mutable_cpu_data(), 4, small);
  ASSERT_FALSE(PageLocked(managed.cpu_data())) << "a host allocation outside any pinned scope";
  manager->BeginStep("test step");
  for (SyncedMemory* memory : {&managed, &resident, &outside}) memory->gpu_data();
  manager->EndStep();
  EXPECT_TRUE(PageLocked(managed.cpu_data()));
  EXPECT_FALSE(PageLocked(resident.cpu_data()));
  EXPECT_EQ(outside.cpu_data(), users.data());
  std::vector<unsigned char> back(big);
  CUDA_CHECK(cudaMemcpy(back.data(), managed.gpu_data(), big, cudaMemcpyDeviceToHost));
  EXPECT_EQ(back, std::vector<unsigned char>(big, 3)) << "on the device";
  const auto* home = static_cast<const unsigned char*>(managed.cpu_data());
  EXPECT_EQ(std::vector<unsigned char>(home, home + big), back) << "at home";
}
#endif

}  // namespace lms
}  // namespace caffe
