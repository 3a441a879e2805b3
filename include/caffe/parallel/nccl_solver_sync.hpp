// NcclSolverSync: BVLC's caffe.NCCL for pycaffe. One solver per process, each on its own GPU,
// kept in step over an NCCL communicator made from a unique id the processes share (BVLC's
// python/train.py makes it with NCCL.new_uid() and hands it to the processes it starts). The
// processes set Caffe::set_solver_count(N), set_solver_rank(r) and set_multiprocess(true) before
// building their solvers, so that TRAIN data layers read their share; Broadcast() gives every
// solver rank 0's weights; after each backward the gradients (moved into one device buffer) are
// summed with ncclAllReduce and scaled by 1/N, so N solvers at batch B take the step of one at
// batch N x B. In builds without NCCL (or without a GPU) the constructor and NewUid throw a
// caffe::Error saying so.
#ifndef CAFFE_PARALLEL_NCCL_SOLVER_SYNC_HPP_
#define CAFFE_PARALLEL_NCCL_SOLVER_SYNC_HPP_

#include <memory>
#include <string>

#include "caffe/parallel/device_buffer.hpp"
#include "caffe/solver.hpp"

namespace caffe {

/// Whether this build can run NcclSolverSync (a GPU build with NCCL).
bool NcclSolverSyncBuilt();

template <typename Dtype>
class NcclSolverSync : public Solver<Dtype>::Callback {
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
  void on_start() override {}
  /// Collective: the gradients become their mean over the solvers.
  void on_gradients_ready() override;

  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  struct Comm;
  Solver<Dtype>* solver_;
  int rank_ = 0, size_ = 1;
  size_t count_ = 0;  // gradient values
  std::unique_ptr<DeviceBuffer<Dtype>> gradients_;
  std::unique_ptr<Comm> comm_;
};

}  // namespace caffe

#endif  // CAFFE_PARALLEL_NCCL_SOLVER_SYNC_HPP_
