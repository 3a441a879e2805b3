#include "caffe/util/benchmark.hpp"

namespace caffe {

void Timer::Start() {
  start_ = Clock::now();
  running_ = true;
  has_run_at_least_once_ = true;
}

void Timer::Stop() {
  if (running_) {
    stop_ = Clock::now();
    running_ = false;
  }
}

double Timer::MicroSeconds() {
  if (!has_run_at_least_once_) return 0;
  Clock::time_point end = running_ ? Clock::now() : stop_;
  return std::chrono::duration<double, std::micro>(end - start_).count();
}

double Timer::MilliSeconds() { return MicroSeconds() / 1000.0; }

double Timer::Seconds() { return MicroSeconds() / 1e6; }

}  // namespace caffe
