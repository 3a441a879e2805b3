// Timer: zero before the first Start, the time between Start and Stop afterwards (frozen once
// stopped, growing while running), the three units consistent, and a restart measuring afresh.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

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

}  // namespace caffe
