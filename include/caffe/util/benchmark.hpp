// Wall-clock timers for logging speed ("Iteration N (X iter/s ...)") and for `caffe time`, and
// MarkTimer, which times `caffe time`'s layers on the CPU or the GPU.
#ifndef CAFFE_UTIL_BENCHMARK_HPP_
#define CAFFE_UTIL_BENCHMARK_HPP_

#include <chrono>
#include <cstddef>
#include <vector>

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

/// Times a sequence of pieces of work, as `caffe time` does its layers: Start(), then Mark()
/// after each piece, then Finish(); Milliseconds(i, j) is the time from mark i to mark j (Start
/// is mark 0). On the CPU the marks are wall-clock times. In GPU mode (`gpu`) each mark is a CUDA
/// event recorded on the default stream, where every layer's work runs, so the times are the
/// GPU's and the host never waits between pieces (one layer's kernels run while the next one's
/// are launched, as in training); Finish waits for the GPU to pass the last mark.
class MarkTimer {
 public:
  explicit MarkTimer(bool gpu);
  ~MarkTimer();
  void Start();
  void Mark();
  void Finish();
  /// Marks made since Start, Start's included.
  size_t marks() const { return marks_; }
  /// Between marks `from` and `to` (from <= to < marks()); after Finish.
  double Milliseconds(size_t from, size_t to) const;

 private:
  using Clock = std::chrono::steady_clock;
  bool gpu_;
  bool finished_ = false;
  size_t marks_ = 0;
  std::vector<Clock::time_point> host_marks_;
  std::vector<void*> events_;  // cudaEvent_t, made as more marks are needed and kept for reuse
  MarkTimer(const MarkTimer&) = delete;
  MarkTimer& operator=(const MarkTimer&) = delete;
};

}  // namespace caffe

#endif  // CAFFE_UTIL_BENCHMARK_HPP_
