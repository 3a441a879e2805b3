// A thread-safe FIFO queue whose waiting pops can be interrupted. The data layers hand batches
// between the net's thread and their prefetch thread through two of these (free and full); the
// interruption is how a thread blocked on an empty queue is told to stop (shutdown, resume, error).
#ifndef CAFFE_UTIL_BLOCKING_QUEUE_HPP_
#define CAFFE_UTIL_BLOCKING_QUEUE_HPP_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>

#include "caffe/common.hpp"

namespace caffe {

/// FIFO queue shared by threads. pop() waits for an element; Interrupt() makes every current and
/// future waiting pop return false until ClearInterrupt(), so a consumer can be released without
/// a sentinel value.
template <typename T>
class BlockingQueue {
 public:
  BlockingQueue() = default;

  void push(const T& value) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(value);
    }
    condition_.notify_one();
  }

  /// Takes the front element without waiting; false when the queue is empty.
  bool try_pop(T* value) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queue_.empty()) return false;
    *value = queue_.front();
    queue_.pop_front();
    return true;
  }

  /// Waits for an element and takes it; returns false (taking nothing) once interrupted.
  /// `wait_message`, if not empty, is logged at VLOG(1) when the call has to wait.
  bool pop(T* value, const std::string& wait_message = "") {
    std::unique_lock<std::mutex> lock(mutex_);
    if (queue_.empty() && !interrupted_ && !wait_message.empty()) VLOG(1) << wait_message;
    condition_.wait(lock, [this] { return interrupted_ || !queue_.empty(); });
    if (interrupted_) return false;
    *value = queue_.front();
    queue_.pop_front();
    return true;
  }

  /// Releases every waiting pop (they return false) and keeps releasing new ones.
  void Interrupt() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      interrupted_ = true;
    }
    condition_.notify_all();
  }
  void ClearInterrupt() {
    std::lock_guard<std::mutex> lock(mutex_);
    interrupted_ = false;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return queue_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable condition_;
  std::deque<T> queue_;
  bool interrupted_ = false;

  DISABLE_COPY_AND_ASSIGN(BlockingQueue);
};

}  // namespace caffe

#endif  // CAFFE_UTIL_BLOCKING_QUEUE_HPP_
