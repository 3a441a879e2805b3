#include "caffe/parallel/comm_thread.hpp"

#include <chrono>

#include "caffe/timeline/timeline.hpp"

namespace caffe {

CommThread::CommThread(Job setup) : setup_(std::move(setup)) {
  thread_ = std::thread(&CommThread::Loop, this);
}

CommThread::~CommThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CommThread::Loop() {
  timeline::NameThread("communication");
  if (setup_) {
    try {
      setup_();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::current_exception();
    }
  }
  while (true) {
    std::pair<uint64_t, Job> item;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left to run
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    std::exception_ptr error;
    bool skip;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      skip = error_ != nullptr;
    }
    if (!skip) {
      try {
        item.second();
      } catch (...) {
        error = std::current_exception();
      }
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (error && !error_) error_ = error;
      finished_ = item.first;
    }
    done_.notify_all();
  }
}

uint64_t CommThread::Submit(Job job) {
  uint64_t ticket;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ticket = ++submitted_;
    queue_.emplace_back(ticket, std::move(job));
  }
  work_.notify_one();
  return ticket;
}

void CommThread::Wait(uint64_t ticket, const Probe& probe, int poll_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (finished_ < ticket && !error_) {
    done_.wait_for(lock, std::chrono::milliseconds(poll_ms));
    if (probe && finished_ < ticket && !error_) {
      lock.unlock();
      probe();  // may throw: the wait is given up
      lock.lock();
    }
  }
  if (error_) std::rethrow_exception(error_);
}

}  // namespace caffe
