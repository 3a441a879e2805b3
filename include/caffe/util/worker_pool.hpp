// A small fixed pool of threads for the data layers: a prefetch thread hands it the items of one
// batch (decode, resize, transform each record) and waits until all are done. The calling thread
// works too, so a pool of size 1 has no extra thread and runs everything on the caller.
#ifndef CAFFE_UTIL_WORKER_POOL_HPP_
#define CAFFE_UTIL_WORKER_POOL_HPP_

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "caffe/common.hpp"

namespace caffe {

/// Runs loops over [0, n) on `size` threads: the caller and size - 1 helpers that live as long as
/// the pool. Items are taken in increasing order by whichever thread is free, so the work is
/// balanced when items take different times (images of different sizes); a body must therefore
/// only write what belongs to its own item. One Run at a time (the pool is not reentrant).
class WorkerPool {
 public:
  /// `size` >= 1 threads in all, the caller included.
  explicit WorkerPool(int size);
  ~WorkerPool();

  int size() const { return static_cast<int>(helpers_.size()) + 1; }

  /// Calls body(i) for every i in [0, n) and returns when all calls have returned. If any call
  /// throws, the other items still run and the exception of the lowest such i is rethrown here.
  void Run(int n, const std::function<void(int)>& body);

 private:
  void HelperLoop();
  /// Takes and runs items of the current loop until none are left.
  void Work();

  std::vector<std::thread> helpers_;
  std::mutex mutex_;
  std::condition_variable work_ready_;  // a new loop started, or shutdown
  std::condition_variable work_done_;   // a helper left the current loop
  const std::function<void(int)>* body_ = nullptr;
  int items_ = 0;
  int next_item_ = 0;
  uint64_t generation_ = 0;  // counts loops, so a helper joins each loop once
  int helpers_busy_ = 0;
  bool shutdown_ = false;
  std::vector<std::exception_ptr> errors_;  // per item of the current loop

  DISABLE_COPY_AND_ASSIGN(WorkerPool);
};

}  // namespace caffe

#endif  // CAFFE_UTIL_WORKER_POOL_HPP_
