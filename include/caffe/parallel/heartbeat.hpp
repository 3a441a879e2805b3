// Heartbeat: how a DDL learner notices that another died or hangs. Learners form a ring by rank;
// each sends a small message to its right neighbour every period (from its own thread, so a
// learner busy computing or testing still beats) and watches for its left neighbour's. Silence
// longer than the timeout means the left neighbour is dead or stopped (killed, SIGSTOPped, its
// machine gone). The learner that notices records a failure naming the silent learner; the
// training thread, which polls failed() while it waits for communication, turns it into a
// CommError, and the caffe tool prints it and aborts the job (MPI_Abort), so every learner exits.
// If the training thread does not pick the failure up within the grace period (it is stuck in
// something else), the heartbeat thread prints the message and aborts the job itself.
#ifndef CAFFE_PARALLEL_HEARTBEAT_HPP_
#define CAFFE_PARALLEL_HEARTBEAT_HPP_

#include <mpi.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace caffe {

/// Ring heartbeat among all ranks of a communicator (see the file comment).
class Heartbeat {
 public:
  struct Settings {
    double period_s = 1;        // between two heartbeats
    double timeout_s = 30;      // silence after which the left neighbour counts as failed
    double abort_grace_s = 10;  // then MPI_Abort if the process still runs (0: never)
  };
  /// Collective over `comm` (duplicated inside). `places[r]`: where rank r runs, for messages
  /// ("host h, pid p": a user who finds a learner hung can look at it there).
  Heartbeat(MPI_Comm comm, const std::vector<std::string>& places, const Settings& settings);
  /// Stops the thread (not collective).
  ~Heartbeat();
  void Stop();

  bool failed() const { return failed_.load(); }
  /// The failure, as one line naming the silent learner and who noticed; empty if none.
  std::string failure() const;
  /// For tests: stop sending (as a hung process would), and start again.
  void Pause() { paused_ = true; }
  void Resume() { paused_ = false; }

 private:
  void Loop();

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  std::vector<std::string> places_;
  Settings settings_;
  std::atomic<bool> stop_{false}, paused_{false}, failed_{false};
  mutable std::mutex mutex_;
  std::string failure_;
  std::thread thread_;
};

}  // namespace caffe

#endif  // CAFFE_PARALLEL_HEARTBEAT_HPP_
