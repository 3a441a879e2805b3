// Timer: zero before the first Start, the time between Start and Stop afterwards (frozen once
// stopped, growing while running), the three units consistent, and a restart measuring afresh.
// MarkTimer: the time between marks on the CPU and, where there is a GPU, on the GPU's stream.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "caffe/common.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/memory/syncedmem.hpp"
#include "caffe/util/benchmark.hpp"

namespace caffe {

namespace {
void SleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }
}  // namespace

TEST(TimerTest, ReadsZeroBeforeTheFirstStart) {
  Timer timer;
  EXPECT_FALSE(timer.running());
  EXPECT_FALSE(timer.has_run_at_least_once());
  EXPECT_EQ(timer.MicroSeconds(), 0);
  timer.Stop();  // stopping a timer that never ran changes nothing
  EXPECT_FALSE(timer.has_run_at_least_once());
  EXPECT_EQ(timer.Seconds(), 0);
}

TEST(TimerTest, MeasuresTheTimeBetweenStartAndStop) {
  Timer timer;
  timer.Start();
  EXPECT_TRUE(timer.running());
  EXPECT_TRUE(timer.has_run_at_least_once());
  SleepMs(30);
  timer.Stop();
  EXPECT_FALSE(timer.running());
  const double ms = timer.MilliSeconds();
  EXPECT_GE(ms, 30);
  EXPECT_LT(ms, 3000);  // generous: a loaded machine may oversleep, never undersleep
  // Stopped: the reading no longer changes.
  SleepMs(15);
  EXPECT_EQ(timer.MilliSeconds(), ms);
}

TEST(TimerTest, UnitsAgree) {
  Timer timer;
  timer.Start();
  SleepMs(5);
  timer.Stop();
  const double us = timer.MicroSeconds();
  EXPECT_DOUBLE_EQ(timer.MilliSeconds(), us / 1000);
  EXPECT_DOUBLE_EQ(timer.Seconds(), us / 1e6);
}

TEST(TimerTest, ReadingWhileRunningGrows) {
  Timer timer;
  timer.Start();
  const double first = timer.MicroSeconds();
  SleepMs(10);
  const double second = timer.MicroSeconds();
  EXPECT_GE(second - first, 10000);
  EXPECT_TRUE(timer.running());
}

TEST(TimerTest, RestartMeasuresOnlyTheNewInterval) {
  Timer timer;
  timer.Start();
  SleepMs(60);
  timer.Stop();
  EXPECT_GE(timer.MilliSeconds(), 60);
  timer.Start();
  timer.Stop();
  EXPECT_LT(timer.MilliSeconds(), 60);
  EXPECT_GE(timer.MilliSeconds(), 0);
  // A second Stop keeps the first stop time.
  const double stopped = timer.MicroSeconds();
  SleepMs(5);
  timer.Stop();
  EXPECT_EQ(timer.MicroSeconds(), stopped);
}

TEST(MarkTimerTest, OnTheCpuMarksAreWallClockTimes) {
  MarkTimer marks(/*gpu=*/false);
  for (int round = 0; round < 2; ++round) {  // a second Start measures afresh
    marks.Start();
    SleepMs(20);
    marks.Mark();
    SleepMs(10);
    marks.Mark();
    marks.Finish();
    ASSERT_EQ(marks.marks(), 3u);
    EXPECT_GE(marks.Milliseconds(0, 1), 20);
    EXPECT_GE(marks.Milliseconds(1, 2), 10);
    EXPECT_LT(marks.Milliseconds(0, 2), 3000);
    EXPECT_DOUBLE_EQ(marks.Milliseconds(0, 2), marks.Milliseconds(0, 1) + marks.Milliseconds(1, 2));
    EXPECT_EQ(marks.Milliseconds(1, 1), 0);
  }
}

// In GPU mode the marks are events on the default stream: the time between two marks is the GPU
// work issued between them, and the host goes on without waiting until Finish.
TEST(MarkTimerTest, OnTheGpuMarksTimeTheWorkBetweenThem) {
  if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
#ifndef CPU_ONLY
  Caffe::SetDevice(0);
  const int count = 1 << 22;
  SyncedMemory memory(count * sizeof(float));
  float* data = static_cast<float*>(memory.mutable_gpu_data());
  MarkTimer marks(/*gpu=*/true);
  for (int round = 0; round < 2; ++round) {  // the events are reused
    marks.Start();
    for (int i = 0; i < 20; ++i) caffe_gpu_set(count, 1.0f + i, data);
    marks.Mark();
    marks.Mark();  // nothing in between
    marks.Finish();
    ASSERT_EQ(marks.marks(), 3u);
    EXPECT_GT(marks.Milliseconds(0, 1), 0);
    EXPECT_GE(marks.Milliseconds(1, 2), 0);
    EXPECT_LT(marks.Milliseconds(1, 2), marks.Milliseconds(0, 1));
    EXPECT_NEAR(marks.Milliseconds(0, 2), marks.Milliseconds(0, 1) + marks.Milliseconds(1, 2),
                1e-3);
  }
  EXPECT_EQ(static_cast<const float*>(memory.cpu_data())[count - 1], 20.0f);
#endif
}

}  // namespace caffe
