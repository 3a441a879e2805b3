// CommThread: one background thread that runs communication jobs in the order they were
// submitted. DDL makes every MPI call of training on it, so gradient buckets are reduced while
// backward goes on (overlap), and the training thread never blocks inside MPI: while it waits it
// keeps checking a health probe (the heartbeat), and a peer that died turns into an exception on
// the training thread instead of a hang.
#ifndef CAFFE_PARALLEL_COMM_THREAD_HPP_
#define CAFFE_PARALLEL_COMM_THREAD_HPP_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace caffe {

/// Runs submitted jobs one after another on its own thread.
class CommThread {
 public:
  using Job = std::function<void()>;
  /// Called every poll interval while waiting; throws to give up the wait.
  using Probe = std::function<void()>;

  /// `setup` runs first on the new thread (e.g. to select the CUDA device).
  explicit CommThread(Job setup = {});
  /// Runs the remaining jobs and joins. (A thread stuck in a collective whose peer died never
  /// returns: its owner must not destroy it then, but let the process end.)
  ~CommThread();

  /// Queues `job`; returns its ticket (1, 2, ...).
  uint64_t Submit(Job job);
  /// Waits until job `ticket` and every job before it have run. Rethrows the first exception a
  /// job threw (jobs after a failed one are skipped: a broken sequence of collectives cannot go
  /// on). While waiting, calls `probe` every `poll_ms` milliseconds.
  void Wait(uint64_t ticket, const Probe& probe = {}, int poll_ms = 50);
  /// Submit + Wait.
  void Run(Job job, const Probe& probe = {}) { Wait(Submit(std::move(job)), probe); }
  /// Waits for every job submitted so far.
  void WaitAll(const Probe& probe = {}) { Wait(submitted_, probe); }
  uint64_t submitted() const { return submitted_; }

 private:
  void Loop();

  std::mutex mutex_;
  std::condition_variable work_, done_;
  std::deque<std::pair<uint64_t, Job>> queue_;
  uint64_t submitted_ = 0;
  uint64_t finished_ = 0;
  std::exception_ptr error_;
  bool stopping_ = false;
  Job setup_;
  std::thread thread_;
};

}  // namespace caffe

#endif  // CAFFE_PARALLEL_COMM_THREAD_HPP_
