// SharedMemoryCommunicator: the solver threads of one process sum their buffers in host memory;
// every member ends with the exact sum in rank order (the same bits everywhere), for lengths
// below, at and above the member count; an aborted barrier releases a waiting member.
#include <thread>
#include <vector>

#include "caffe/parallel/shared_memory_communicator.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {
namespace {

// Runs Allreduce on `members` threads over buffers member r fills with r + 1 + i / 8.
template <typename Dtype>
std::vector<std::vector<Dtype>> SumOnThreads(int members, size_t count) {
  auto group = std::make_shared<SharedMemoryGroup<Dtype>>(std::make_shared<ThreadBarrier>(members));
  std::vector<std::vector<Dtype>> buffers(members, std::vector<Dtype>(count));
  std::vector<std::thread> threads;
  for (int rank = 0; rank < members; ++rank) {
    for (size_t i = 0; i < count; ++i) buffers[rank][i] = Dtype(rank + 1) + Dtype(i) / 8;
    threads.emplace_back([&, rank] {
      SharedMemoryCommunicator<Dtype> comm(group, rank);
      comm.Allreduce(buffers[rank].data(), count);
    });
  }
  for (std::thread& thread : threads) thread.join();
  return buffers;
}

TEST(SharedMemoryCommunicatorTest, EveryMemberGetsTheSumInRankOrder) {
  for (int members : {1, 2, 3, 4}) {
    for (size_t count : {size_t(0), size_t(1), size_t(3), size_t(1000)}) {
      const auto buffers = SumOnThreads<float>(members, count);
      for (size_t i = 0; i < count; ++i) {
        float want = 1.f + float(i) / 8;
        for (int rank = 1; rank < members; ++rank) want += float(rank + 1) + float(i) / 8;
        for (int rank = 0; rank < members; ++rank) {
          ASSERT_EQ(buffers[rank][i], want) << members << " members, element " << i;
        }
      }
    }
  }
}

TEST(SharedMemoryCommunicatorTest, DescribesItself) {
  auto group = std::make_shared<SharedMemoryGroup<double>>(std::make_shared<ThreadBarrier>(3));
  SharedMemoryCommunicator<double> comm(group, 2);
  EXPECT_EQ(comm.name(), "shared memory");
  EXPECT_EQ(comm.rank(), 2);
  EXPECT_EQ(comm.size(), 3);
  EXPECT_FALSE(comm.on_device());
}

TEST(SharedMemoryCommunicatorTest, AnAbortedBarrierReleasesAWaitingMember) {
  auto barrier = std::make_shared<ThreadBarrier>(2);
  auto group = std::make_shared<SharedMemoryGroup<float>>(barrier);
  std::vector<float> buffer(4, 1.f);
  bool released = false;
  std::thread waiting([&] {
    SharedMemoryCommunicator<float> comm(group, 0);
    try {
      comm.Allreduce(buffer.data(), buffer.size());
    } catch (const BarrierAborted&) {
      released = true;
    }
  });
  barrier->Abort();  // the other member failed before its Allreduce
  waiting.join();
  EXPECT_TRUE(released);
}

}  // namespace
}  // namespace caffe
