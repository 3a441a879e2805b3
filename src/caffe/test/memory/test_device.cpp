// The host-backed fake device: a real allocator with a capacity, poisoned fresh memory, and a
// record of every copy (what the LMS tests check schedules against).
#include <cstring>
#include <vector>

#include "caffe/memory/device.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

TEST(FakeDeviceTest, AllocationsBeyondTheCapacityFail) {
  FakeDevice device(1000);
  void* first = device.Malloc(600);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(device.Malloc(401), nullptr);
  void* second = device.Malloc(400);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(device.allocated_bytes(), 1000u);
  device.Free(first);
  EXPECT_EQ(device.allocated_bytes(), 400u);
  EXPECT_EQ(device.peak_allocated_bytes(), 1000u);
  EXPECT_NE(device.Malloc(600), nullptr);
}

TEST(FakeDeviceTest, FreshMemoryIsPoisonedAndZeroClearsIt) {
  FakeDevice device(1 << 10);
  auto* bytes = static_cast<unsigned char*>(device.Malloc(64));
  for (int i = 0; i < 64; ++i) EXPECT_EQ(bytes[i], FakeDevice::kPoison);
  device.Zero(bytes, 64);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(bytes[i], 0);
}

TEST(FakeDeviceTest, CopiesRoundTripAndAreRecordedInOrder) {
  FakeDevice device(1 << 10);
  std::vector<float> host = {1.5f, -2.f, 3.25f};
  std::vector<float> back(3, 0.f);
  void* on_device = device.Malloc(sizeof(float) * 3);
  device.CopyToDeviceAsync(on_device, host.data(), sizeof(float) * 3);
  device.CopyToHostAsync(back.data(), on_device, sizeof(float) * 3);
  device.WaitForCopies();
  EXPECT_EQ(back, host);
  ASSERT_EQ(device.copies().size(), 2u);
  EXPECT_TRUE(device.copies()[0].to_device);
  EXPECT_FALSE(device.copies()[1].to_device);
  EXPECT_EQ(device.copies()[1].device, on_device);
  EXPECT_EQ(device.copies()[1].bytes, sizeof(float) * 3);
  EXPECT_TRUE(device.host_addressable());
}

TEST(FakeDeviceTest, DeferredCopiesRunInOrderOnlyWhenWaitedFor) {
  FakeDevice device(1 << 10, /*deferred_copies=*/true);
  std::vector<float> host = {1.5f, -2.f, 3.25f};
  std::vector<float> back(3, 0.f);
  void* on_device = device.Malloc(sizeof(float) * 3);
  const uint64_t in = device.CopyToDeviceAsync(on_device, host.data(), sizeof(float) * 3);
  const uint64_t out = device.CopyToHostAsync(back.data(), on_device, sizeof(float) * 3);
  EXPECT_EQ(out, in + 1);
  EXPECT_EQ(device.pending_copies(), 2u);
  EXPECT_FALSE(device.CopyDone(in));
  device.ComputeWaitsForCopy(in);  // compute on the device copy: the copy in has landed
  EXPECT_TRUE(device.CopyDone(in));
  EXPECT_FALSE(device.CopyDone(out));
  EXPECT_EQ(back, std::vector<float>(3, 0.f));
  device.WaitForCopy(out);
  EXPECT_EQ(back, host);
  EXPECT_EQ(device.pending_copies(), 0u);
  EXPECT_TRUE(device.CopyDone(0));
}

TEST(FakeDeviceDeathTest, FreeingMemoryACopyStillUsesStops) {
  FakeDevice device(1 << 10, /*deferred_copies=*/true);
  char host[16] = {};
  void* on_device = device.Malloc(16);
  device.CopyToHostAsync(host, on_device, 16);
  EXPECT_DEATH(device.Free(on_device), "freed while copy 1 still uses it");
  device.WaitForCopies();
  device.Free(on_device);
}

TEST(FakeDeviceDeathTest, CopyOutsideALiveAllocationStops) {
  FakeDevice device(1 << 10);
  char host[32] = {};
  auto* on_device = static_cast<char*>(device.Malloc(16));
  EXPECT_DEATH(device.CopyToDeviceAsync(on_device, host, 32), "runs past its allocation");
}

}  // namespace caffe
