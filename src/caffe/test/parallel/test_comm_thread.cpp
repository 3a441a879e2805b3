// CommThread: jobs run in submission order on one other thread; Wait covers every earlier job;
// a job's exception reaches the waiter and skips the jobs after it; a probe that throws ends a
// wait on a job that never finishes (how a dead peer stops a learner instead of hanging it).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "caffe/parallel/comm_thread.hpp"

namespace caffe {

TEST(CommThreadTest, RunsJobsInOrderOnAnotherThread) {
  CommThread thread;
  std::vector<int> order;
  std::thread::id worker;
  for (int i = 0; i < 20; ++i) {
    thread.Submit([&order, &worker, i] {
      if (i == 5) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      order.push_back(i);
      worker = std::this_thread::get_id();
    });
  }
  thread.WaitAll();
  ASSERT_EQ(order.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(order[i], i);
  EXPECT_NE(worker, std::this_thread::get_id());
}

TEST(CommThreadTest, WaitingForATicketCoversEveryEarlierJob) {
  CommThread thread;
  std::atomic<int> done{0};
  thread.Submit([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    ++done;
  });
  const uint64_t second = thread.Submit([&] { ++done; });
  thread.Submit([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ++done;
  });
  thread.Wait(second);
  EXPECT_GE(done.load(), 2);
  thread.WaitAll();
  EXPECT_EQ(done.load(), 3);
}

TEST(CommThreadTest, AFailedJobReachesTheWaiterAndSkipsLaterJobs) {
  CommThread thread;
  bool later_ran = false;
  thread.Submit([] { throw std::runtime_error("allreduce failed: peer gone"); });
  const uint64_t later = thread.Submit([&] { later_ran = true; });
  try {
    thread.Wait(later);
    FAIL() << "the job's error was lost";
  } catch (const std::runtime_error& error) {
    EXPECT_STREQ(error.what(), "allreduce failed: peer gone");
  }
  EXPECT_FALSE(later_ran);
}

TEST(CommThreadTest, AThrowingProbeEndsAWaitOnAStuckJob) {
  std::atomic<bool> release{false};
  {
    CommThread thread;
    const uint64_t stuck = thread.Submit([&] {
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    });
    int probes = 0;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_THROW(thread.Wait(
                     stuck,
                     [&] {
                       if (++probes == 3) throw std::runtime_error("peer died");
                     },
                     10),
                 std::runtime_error);
    EXPECT_EQ(probes, 3);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    release = true;  // lets the destructor join
  }
}

TEST(CommThreadTest, SetupRunsFirstOnTheThread) {
  std::thread::id setup_thread, job_thread;
  CommThread thread([&] { setup_thread = std::this_thread::get_id(); });
  thread.Run([&] { job_thread = std::this_thread::get_id(); });
  EXPECT_EQ(setup_thread, job_thread);
}

}  // namespace caffe
