// The Caffe context: one per thread (mode, generator, solver rank and count), reproducible
// generators from set_random_seed, saving and restoring a generator's state, and the GPU queries
// of a build without (or with) CUDA.
#include <string>
#include <thread>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

std::vector<uint32_t> Draw(int n) {
  std::vector<uint32_t> values(n);
  for (uint32_t& value : values) value = Caffe::rng_stream()();
  return values;
}

// Restores the main thread's context after a test changes it.
class CommonTest : public ::testing::Test {
 protected:
  void TearDown() override {
    Caffe::set_mode(Caffe::CPU);
    Caffe::set_solver_count(1);
    Caffe::set_solver_rank(0);
    Caffe::set_multiprocess(false);
    Caffe::set_random_seed(1701);
  }
};

}  // namespace

TEST_F(CommonTest, SameSeedGivesTheSameStreamAndAnotherSeedAnother) {
  Caffe::set_random_seed(1234);
  const std::vector<uint32_t> first = Draw(100);
  Caffe::set_random_seed(1234);
  EXPECT_EQ(Draw(100), first);
  Caffe::set_random_seed(1235);
  EXPECT_NE(Draw(100), first);
}

TEST_F(CommonTest, TheGeneratorIsMt19937SeededWithTheSeed) {
  // Fixed by the snapshot format: a saved state is an mt19937 state.
  Caffe::set_random_seed(5489);
  std::mt19937 reference(5489);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(Caffe::rng_stream()(), reference());
}

TEST_F(CommonTest, SavedStateRestoresTheStreamFromThatPoint) {
  Caffe::set_random_seed(77);
  Draw(13);
  const std::string state = Caffe::rng().SaveState();
  const std::vector<uint32_t> after_save = Draw(50);
  Draw(1000);
  ASSERT_TRUE(Caffe::rng().LoadState(state));
  EXPECT_EQ(Draw(50), after_save);
  // Into a fresh generator as well (a resumed run).
  Caffe::RNG other(1);
  ASSERT_TRUE(other.LoadState(state));
  EXPECT_EQ(other.generator()(), after_save[0]);
}

TEST_F(CommonTest, LoadStateRejectsGarbageAndKeepsTheGenerator) {
  Caffe::set_random_seed(9);
  const std::string state = Caffe::rng().SaveState();
  const std::vector<uint32_t> expected = Draw(5);
  ASSERT_TRUE(Caffe::rng().LoadState(state));
  EXPECT_FALSE(Caffe::rng().LoadState("not a generator state"));
  EXPECT_FALSE(Caffe::rng().LoadState(""));
  EXPECT_FALSE(Caffe::rng().LoadState(state.substr(0, state.size() / 2)));  // truncated
  EXPECT_EQ(Draw(5), expected);
}

TEST_F(CommonTest, EachThreadHasItsOwnContext) {
  Caffe::set_mode(Caffe::GPU);
  Caffe::set_solver_count(4);
  Caffe::set_solver_rank(3);
  Caffe::set_multiprocess(true);
  Caffe::set_random_seed(100);
  const std::vector<uint32_t> main_draws = Draw(20);

  Caffe::Brew thread_mode = Caffe::GPU;
  int thread_count = 0, thread_rank = -1;
  bool thread_root = false, thread_multiprocess = true;
  std::vector<uint32_t> thread_draws, thread_draws_again;
  std::thread worker([&] {
    // A new thread starts from the defaults, not from the spawning thread's settings.
    thread_mode = Caffe::mode();
    thread_count = Caffe::solver_count();
    thread_rank = Caffe::solver_rank();
    thread_root = Caffe::root_solver();
    thread_multiprocess = Caffe::multiprocess();
    Caffe::set_solver_rank(1);
    Caffe::set_random_seed(100);
    thread_draws = Draw(20);
    Caffe::set_random_seed(100);
    thread_draws_again = Draw(20);
  });
  worker.join();
  EXPECT_EQ(thread_mode, Caffe::CPU);
  EXPECT_EQ(thread_count, 1);
  EXPECT_EQ(thread_rank, 0);
  EXPECT_TRUE(thread_root);
  EXPECT_FALSE(thread_multiprocess);
  // The same seed in another thread gives the same numbers; each thread has its own stream.
  EXPECT_EQ(thread_draws, main_draws);
  EXPECT_EQ(thread_draws_again, main_draws);
  // And the worker's changes left this thread alone.
  EXPECT_EQ(Caffe::mode(), Caffe::GPU);
  EXPECT_EQ(Caffe::solver_count(), 4);
  EXPECT_EQ(Caffe::solver_rank(), 3);
  EXPECT_TRUE(Caffe::multiprocess());
}

TEST_F(CommonTest, ThreadsDrawingConcurrentlyDoNotDisturbEachOther) {
  Caffe::set_random_seed(5);
  const std::vector<uint32_t> expected = Draw(10000);
  std::vector<std::vector<uint32_t>> results(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &results] {
      Caffe::set_random_seed(5);
      results[t] = Draw(10000);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(results[t], expected) << "thread " << t;
}

TEST_F(CommonTest, OnlyRankZeroIsTheRootSolver) {
  EXPECT_TRUE(Caffe::root_solver());
  Caffe::set_solver_count(2);
  Caffe::set_solver_rank(1);
  EXPECT_EQ(Caffe::solver_count(), 2);
  EXPECT_EQ(Caffe::solver_rank(), 1);
  EXPECT_FALSE(Caffe::root_solver());
  Caffe::set_solver_rank(0);
  EXPECT_TRUE(Caffe::root_solver());
}

TEST_F(CommonTest, ModeIsSetPerThread) {
  EXPECT_EQ(Caffe::mode(), Caffe::CPU);
  Caffe::set_mode(Caffe::GPU);
  EXPECT_EQ(Caffe::mode(), Caffe::GPU);
}

TEST_F(CommonTest, ClusterSeedsDiffer) {
  // 64 random bits each: equal by chance with probability 2^-64.
  EXPECT_NE(cluster_seedgen(), cluster_seedgen());
}

#ifdef CPU_ONLY
TEST_F(CommonTest, CpuOnlyBuildHasNoGpuAndSaysSo) {
  EXPECT_FALSE(Caffe::GpuAvailable());
  try {
    Caffe::SetDevice(0);
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CPU_ONLY"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Caffe::DeviceQuery(), Error);
  EXPECT_EQ(Caffe::device(), -1);
}
#else
TEST_F(CommonTest, SetDeviceRejectsABadIndex) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  EXPECT_EQ(Caffe::GpuAvailable(), count > 0);
  EXPECT_THROW(Caffe::SetDevice(-1), Error);
  EXPECT_THROW(Caffe::SetDevice(count), Error);
  if (count > 0) {
    Caffe::SetDevice(0);
    EXPECT_EQ(Caffe::device(), 0);
  }
}
#endif

}  // namespace caffe
