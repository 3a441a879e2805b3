// NCCL on GPU learners (GPU builds with NCCL only). The NCCL communicator is created from a unique
// id that member 0 makes and broadcasts over the group's MPI communicator; each member uses its
// current CUDA device. Equal blocks use ncclReduceScatter / ncclAllGather in place; unequal ones a
// group of ncclReduce / ncclBroadcast calls (one root per block). Buffers are device memory. While
// waiting, NCCL's asynchronous errors are polled, so a failed peer becomes a CommError.
#ifndef CAFFE_PARALLEL_NCCL_COMMUNICATOR_HPP_
#define CAFFE_PARALLEL_NCCL_COMMUNICATOR_HPP_

#include <cuda_runtime.h>
#include <nccl.h>

#include <memory>
#include <string>

#include "caffe/parallel/communicator.hpp"

namespace caffe {

/// Collective over `group`: whether every member's current CUDA device is a different GPU (by
/// its UUID). NCCL refuses two members on one GPU; such a group reduces with another algorithm.
/// When some share, `shared` (if given) names the first two members that do and their GPU.
bool NcclGroupHasDistinctGpus(const MpiGroup& group, std::string* shared = nullptr);

/// NCCL collectives over a group of GPU learners (device buffers).
template <typename Dtype>
class NcclCommunicator : public TwoPhaseCommunicator<Dtype> {
 public:
  /// Collective over `group`.
  explicit NcclCommunicator(std::shared_ptr<MpiGroup> group);
  ~NcclCommunicator() override;
  std::string name() const override { return "nccl"; }
  bool on_device() const override { return true; }
  void Allreduce(Dtype* buffer, size_t count) override;
  void ReduceScatter(Dtype* buffer, const Blocks& blocks) override;
  void Allgather(Dtype* buffer, const Blocks& blocks) override;

 private:
  /// Waits for the stream, polling NCCL's asynchronous error state.
  void Synchronize();

  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

}  // namespace caffe

#endif  // CAFFE_PARALLEL_NCCL_COMMUNICATOR_HPP_
