#include "caffe/util/benchmark.hpp"

#include "caffe/common.hpp"

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

MarkTimer::MarkTimer(bool gpu) : gpu_(gpu) {
#ifdef CPU_ONLY
  if (gpu) NO_GPU;
#endif
}

MarkTimer::~MarkTimer() {
#ifndef CPU_ONLY
  // Destructors do not throw: a failure here only leaks an event.
  for (void* event : events_) cudaEventDestroy(static_cast<cudaEvent_t>(event));
#endif
}

void MarkTimer::Start() {
  marks_ = 0;
  finished_ = false;
  host_marks_.clear();
  Mark();
}

void MarkTimer::Mark() {
  CHECK(!finished_) << "MarkTimer::Mark after Finish; Start again first";
  if (!gpu_) {
    host_marks_.push_back(Clock::now());
    ++marks_;
    return;
  }
#ifndef CPU_ONLY
  if (marks_ == events_.size()) {
    cudaEvent_t event = nullptr;
    CUDA_CHECK(cudaEventCreate(&event));
    events_.push_back(event);
  }
  CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(events_[marks_]), nullptr));
  ++marks_;
#endif
}

void MarkTimer::Finish() {
  CHECK_GT(marks_, 0u) << "MarkTimer::Finish before Start";
#ifndef CPU_ONLY
  if (gpu_) CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(events_[marks_ - 1])));
#endif
  finished_ = true;
}

double MarkTimer::Milliseconds(size_t from, size_t to) const {
  CHECK(finished_) << "MarkTimer::Milliseconds before Finish";
  CHECK(from <= to && to < marks_)
      << "MarkTimer::Milliseconds(" << from << ", " << to << ") with " << marks_ << " marks";
  if (!gpu_) {
    return std::chrono::duration<double, std::milli>(host_marks_[to] - host_marks_[from]).count();
  }
  float ms = 0;
#ifndef CPU_ONLY
  CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(events_[from]),
                                  static_cast<cudaEvent_t>(events_[to])));
#endif
  return ms;
}

}  // namespace caffe
