// WorkerPool: every item runs exactly once for any pool size and item count, the threads really
// run at once, the pool is reusable, and errors come back as the lowest failing item's.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "caffe/test/test_caffe_main.hpp"
#include "caffe/util/worker_pool.hpp"

namespace caffe {
namespace {

TEST(WorkerPoolTest, RunsEveryItemExactlyOnce) {
  for (int size : {1, 2, 4}) {
    WorkerPool pool(size);
    EXPECT_EQ(pool.size(), size);
    for (int n : {0, 1, 7, 1000}) {
      std::vector<std::atomic<int>> calls(n);
      pool.Run(n, [&](int i) { calls[i]++; });
      for (int i = 0; i < n; ++i) ASSERT_EQ(calls[i].load(), 1) << "size " << size << " item " << i;
    }
  }
}

TEST(WorkerPoolTest, ThreadsRunAtTheSameTime) {
  // Three items that each wait for all three to have started finish only if three threads run
  // them together (a serial pool would time out and record it).
  WorkerPool pool(3);
  std::mutex mutex;
  std::condition_variable all_started;
  int started = 0;
  std::atomic<int> timed_out{0};
  pool.Run(3, [&](int) {
    std::unique_lock<std::mutex> lock(mutex);
    ++started;
    all_started.notify_all();
    if (!all_started.wait_for(lock, std::chrono::seconds(10), [&] { return started == 3; })) {
      ++timed_out;
    }
  });
  EXPECT_EQ(timed_out.load(), 0);
}

TEST(WorkerPoolTest, LowestFailingItemIsRethrownAfterAllItemsRan) {
  WorkerPool pool(3);
  std::atomic<int> ran{0};
  try {
    pool.Run(50, [&](int i) {
      ++ran;
      if (i == 17 || i == 31) throw Error("item " + std::to_string(i));
    });
    ADD_FAILURE() << "no exception";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "item 17");
  }
  EXPECT_EQ(ran.load(), 50);
  // Usable again afterwards.
  std::atomic<int> sum{0};
  pool.Run(10, [&](int i) { sum += i; });
  EXPECT_EQ(sum.load(), 45);
}

TEST(WorkerPoolTest, SizeBelowOneIsRefused) { EXPECT_THROW(WorkerPool pool(0), Error); }

}  // namespace
}  // namespace caffe
