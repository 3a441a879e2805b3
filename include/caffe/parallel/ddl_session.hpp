// DdlSession: one learner's membership in a DDL job (`mpirun ... caffe train -ddl "..."`). It
// starts MPI with MPI_THREAD_MULTIPLE, checks that -mode's topology covers exactly the processes
// mpirun started, learns every learner's host and this learner's rank on its node (for -gpu 0 =
// "my GPU"), and runs the communication thread (every MPI call of training) and the heartbeat
// (failure detection; see heartbeat.hpp). Finish() ends the job cleanly on every learner
// together; after a failure the caller reports it and calls AbortJob(). Besides training
// (DdlSync), it broadcasts and sums host arrays for its callers (pycaffe's caffe.ddl).
#ifndef CAFFE_PARALLEL_DDL_SESSION_HPP_
#define CAFFE_PARALLEL_DDL_SESSION_HPP_

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "caffe/parallel/comm_thread.hpp"
#include "caffe/parallel/ddl_options.hpp"
#include "caffe/parallel/heartbeat.hpp"

namespace caffe {

template <typename Dtype>
class HierarchicalCommunicator;

/// This process's part in a DDL job (see the file comment).
class DdlSession {
 public:
  /// Collective over MPI_COMM_WORLD. Starts MPI unless it runs already. When the topology does
  /// not match the number of processes, every learner finalizes MPI and throws caffe::Error
  /// "invalid dim size=A usr_size=B dim[0]=.. dim[1]=.. dim[2]=..". `comm_setup` runs first on
  /// the communication thread (GPU learners select their device there).
  explicit DdlSession(const DdlOptions& options, CommThread::Job comm_setup = {});
  /// After Finish(), nothing is left to do. Otherwise, when an exception is unwinding the stack
  /// (a failure), MPI is left running and the threads are let go, since a collective may never
  /// return; the caller reports the error and calls AbortJob(). Without an exception, Finish().
  ~DdlSession();
  /// Clean end: waits for every learner, stops the heartbeat and the communication thread, and
  /// finalizes MPI if this session started it and `finalize_mpi`. Collective. A job that mpirun
  /// is ending (it sent SIGTERM) must not finalize: mpirun no longer answers MPI_Finalize, which
  /// would wait for its SIGKILL.
  void Finish(bool finalize_mpi = true);

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// This learner's index among the learners on its node, and their number.
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  const std::vector<std::string>& hosts() const { return hosts_; }
  const std::string& host() const { return hosts_[rank_]; }
  /// Every learner's process id on its host.
  const std::vector<int>& pids() const { return pids_; }
  const DdlTopology& topology() const { return topology_; }
  const DdlOptions& options() const { return options_; }
  /// A duplicate of MPI_COMM_WORLD for control messages (losses, timings): use it only from the
  /// communication thread.
  MPI_Comm control() const { return control_; }

  /// Collective, before training: runs `step` on rank 0 and returns its result on every learner.
  /// When it throws caffe::Error, every learner ends MPI cleanly (Finish) and throws the same
  /// error, so that the job ends with rank 0's one line rather than an MPI_Abort (a lock on the
  /// snapshot prefix held by another run, a snapshot to resume that is not there).
  std::string FromRoot(const std::function<std::string()>& step);
  /// This thread's Caffe context becomes solver rank() of size(), in several processes, as
  /// `caffe train -ddl` sets it up before making the solver (its data layers then read this
  /// learner's share); unless -dbg_level >= 1, learners other than rank 0 log warnings only.
  void JoinAsSolver() const;
  /// Collective: the CUDA device this learner trains on for `-gpu requested` (ChooseLearnerGpu
  /// with this learner's place and the scheduler's variables); warns when two learners of one
  /// host were given the same GPU. Throws caffe::Error in a build without GPU support.
  int ChooseGpu(int requested);

  /// Collective: data[0, count) becomes learner `root`'s values on every learner.
  template <typename Dtype>
  void Broadcast(Dtype* data, size_t count, int root);
  /// Collective: data[0, count) becomes the element-wise sum over the learners, bitwise the same
  /// on each, by the allreduce -mode asks for, in full precision (-compress is for gradients:
  /// a user's arrays, counts and flags are summed exactly as sent). The first call for a Dtype
  /// builds it (modes b and p time their candidates then, on a -bucket_kb buffer).
  template <typename Dtype>
  void Allreduce(Dtype* data, size_t count);
  /// Collective: every learner's `value`, by rank.
  std::vector<int64_t> Allgather(int64_t value);

  /// Throws CommError when the heartbeat has found a learner dead or hung.
  void CheckHealth() const;
  /// Queues `job` on the communication thread. Throws caffe::Error after Finish().
  uint64_t Submit(CommThread::Job job);
  /// Waits for a queued job (and all before it), checking health meanwhile; rethrows its error.
  void Wait(uint64_t ticket);
  void WaitAll();
  /// Submit + Wait.
  void Run(CommThread::Job job) { Wait(Submit(std::move(job))); }
  /// For tests: make this learner's heartbeat fall silent, as if the process hung.
  void PauseHeartbeat() { heartbeat_->Pause(); }

  /// Whether MPI has been initialised and not finalized in this process.
  static bool MpiRunning();
  /// Ends every learner of the job: MPI_Abort(MPI_COMM_WORLD, code).
  [[noreturn]] static void AbortJob(int code);

 private:
  DdlOptions options_;
  DdlTopology topology_;
  bool initialized_mpi_ = false;
  bool finished_ = false;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::vector<std::string> hosts_;
  std::vector<int> pids_;
  MPI_Comm control_ = MPI_COMM_NULL;
  std::unique_ptr<Heartbeat> heartbeat_;
  std::unique_ptr<CommThread> comm_thread_;
  // Allreduce's communicators, built at its first call per type.
  std::unique_ptr<HierarchicalCommunicator<float>> float_comm_;
  std::unique_ptr<HierarchicalCommunicator<double>> double_comm_;

  template <typename Dtype>
  std::unique_ptr<HierarchicalCommunicator<Dtype>>& ArrayCommunicator();

  DdlSession(const DdlSession&) = delete;
  DdlSession& operator=(const DdlSession&) = delete;
};

}  // namespace caffe

#endif  // CAFFE_PARALLEL_DDL_SESSION_HPP_
