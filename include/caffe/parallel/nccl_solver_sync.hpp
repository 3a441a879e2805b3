// NcclSolverSync: BVLC's caffe.NCCL for pycaffe. One solver per process, each on its own GPU,
// kept in step over an NCCL communicator made from a unique id the processes share (BVLC's
// python/train.py makes it with NCCL.new_uid() and hands it to the processes it starts). The
// processes set Caffe::set_solver_count(N), set_solver_rank(r) and set_multiprocess(true) before
// building their solvers, so that TRAIN data layers read their share; Broadcast() gives every
// solver rank 0's weights; the gradients (one GradientBuffer on the device, a bucket per param)
// are summed by an NcclCommunicator and scaled by 1/N before each update, so N solvers at batch
// B take the step of one at batch N x B. Registered as the net's after-backward
// callback too (BVLC's layer_wise_reduce), it reduces each layer's gradients on its own stream
// as soon as backward has produced them, while backward goes on. In builds without NCCL (or
// without a GPU) the constructor and NewUid throw a caffe::Error saying so.
#ifndef CAFFE_PARALLEL_NCCL_SOLVER_SYNC_HPP_
#define CAFFE_PARALLEL_NCCL_SOLVER_SYNC_HPP_

#include <memory>
#include <string>
#include <vector>

#include "caffe/net.hpp"
#include "caffe/parallel/gradient_buffer.hpp"
#include "caffe/solver.hpp"

namespace caffe {

/// Whether this build can run NcclSolverSync (a GPU build with NCCL).
bool NcclSolverSyncBuilt();

template <typename Dtype>
class NcclSolverSync : public Solver<Dtype>::Callback, public Net<Dtype>::Callback {
 public:
  /// A new unique id (ncclGetUniqueId's bytes), for the processes of one group.
  static std::string NewUid();
  /// Collective over the Caffe::solver_count() processes that pass the same `uid`: this one is
  /// rank Caffe::solver_rank(), on the current GPU. `solver` (GPU mode) must outlive this object;
  /// its gradients move into this object's buffer.
  NcclSolverSync(Solver<Dtype>* solver, const std::string& uid);
  ~NcclSolverSync() override;

  /// Collective: every solver's learnable params take rank 0's values.
  void Broadcast();
  void on_start() override;
  /// Collective: the gradients become their mean over the solvers (those not reduced yet are
  /// reduced now).
  void on_gradients_ready() override;
  /// As the net's after-backward callback: reduces the gradients layer `layer` completed (in
  /// the last of iter_size passes).
  void run(int layer) override;

  int rank() const { return rank_; }
  int size() const { return size_; }
  Solver<Dtype>* solver() const { return solver_; }

 private:
  struct Comm;
  /// Starts the allreduce of buckets [next_, end) on the NCCL stream, after the compute issued
  /// so far.
  void Launch(size_t end);

  Solver<Dtype>* solver_;
  int rank_ = 0, size_ = 1;
  size_t next_ = 0;  // the first bucket not reduced yet this iteration
  int pass_ = 0;     // of iter_size, this iteration
  std::unique_ptr<Comm> comm_;
  std::unique_ptr<GradientBuffer<Dtype>> gradients_;
};

}  // namespace caffe

#endif  // CAFFE_PARALLEL_NCCL_SOLVER_SYNC_HPP_
