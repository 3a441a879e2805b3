// The CUDA emulator's NCCL (src/cuda_emu/nccl.cpp): collectives give the exact sums, gathers and
// broadcasts, in place and out of place, across chunk boundaries, between threads and between
// processes; and the mistakes NCCL punishes (two ranks on one GPU, host buffers, ranks calling
// different collectives, a peer that died or left) are errors rather than hangs. Its main
// (emu_test_main.cpp) makes two emulated GPUs.
#include <gtest/gtest.h>
#include <nccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <thread>
#include <vector>

#include "device_array.hpp"

namespace caffe_emu_test {
namespace {

constexpr int kRanks = 2;

// Runs `body(rank)` on one thread per rank, each with its GPU current.
void OnRanks(const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kRanks; ++rank) {
    threads.emplace_back([&body, rank] {
      ASSERT_EQ(cudaSetDevice(rank), cudaSuccess);
      body(rank);
    });
  }
  for (std::thread& thread : threads) thread.join();
}

// One communicator per GPU, made by ncclCommInitAll.
class NcclEmuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const int devices[kRanks] = {0, 1};
    ASSERT_EQ(ncclCommInitAll(comms_, kRanks, devices), ncclSuccess);
  }
  void TearDown() override {
    for (ncclComm_t comm : comms_) {
      if (comm != nullptr) ncclCommDestroy(comm);
    }
  }
  // Rank r's value i of a test buffer: distinct per rank and element, exact in float.
  static float Value(int rank, size_t i) { return static_cast<float>((i % 1000) + 10000 * rank); }

  ncclComm_t comms_[kRanks] = {nullptr, nullptr};
};

TEST_F(NcclEmuTest, AllReduceSumsInPlaceAndOutOfPlaceAcrossChunks) {
  // 100003 floats span two of the emulator's 256 KiB steps, the last one partial.
  for (size_t count : {size_t{1}, size_t{7}, size_t{100003}}) {
    OnRanks([&](int rank) {
      std::vector<float> mine(count);
      for (size_t i = 0; i < count; ++i) mine[i] = Value(rank, i);
      DeviceArray<float> in_place(count), send(count), recv(count);
      in_place.Write(mine);
      send.Write(mine);
      ASSERT_EQ(ncclAllReduce(in_place.get(), in_place.get(), count, ncclFloat, ncclSum,
                              comms_[rank], nullptr),
                ncclSuccess);
      ASSERT_EQ(
          ncclAllReduce(send.get(), recv.get(), count, ncclFloat, ncclSum, comms_[rank], nullptr),
          ncclSuccess);
      const std::vector<float> a = in_place.Read(), b = recv.Read(), unchanged = send.Read();
      for (size_t i = 0; i < count; ++i) {
        ASSERT_EQ(a[i], Value(0, i) + Value(1, i)) << "count " << count << " i " << i;
        ASSERT_EQ(b[i], a[i]);
        ASSERT_EQ(unchanged[i], mine[i]);
      }
    });
  }
}

TEST_F(NcclEmuTest, ReduceScatterAndAllGatherInPlace) {
  const size_t block = 70001;  // each rank's share, crossing a step boundary
  OnRanks([&](int rank) {
    std::vector<double> mine(block * kRanks);
    for (size_t i = 0; i < mine.size(); ++i) mine[i] = Value(rank, i);
    DeviceArray<double> buffer(mine.size());
    buffer.Write(mine);
    ASSERT_EQ(ncclReduceScatter(buffer.get(), buffer.get() + rank * block, block, ncclDouble,
                                ncclSum, comms_[rank], nullptr),
              ncclSuccess);
    std::vector<double> scattered = buffer.Read();
    for (size_t i = rank * block; i < (rank + 1) * block; ++i) {
      ASSERT_EQ(scattered[i], Value(0, i) + Value(1, i)) << i;
    }
    ASSERT_EQ(ncclAllGather(buffer.get() + rank * block, buffer.get(), block, ncclDouble,
                            comms_[rank], nullptr),
              ncclSuccess);
    const std::vector<double> gathered = buffer.Read();
    for (size_t i = 0; i < gathered.size(); ++i) {
      ASSERT_EQ(gathered[i], Value(0, i) + Value(1, i)) << i;
    }
  });
}

TEST_F(NcclEmuTest, GroupOfReducesAndBroadcastsWithOneRootPerBlock) {
  // Unequal blocks: block r (r + 3 values) is reduced to root r, then broadcast from it.
  const size_t offsets[kRanks + 1] = {0, 3, 7};
  OnRanks([&](int rank) {
    std::vector<float> mine(offsets[kRanks]);
    for (size_t i = 0; i < mine.size(); ++i) mine[i] = Value(rank, i);
    DeviceArray<float> buffer(mine.size());
    buffer.Write(mine);
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int root = 0; root < kRanks; ++root) {
      float* part = buffer.get() + offsets[root];
      ASSERT_EQ(ncclReduce(part, part, offsets[root + 1] - offsets[root], ncclFloat, ncclSum, root,
                           comms_[rank], nullptr),
                ncclSuccess);
    }
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    for (int root = 0; root < kRanks; ++root) {
      float* part = buffer.get() + offsets[root];
      ASSERT_EQ(ncclBroadcast(part, part, offsets[root + 1] - offsets[root], ncclFloat, root,
                              comms_[rank], nullptr),
                ncclSuccess);
    }
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
    const std::vector<float> result = buffer.Read();
    for (size_t i = 0; i < result.size(); ++i) ASSERT_EQ(result[i], Value(0, i) + Value(1, i));
  });
}

// A GPU's NCCL writes recvbuff when its kernel runs on the stream, after the call returns: a
// program that reads the result before waiting for that stream gets the old values (here always).
TEST_F(NcclEmuTest, TheResultIsWrittenOnTheStreamNotAtTheCall) {
  OnRanks([&](int rank) {
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), cudaSuccess);
    const std::vector<float> mine = {Value(rank, 0), Value(rank, 1), Value(rank, 2)};
    DeviceArray<float> buffer(mine.size()), gathered(mine.size() * kRanks);
    buffer.Write(mine);
    ASSERT_EQ(
        ncclAllGather(buffer.get(), gathered.get(), mine.size(), ncclFloat, comms_[rank], stream),
        ncclSuccess);
    ASSERT_EQ(ncclAllReduce(buffer.get(), buffer.get(), mine.size(), ncclFloat, ncclSum,
                            comms_[rank], stream),
              ncclSuccess);
    // The default stream's copy is not ordered with `stream`.
    EXPECT_EQ(buffer.Read(), mine) << "the sum is still queued on the NCCL stream";
    ASSERT_EQ(cudaEventRecord(done, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamWaitEvent(nullptr, done, 0), cudaSuccess);
    const std::vector<float> sums = buffer.Read(), all = gathered.Read();
    for (size_t i = 0; i < mine.size(); ++i) {
      EXPECT_EQ(sums[i], Value(0, i) + Value(1, i));
      // The gather ran first on the stream, so it read the values before the sum.
      for (int r = 0; r < kRanks; ++r) EXPECT_EQ(all[r * mine.size() + i], Value(r, i));
    }
    EXPECT_EQ(cudaEventDestroy(done), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  });
}

// NCCL works on its communicator's GPU whichever GPU the caller has current: the null stream is
// that GPU's default stream, which a copy on it then waits for.
TEST_F(NcclEmuTest, TheNullStreamIsTheCommunicatorsGpusDefaultStream) {
  OnRanks([&](int rank) {
    const std::vector<float> mine = {Value(rank, 0), Value(rank, 1)};
    DeviceArray<float> buffer(mine.size());
    buffer.Write(mine);
    ASSERT_EQ(cudaSetDevice(1 - rank), cudaSuccess);  // the other rank's GPU
    ASSERT_EQ(ncclAllReduce(buffer.get(), buffer.get(), mine.size(), ncclFloat, ncclSum,
                            comms_[rank], nullptr),
              ncclSuccess);
    ASSERT_EQ(cudaSetDevice(rank), cudaSuccess);
    const std::vector<float> sums = buffer.Read();
    for (size_t i = 0; i < mine.size(); ++i) EXPECT_EQ(sums[i], Value(0, i) + Value(1, i));
  });
}

TEST_F(NcclEmuTest, RanksCallingDifferentCollectivesFailTogether) {
  OnRanks([&](int rank) {
    DeviceArray<float> buffer(16);
    const size_t count = rank == 0 ? 10 : 11;
    EXPECT_EQ(
        ncclAllReduce(buffer.get(), buffer.get(), count, ncclFloat, ncclSum, comms_[rank], nullptr),
        ncclInvalidUsage);
    ncclResult_t async_error = ncclSuccess;
    ASSERT_EQ(ncclCommGetAsyncError(comms_[rank], &async_error), ncclSuccess);
    EXPECT_EQ(async_error, ncclInvalidUsage) << "the communicator stays broken";
  });
}

TEST_F(NcclEmuTest, HostMemoryAndAnotherGpusMemoryAreRefused) {
  std::vector<float> host(8);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  DeviceArray<float> on_gpu1(8);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_EQ(ncclAllReduce(host.data(), host.data(), 8, ncclFloat, ncclSum, comms_[0], nullptr),
            ncclInvalidArgument);
  EXPECT_EQ(ncclAllReduce(on_gpu1.get(), on_gpu1.get(), 8, ncclFloat, ncclSum, comms_[0], nullptr),
            ncclInvalidArgument);
  DeviceArray<float> too_short(4);
  EXPECT_EQ(
      ncclAllReduce(too_short.get(), too_short.get(), 8, ncclFloat, ncclSum, comms_[0], nullptr),
      ncclInvalidArgument);
}

TEST_F(NcclEmuTest, APeerThatDestroyedItsCommunicatorIsAnErrorNotAHang) {
  ncclCommDestroy(comms_[1]);
  comms_[1] = nullptr;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  DeviceArray<float> buffer(4);
  EXPECT_EQ(ncclAllReduce(buffer.get(), buffer.get(), 4, ncclFloat, ncclSum, comms_[0], nullptr),
            ncclRemoteError);
}

TEST(NcclEmuInitTest, TwoRanksOnOneGpuAreRefused) {
  const int devices[kRanks] = {1, 1};
  ncclComm_t comms[kRanks];
  EXPECT_EQ(ncclCommInitAll(comms, kRanks, devices), ncclInvalidUsage);
}

TEST(NcclEmuInitTest, ThreadsJoinByUniqueId) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  OnRanks([&](int rank) {
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, kRanks, id, rank), ncclSuccess);
    int count = 0, me = -1;
    ASSERT_EQ(ncclCommCount(comm, &count), ncclSuccess);
    ASSERT_EQ(ncclCommUserRank(comm, &me), ncclSuccess);
    EXPECT_EQ(count, kRanks);
    EXPECT_EQ(me, rank);
    DeviceArray<float> buffer(5);
    buffer.Write(std::vector<float>(5, rank + 1.0f));
    ASSERT_EQ(ncclAllReduce(buffer.get(), buffer.get(), 5, ncclFloat, ncclSum, comm, nullptr),
              ncclSuccess);
    EXPECT_EQ(buffer.Read(), std::vector<float>(5, 3.0f));
    ncclCommDestroy(comm);
  });
}

TEST(NcclEmuInitTest, ThreadsOnOneGpuAreRefused) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  OnRanks([&](int rank) {
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    ncclComm_t comm = nullptr;
    EXPECT_EQ(ncclCommInitRank(&comm, kRanks, id, rank), ncclInvalidUsage);
    EXPECT_EQ(comm, nullptr);
  });
}

// Forks a process that joins `id` as rank 1 on GPU 1, runs `child` and exits with its status.
// The child is a grandchild, so that nobody need reap it for its peer to see it gone.
void ForkRankOne(const ncclUniqueId& id, const std::function<int(ncclComm_t)>& child) {
  const pid_t middle = fork();
  ASSERT_GE(middle, 0);
  if (middle == 0) {
    if (fork() != 0) _exit(0);
    ncclComm_t comm = nullptr;
    if (cudaSetDevice(1) != cudaSuccess || ncclCommInitRank(&comm, kRanks, id, 1) != ncclSuccess) {
      _exit(3);
    }
    _exit(child(comm));
  }
  int status = 0;
  ASSERT_EQ(waitpid(middle, &status, 0), middle);
}

TEST(NcclEmuProcessTest, ProcessesJoinByUniqueIdAndSum) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ForkRankOne(id, [](ncclComm_t comm) {
    DeviceArray<float> buffer(3);
    buffer.Write({1, 2, 3});
    const bool ok = ncclAllReduce(buffer.get(), buffer.get(), 3, ncclFloat, ncclSum, comm,
                                  nullptr) == ncclSuccess &&
                    buffer.Read() == std::vector<float>({11, 22, 33});
    ncclCommDestroy(comm);
    return ok ? 0 : 1;
  });
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ncclComm_t comm = nullptr;
  ASSERT_EQ(ncclCommInitRank(&comm, kRanks, id, 0), ncclSuccess);
  DeviceArray<float> buffer(3);
  buffer.Write({10, 20, 30});
  ASSERT_EQ(ncclAllReduce(buffer.get(), buffer.get(), 3, ncclFloat, ncclSum, comm, nullptr),
            ncclSuccess);
  EXPECT_EQ(buffer.Read(), std::vector<float>({11, 22, 33}));
  ncclCommDestroy(comm);
}

TEST(NcclEmuProcessTest, APeerProcessThatDiedIsAnErrorNotAHang) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  ForkRankOne(id, [](ncclComm_t) { return 0; });  // exits without a collective or a goodbye
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ncclComm_t comm = nullptr;
  ASSERT_EQ(ncclCommInitRank(&comm, kRanks, id, 0), ncclSuccess);
  DeviceArray<float> buffer(3);
  EXPECT_EQ(ncclAllReduce(buffer.get(), buffer.get(), 3, ncclFloat, ncclSum, comm, nullptr),
            ncclRemoteError);
  ncclCommDestroy(comm);
}

}  // namespace
}  // namespace caffe_emu_test
