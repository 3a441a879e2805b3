// DdlSync: data-parallel training of one solver per learner over a DdlSession. All learners start
// from rank 0's weights (broadcast before the first iteration). The gradients (param diffs) live
// in one contiguous buffer cut into buckets in the order backward produces them; each bucket is
// reduced on the communication thread as soon as backward has passed the last layer that writes
// it, overlapping communication with the rest of backward (-bvlc: one bucket, reduced after
// backward). Before the update the sums are scaled by 1/N, so N learners at batch B take the same
// step as one learner at batch N x B. The displayed loss and net outputs are averages over
// learners; stop/snapshot requests (signals) are agreed on so every learner stops at the same
// iteration; rank 0 alone tests and snapshots. -dump_iter prints the communication breakdown,
// -rebind_iter watches for a persistently slow learner.
#ifndef CAFFE_PARALLEL_DDL_SYNC_HPP_
#define CAFFE_PARALLEL_DDL_SYNC_HPP_

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "caffe/net.hpp"
#include "caffe/parallel/ddl_session.hpp"
#include "caffe/parallel/gradient_buffer.hpp"
#include "caffe/parallel/hierarchical_communicator.hpp"
#include "caffe/solver.hpp"
#include "caffe/util/signal_handler.hpp"

namespace caffe {

/// Synchronous data-parallel training across the learners of a DdlSession (see the file
/// comment). Must outlive every use of the solver: the params' diffs live in its buffer.
template <typename Dtype>
class DdlSync : public Solver<Dtype>::Callback, public Net<Dtype>::Callback {
 public:
  /// A contiguous range of the gradient buffer, reduced by one allreduce.
  using Bucket = typename GradientBuffer<Dtype>::Bucket;

  /// Collective. Packs the solver's gradients into buckets, builds the communicator (timing
  /// candidates where the mode says so) and hooks into the solver and its train net.
  /// `local_actions`: this process's stop/snapshot requests (the signal handler's function).
  DdlSync(Solver<Dtype>* solver, DdlSession* session, ActionCallback local_actions = {});
  ~DdlSync() override = default;

  /// Trains to max_iter on every learner: rank 0 through Solver::Solve (tests, snapshots, final
  /// output), the others by stepping. `resume_file` (the same path on every learner) restores
  /// the solver state everywhere.
  void Solve(const char* resume_file = nullptr);

  const std::vector<Bucket>& buckets() const { return gradients_->buckets(); }
  const HierarchicalCommunicator<Dtype>& communicator() const { return *comm_; }
  /// Total gradient elements.
  size_t gradient_count() const { return gradients_->count(); }
  /// The last -rebind_iter finding (the same on every learner), and on the slow learner what it
  /// re-mapped; empty until a learner was the slowest in 3 checks in a row.
  const std::string& rebind_report() const { return rebind_report_; }

  void on_start() override;
  void on_loss_ready(Dtype* loss) override;
  void on_gradients_ready() override;
  /// After each layer's backward: launches the buckets that layer completed.
  void run(int layer) override;

 private:
  using Clock = std::chrono::steady_clock;
  void BroadcastWeights();
  void Launch(size_t bucket);
  /// The agreed request from the last iteration, handed to the solver once.
  SolverAction::Enum TakeAgreedAction();
  void Dump(int iteration);
  void CheckSpeed(int iteration);
  /// Widens a slow CPU learner's core binding; describes what it did.
  std::string Rebind();

  Solver<Dtype>* solver_;
  Net<Dtype>* net_;
  DdlSession* session_;
  ActionCallback local_actions_;
  SolverAction::Enum agreed_action_ = SolverAction::NONE;
  bool gpu_ = false;
  bool overlap_ = true;

  std::unique_ptr<GradientBuffer<Dtype>> gradients_;
  std::unique_ptr<HierarchicalCommunicator<Dtype>> comm_;

  // This iteration.
  bool weights_synced_ = false;
  int pass_ = 0;
  size_t next_bucket_ = 0;
  Clock::time_point iteration_start_, first_launch_;
  double compute_seconds_ = 0;
  double waited_seconds_ = 0;
  Clock::time_point last_done_;  // written by the communication thread
  std::vector<double> bucket_seconds_;

  // Since the last dump / speed check.
  int dump_iterations_ = 0;
  double dump_compute_ = 0, dump_end_to_end_ = 0, dump_waited_ = 0;
  int check_iterations_ = 0;
  double check_compute_ = 0;
  std::deque<int> slowest_history_;
  std::string rebind_report_;
};

/// Collective: every learner's `net` gets learner `root`'s values of its learnable params (what
/// DdlSync does before the first iteration). Returns the number of values broadcast.
template <typename Dtype>
size_t BroadcastParams(Net<Dtype>* net, DdlSession* session, int root = 0);

}  // namespace caffe

#endif  // CAFFE_PARALLEL_DDL_SYNC_HPP_
