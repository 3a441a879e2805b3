// A reusable barrier for the solver threads of one process that can be abandoned: after Abort()
// every waiting and every later Wait() throws BarrierAborted. A failure on one thread aborts it,
// so no thread is left waiting for a solver that left.
#ifndef CAFFE_PARALLEL_THREAD_BARRIER_HPP_
#define CAFFE_PARALLEL_THREAD_BARRIER_HPP_

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace caffe {

/// Thrown out of ThreadBarrier::Wait once the barrier was abandoned: it unwinds a solver's step
/// without being a failure of that thread's own.
struct BarrierAborted {};

class ThreadBarrier {
 public:
  explicit ThreadBarrier(int parties) : parties_(parties) {}

  /// Returns once all parties have called Wait (this round); throws BarrierAborted after Abort.
  void Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (aborted_) throw BarrierAborted();
    const uint64_t generation = generation_;
    if (++arrived_ == parties_) {
      arrived_ = 0;
      ++generation_;
      released_.notify_all();
      return;
    }
    released_.wait(lock, [&] { return generation_ != generation || aborted_; });
    if (generation_ == generation) throw BarrierAborted();  // abandoned while waiting
  }

  void Abort() {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_ = true;
    released_.notify_all();
  }

  int parties() const { return parties_; }

 private:
  const int parties_;
  std::mutex mutex_;
  std::condition_variable released_;
  int arrived_ = 0;
  uint64_t generation_ = 0;
  bool aborted_ = false;
};

}  // namespace caffe

#endif  // CAFFE_PARALLEL_THREAD_BARRIER_HPP_
