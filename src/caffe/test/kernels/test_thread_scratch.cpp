// ThreadScratch: aligned, kept while no larger request comes, apart per user, slot and thread.
#include <cstdint>
#include <cstring>
#include <thread>

#include "caffe/kernels/thread_scratch.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

TEST(ThreadScratchTest, AlignedAndKeptUntilItGrows) {
  auto* first = static_cast<char*>(ThreadScratch(ScratchUser::kConvolution, 0, 100));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(first) % 64, 0u);
  std::memset(first, 7, 100);
  // A smaller or equal request is the same buffer, values and all.
  auto* again = static_cast<char*>(ThreadScratch(ScratchUser::kConvolution, 0, 64));
  EXPECT_EQ(again, first);
  EXPECT_EQ(again[99], 7);
  auto* grown = static_cast<char*>(ThreadScratch(ScratchUser::kConvolution, 0, 1 << 20));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(grown) % 64, 0u);
  std::memset(grown, 1, 1 << 20);  // all of it is there
}

TEST(ThreadScratchTest, ApartPerUserSlotAndThread) {
  void* a = ThreadScratch(ScratchUser::kConvolution, 1, 256);
  void* b = ThreadScratch(ScratchUser::kConvolution, 2, 256);
  void* c = ThreadScratch(ScratchUser::kBf16Gemm, 1, 256);
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  void* other = nullptr;
  std::thread([&other] { other = ThreadScratch(ScratchUser::kConvolution, 1, 256); }).join();
  EXPECT_NE(other, a);
  EXPECT_EQ(ThreadScratch(ScratchUser::kConvolution, 1, 256), a);
}

}  // namespace caffe
