// InProcessSync: BVLC-style data-parallel training in one process (`caffe train -gpu 0,1`, or
// `-gpu all`). One solver per device, each on its own thread: the caller's solver is rank 0 and
// runs on the calling thread; Run() starts ranks 1..N-1, each building its own solver from the
// root's SolverParameter on its own device (in CPU mode, N solver threads on the CPU). Every
// solver starts from the root's weights (copied before the first iteration, so after the root
// restored a snapshot or loaded -weights) and its Data layer reads its own share of the records
// (rank r: stream positions r, r+N, r+2N, ...). After each backward the N solvers' gradients are
// summed and scaled by 1/N, so N solvers at batch B take the step of one solver at batch N x B
// (BVLC's "effective batch = N x batch_size") and all hold identical weights throughout.
//
// The sum: each solver's gradients are one GradientBuffer, summed by a communicator: NCCL's
// allreduce over distinct GPUs in builds with NCCL (NcclCommunicator), otherwise in host memory
// (SharedMemoryCommunicator: CPU mode, GPU builds without NCCL, the same GPU listed twice).
//
// Only the root logs progress, tests and snapshots; the loss and net outputs it shows are the
// averages over solvers. The root's stop/snapshot requests (signals) are read once per iteration
// and handed to every solver at the same iteration, so no thread waits for a solver that left. A
// failure on any thread ends every thread at its next synchronisation point and is rethrown by
// Run() on the caller's thread.
#ifndef CAFFE_PARALLEL_IN_PROCESS_SYNC_HPP_
#define CAFFE_PARALLEL_IN_PROCESS_SYNC_HPP_

#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "caffe/parallel/communicator.hpp"
#include "caffe/parallel/thread_barrier.hpp"
#include "caffe/solver.hpp"
#include "caffe/util/signal_handler.hpp"

namespace caffe {

/// N solvers on N threads of this process, kept in step (see the file comment). Must outlive
/// every use of the root solver: the root's gradients live in its buffer and it is one of the
/// root's callbacks.
template <typename Dtype>
class InProcessSync {
 public:
  /// `root_solver`: built on this thread after Caffe::set_solver_count(solver_count) with
  /// solver rank 0, so its data layers read rank 0's share. `devices`: in GPU mode one device id
  /// per solver (repeats allowed; devices[0] is the root's current device); empty in CPU mode.
  InProcessSync(Solver<Dtype>* root_solver, int solver_count, std::vector<int> devices = {});
  ~InProcessSync();

  /// Where the root's stop/snapshot requests come from (the signal handler's function); read
  /// once per iteration.
  void SetActionFunction(ActionCallback requests) { root_requests_ = std::move(requests); }
  /// Edits the SolverParameter of worker `rank` (1..N-1) before its solver is built, on the
  /// worker's thread; tests use it to make one worker fail.
  void SetWorkerParamEditor(std::function<void(int rank, SolverParameter* param)> editor) {
    worker_param_editor_ = std::move(editor);
  }
  /// What a worker sets up around its solver on its own thread (the tool: LMS on the worker's
  /// GPU). Made before the solver and destroyed after it; Ready runs once the solver's gradients
  /// have moved into the sync's buffer, before its first iteration.
  class WorkerSetup {
   public:
    virtual ~WorkerSetup() = default;
    virtual void Ready(Solver<Dtype>* solver) = 0;
  };
  /// Makes worker `rank`'s (1..N-1) setup, on the worker's thread. The root's is the caller's.
  void SetWorkerSetup(std::function<std::unique_ptr<WorkerSetup>(int rank)> factory) {
    worker_setup_ = std::move(factory);
  }

  /// Trains every solver to max_iter: the root through Solver::Solve (tests, snapshots, final
  /// lines), the workers by stepping. `resume_file` (a .solverstate) is restored by every solver.
  /// Returns once every thread has ended; rethrows the first failure (the root's own as it was, a
  /// worker's as a caffe::Error naming the worker). Runs once.
  void Run(const char* resume_file = nullptr);

  int solver_count() const { return count_; }
  /// How gradients are summed: "NCCL" or "shared memory".
  std::string allreduce_name() const;
  /// Gradient values per solver (the learnable params' sizes added up).
  size_t gradient_count() const { return gradient_count_; }
  /// After Run: solver `rank`'s iteration count and its learnable params' values back to back
  /// (-1 and empty where the solver did not finish).
  int final_iter(int rank) const { return final_iters_.at(rank); }
  const std::vector<Dtype>& final_weights(int rank) const { return final_weights_.at(rank); }

 private:
  class Member;

  /// A worker thread's body: its Caffe context, its solver, its steps.
  void WorkerMain(int rank, std::string resume_file);
  /// Keeps the first failure of `rank` and releases every thread from the barrier.
  void RecordFailure(int rank, std::exception_ptr failure);
  /// One communicator member per solver, before the workers start.
  void MakeCommunicators();
  std::string Describe(int rank) const;

  Solver<Dtype>* root_;
  int count_;
  std::vector<int> devices_;
  bool gpu_ = false;
  bool use_nccl_ = false;
  ActionCallback root_requests_;
  std::function<void(int, SolverParameter*)> worker_param_editor_;
  std::function<std::unique_ptr<WorkerSetup>(int)> worker_setup_;
  bool ran_ = false;

  std::shared_ptr<ThreadBarrier> barrier_;
  std::vector<std::unique_ptr<Communicator<Dtype>>> comms_;  // by rank
  std::unique_ptr<Member> root_member_;
  // Indexed by rank; each entry is written by its own thread before the first barrier and read
  // by the others only between barriers.
  std::vector<Member*> members_;
  std::vector<std::vector<double>> outputs_;  // each solver's loss and net outputs
  std::vector<Dtype> root_weights_;           // the root's weights, copied by every worker
  SolverAction::Enum requested_action_ = SolverAction::NONE;  // the root's, this iteration
  size_t gradient_count_ = 0;

  std::vector<int> final_iters_;
  std::vector<std::vector<Dtype>> final_weights_;

  std::mutex setup_mutex_;  // the workers build their solvers one at a time
  std::mutex failure_mutex_;
  std::vector<std::exception_ptr> failures_;  // by rank

  DISABLE_COPY_AND_ASSIGN(InProcessSync);
};

}  // namespace caffe

#endif  // CAFFE_PARALLEL_IN_PROCESS_SYNC_HPP_
