#include "caffe/memory/pinned_host_allocations.hpp"
#include "caffe/memory/syncedmem.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

TEST(SyncedMemoryTest, StartsUninitializedAndAllocatesZeroedOnFirstRead) {
  SyncedMemory mem(40);
  EXPECT_EQ(mem.head(), SyncedMemory::UNINITIALIZED);
  EXPECT_EQ(mem.size(), 40u);
  const char* data = static_cast<const char*>(mem.cpu_data());
  for (int i = 0; i < 40; ++i) EXPECT_EQ(data[i], 0);
  EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_CPU);
}

TEST(SyncedMemoryTest, HostMemoryIsAlignedForVectorLoads) {
  SyncedMemory mem(3);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(mem.cpu_data()) % 64, 0u);
}

TEST(SyncedMemoryTest, SetCpuDataUsesCallerMemory) {
  SyncedMemory mem(8);
  double value = 3.5;
  mem.set_cpu_data(&value);
  EXPECT_EQ(mem.cpu_data(), &value);
  EXPECT_EQ(mem.head(), SyncedMemory::HEAD_AT_CPU);
}

// Pinned where a GPU can pin it, pageable (and still aligned) elsewhere, only inside the scope.
TEST(SyncedMemoryTest, PinnedHostAllocationsAskForPageLockedMemoryInTheirScope) {
  void* ptr = nullptr;
  bool pinned = true;
  CaffeMallocHost(&ptr, 100, &pinned);
  EXPECT_FALSE(pinned);
  CaffeFreeHost(ptr, pinned);
  {
    PinnedHostAllocations outer;
    PinnedHostAllocations inner;
  }
  {
    PinnedHostAllocations scope;
    CaffeMallocHost(&ptr, 100, &pinned);
    EXPECT_EQ(pinned, Caffe::GpuAvailable());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(ptr) % 64, 0u);
    static_cast<char*>(ptr)[99] = 1;
    CaffeFreeHost(ptr, pinned);
  }
  CaffeMallocHost(&ptr, 100, &pinned);
  EXPECT_FALSE(pinned) << "the scope ended";
  CaffeFreeHost(ptr, pinned);
}

#ifdef CPU_ONLY
TEST(SyncedMemoryTest, GpuAccessInCpuOnlyBuildIsAClearError) {
  SyncedMemory mem(8);
  try {
    mem.gpu_data();
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no GPU support"), std::string::npos) << e.what();
  }
}
#endif

}  // namespace caffe
