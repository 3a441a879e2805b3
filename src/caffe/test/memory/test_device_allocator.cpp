// The caching device allocator: size classes, reuse of freed blocks, and the budget.
#include "caffe/memory/device_allocator.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

TEST(DeviceAllocatorTest, SizeClassesRoundUpBy512BytesUpTo1MiBThenBy2MiB) {
  EXPECT_EQ(DeviceAllocator::SizeClass(0), 512u);
  EXPECT_EQ(DeviceAllocator::SizeClass(1), 512u);
  EXPECT_EQ(DeviceAllocator::SizeClass(512), 512u);
  EXPECT_EQ(DeviceAllocator::SizeClass(513), 1024u);
  EXPECT_EQ(DeviceAllocator::SizeClass((1u << 20) - 1), 1u << 20);
  EXPECT_EQ(DeviceAllocator::SizeClass(1u << 20), 1u << 20);
  EXPECT_EQ(DeviceAllocator::SizeClass((1u << 20) + 1), 2u << 20);
  EXPECT_EQ(DeviceAllocator::SizeClass((2u << 20) + 1), 4u << 20);
}

TEST(DeviceAllocatorTest, FreedBlocksAreReusedForTheSameSizeClass) {
  FakeDevice device(1 << 20);
  DeviceAllocator allocator(&device, 0);
  void* first = allocator.Allocate(1000);
  allocator.Free(first);
  EXPECT_EQ(allocator.in_use(), 0u);
  EXPECT_EQ(allocator.reserved(), 1024u);
  void* again = allocator.Allocate(1020);  // same 1024-byte class
  EXPECT_EQ(again, first);
  EXPECT_EQ(device.allocated_bytes(), 1024u);
  EXPECT_EQ(allocator.in_use(), 1024u);
}

TEST(DeviceAllocatorTest, BudgetCapsWhatIsHeldAndCachedBlocksMakeRoom) {
  FakeDevice device(1 << 20);
  DeviceAllocator allocator(&device, 4096);
  EXPECT_EQ(allocator.budget(), 4096u);
  void* a = allocator.Allocate(2048);
  void* b = allocator.Allocate(1024);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(allocator.Allocate(2048), nullptr);  // 2048 + 1024 + 2048 > 4096
  EXPECT_FALSE(allocator.Fits(2048));
  allocator.Free(a);
  // The cached 2048 block is given back to the device so a 3072 block fits.
  void* c = allocator.Allocate(3000);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(allocator.in_use(), 1024u + 3072u);
  EXPECT_EQ(allocator.reserved(), allocator.in_use());
  EXPECT_LE(device.peak_allocated_bytes(), 4096u);
  EXPECT_EQ(allocator.peak_in_use(), 4096u);
}

// Memory freed while a copy (a swap-out) may still read it carries that copy's ticket: the
// allocator hands out memory whose copies are done first, otherwise says which copy to wait for,
// and gives memory back to the device only after its copy.
TEST(DeviceAllocatorTest, MemoryAStillRunningCopyUsesComesLastAndWithItsTicket) {
  FakeDevice device(1 << 20, /*deferred_copies=*/true);
  DeviceAllocator allocator(&device, 0);
  void* busy = allocator.Allocate(1000);
  void* idle = allocator.Allocate(1000);
  char home[1000];
  const uint64_t ticket = device.CopyToHostAsync(home, busy, sizeof(home));
  allocator.Free(busy, ticket);
  allocator.Free(idle);
  uint64_t wait_for = 99;
  EXPECT_EQ(allocator.Allocate(1000, &wait_for), idle);
  EXPECT_EQ(wait_for, 0u);
  EXPECT_EQ(allocator.Allocate(1000, &wait_for), busy);
  EXPECT_EQ(wait_for, ticket);
  allocator.Free(busy, ticket);
  allocator.ReleaseCache();  // the fake device stops the test if a copy still used the memory
  EXPECT_EQ(device.pending_copies(), 0u);
}

TEST(DeviceAllocatorTest, ZeroBudgetMeansTheWholeDevice) {
  FakeDevice device(8192);
  DeviceAllocator allocator(&device, 0);
  EXPECT_EQ(allocator.budget(), 8192u);
  EXPECT_NE(allocator.Allocate(8192), nullptr);
  EXPECT_EQ(allocator.Allocate(1), nullptr);
}

}  // namespace caffe
