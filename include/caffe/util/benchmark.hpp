// Wall-clock timers for logging speed ("Iteration N (X iter/s ...)") and for `caffe time`.
#ifndef CAFFE_UTIL_BENCHMARK_HPP_
#define CAFFE_UTIL_BENCHMARK_HPP_

#include <chrono>

namespace caffe {

/// Measures the time between Start() and Stop() (or now, while running).
class Timer {
 public:
  Timer() = default;
  void Start();
  void Stop();
  double MilliSeconds();
  double MicroSeconds();
  double Seconds();
  bool running() const { return running_; }
  bool has_run_at_least_once() const { return has_run_at_least_once_; }

 private:
  using Clock = std::chrono::steady_clock;
  bool running_ = false;
  bool has_run_at_least_once_ = false;
  Clock::time_point start_;
  Clock::time_point stop_;
};

}  // namespace caffe

#endif  // CAFFE_UTIL_BENCHMARK_HPP_
