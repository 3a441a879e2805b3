// The allreduce of the solver threads of one process (`caffe train -gpu 0,1` without NCCL, CPU
// mode, the same GPU listed twice): every member's buffer is in host memory all members can read.
// Between two barriers each member adds up, in rank order, its slice (1/P of the buffer) of every
// member's buffer and writes the sum back into all of them. Each element is summed once, in the
// same order everywhere, so every member ends with bitwise the same values. Device buffers are
// staged through a host copy. Cost: each member reads (P-1)/P n and writes (P-1)/P n elements of
// host memory; two barriers; no copies but the staging.
#ifndef CAFFE_PARALLEL_SHARED_MEMORY_COMMUNICATOR_HPP_
#define CAFFE_PARALLEL_SHARED_MEMORY_COMMUNICATOR_HPP_

#include <memory>
#include <string>
#include <vector>

#include "caffe/parallel/communicator.hpp"
#include "caffe/parallel/thread_barrier.hpp"

namespace caffe {

/// What the members of one group share: the barrier and where each member's buffer is.
template <typename Dtype>
class SharedMemoryGroup {
 public:
  /// `barrier`: the group's threads', for `barrier->parties()` members (the caller may use it
  /// for its own synchronisation too; aborting it releases the group).
  explicit SharedMemoryGroup(std::shared_ptr<ThreadBarrier> barrier)
      : barrier_(std::move(barrier)), buffers_(barrier_->parties(), nullptr) {}
  ThreadBarrier& barrier() { return *barrier_; }
  int size() const { return static_cast<int>(buffers_.size()); }

 private:
  template <typename>
  friend class SharedMemoryCommunicator;
  std::shared_ptr<ThreadBarrier> barrier_;
  std::vector<Dtype*> buffers_;  // by rank; each written by its member before the first barrier
};

/// One member (thread) of a SharedMemoryGroup.
template <typename Dtype>
class SharedMemoryCommunicator : public Communicator<Dtype> {
 public:
  /// `device_buffers`: Allreduce gets device memory (GPU solvers), staged through host memory.
  SharedMemoryCommunicator(std::shared_ptr<SharedMemoryGroup<Dtype>> group, int rank,
                           bool device_buffers = false);
  std::string name() const override { return "shared memory"; }
  /// Collective: every member calls it with a buffer of the same `count`.
  void Allreduce(Dtype* buffer, size_t count) override;
  bool on_device() const override { return device_buffers_; }
  int rank() const override { return rank_; }
  int size() const override { return group_->size(); }

 private:
  std::shared_ptr<SharedMemoryGroup<Dtype>> group_;
  int rank_;
  bool device_buffers_;
  std::vector<Dtype> host_;  // the staging of a device buffer
};

}  // namespace caffe

#endif  // CAFFE_PARALLEL_SHARED_MEMORY_COMMUNICATOR_HPP_
