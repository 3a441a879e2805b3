#include "caffe/util/worker_pool.hpp"

namespace caffe {

WorkerPool::WorkerPool(int size) {
  CAFFE_CHECK(size >= 1) << "a worker pool needs at least 1 thread (asked for " << size << ")";
  for (int i = 1; i < size; ++i) helpers_.emplace_back(&WorkerPool::HelperLoop, this);
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    shutdown_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& helper : helpers_) helper.join();
}

void WorkerPool::Work() {
  while (true) {
    int item;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (next_item_ >= items_) return;
      item = next_item_++;
    }
    try {
      (*body_)(item);
    } catch (...) {
      // Each item owns its slot: no lock needed, and Run reads the slots after every worker
      // has left the loop (ordered by the mutex).
      errors_[item] = std::current_exception();
    }
  }
}

void WorkerPool::HelperLoop() {
  uint64_t seen = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      work_ready_.wait(lock, [&] { return shutdown_ || generation_ != seen; });
      if (shutdown_) return;
      seen = generation_;
    }
    Work();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--helpers_busy_ == 0) work_done_.notify_all();
    }
  }
}

void WorkerPool::Run(int n, const std::function<void(int)>& body) {
  if (n <= 0) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    CHECK(body_ == nullptr) << "WorkerPool::Run is not reentrant";
    body_ = &body;
    items_ = n;
    next_item_ = 0;
    errors_.assign(n, nullptr);
    helpers_busy_ = static_cast<int>(helpers_.size());
    ++generation_;
  }
  if (!helpers_.empty()) work_ready_.notify_all();
  Work();
  std::vector<std::exception_ptr> errors;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    work_done_.wait(lock, [&] { return helpers_busy_ == 0; });
    body_ = nullptr;
    items_ = 0;
    errors.swap(errors_);
  }
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace caffe
