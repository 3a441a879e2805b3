// NCCL on GPU learners (GPU builds with NCCL only), in one process or across processes: one
// member per GPU, each using its own CUDA stream on the device current when it was made. The
// members are made together from one unique id (each process makes its own, given the id and its
// rank: pycaffe's caffe.NCCL, DDL after sharing the id over MPI: parallel/mpi_nccl.hpp), or all
// at once by one thread for the solver threads of a process (ForDevices). Equal blocks use
// ncclReduceScatter / ncclAllGather in place; unequal ones a group of ncclReduce / ncclBroadcast
// calls (one root per block). Buffers are device memory. While waiting, NCCL's asynchronous
// errors are polled, so a failed peer becomes a CommError.
#ifndef CAFFE_PARALLEL_NCCL_COMMUNICATOR_HPP_
#define CAFFE_PARALLEL_NCCL_COMMUNICATOR_HPP_

#include <cuda_runtime.h>
#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

#include "caffe/parallel/communicator.hpp"

namespace caffe {

/// NCCL collectives over a group of GPU members (device buffers).
template <typename Dtype>
class NcclCommunicator : public TwoPhaseCommunicator<Dtype> {
 public:
  /// A new unique id (ncclGetUniqueId's bytes), for the members of one group.
  static std::string NewUid();
  /// Collective over the `size` members that pass the same `uid`: this one is `rank`, on the
  /// current CUDA device. `where` names this member in errors ("rank 1 on host a").
  NcclCommunicator(const std::string& uid, int rank, int size, std::string where);
  /// One member per device of `devices` (distinct GPUs), made together by the calling thread;
  /// member i belongs to the thread that runs on devices[i].
  static std::vector<std::unique_ptr<NcclCommunicator>> ForDevices(const std::vector<int>& devices);
  ~NcclCommunicator() override;

  std::string name() const override { return "nccl"; }
  bool on_device() const override { return true; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void Allreduce(Dtype* buffer, size_t count) override;
  void ReduceScatter(Dtype* buffer, const Blocks& blocks) override;
  void Allgather(Dtype* buffer, const Blocks& blocks) override;
  /// Starts summing buffer[0, count) over the members in place, after the compute the calling
  /// thread issued so far on the default stream, and returns at once (layer-wise reduction while
  /// backward goes on); Synchronize waits for it.
  void AllreduceAfterCompute(Dtype* buffer, size_t count);
  /// Every member: rank 0's buffer[0, count) (in place), after the calling thread's compute.
  void Broadcast(Dtype* buffer, size_t count);
  /// Waits for the collectives issued so far, polling NCCL's asynchronous error state.
  void Synchronize();

 private:
  // Takes `comm`, made for `rank` of `size`, with a stream on the current device.
  NcclCommunicator(ncclComm_t comm, int rank, int size, std::string where);

  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t compute_done_ = nullptr;  // recorded on the default stream before a launch
  int rank_, size_;
  std::string where_;
};

}  // namespace caffe

#endif  // CAFFE_PARALLEL_NCCL_COMMUNICATOR_HPP_
