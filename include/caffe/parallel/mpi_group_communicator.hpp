// The base of the communicators that move a buffer between the processes of one MPI group with
// MPI's own calls (ring, RCS, MPI's collectives): the group, and a segmented send-receive-add
// that the point-to-point algorithms share.
#ifndef CAFFE_PARALLEL_MPI_GROUP_COMMUNICATOR_HPP_
#define CAFFE_PARALLEL_MPI_GROUP_COMMUNICATOR_HPP_

#include <memory>
#include <vector>

#include "caffe/parallel/communicator.hpp"
#include "caffe/parallel/mpi_util.hpp"

namespace caffe {

/// A two-phase algorithm over one MPI group (host buffers).
template <typename Dtype>
class MpiGroupCommunicator : public TwoPhaseCommunicator<Dtype> {
 public:
  explicit MpiGroupCommunicator(std::shared_ptr<MpiGroup> group) : group_(std::move(group)) {}
  int rank() const override { return group_->rank(); }
  int size() const override { return group_->size(); }
  const MpiGroup& group() const { return *group_; }

 protected:
  /// Sends send[0, send_count) to `to` while receiving recv_count elements from `from` and adding
  /// them into target[0, recv_count). Transfers go in segments, so adding one segment overlaps
  /// receiving the next. send and target must not overlap.
  void SendReceiveAdd(const Dtype* send, size_t send_count, int to, Dtype* target,
                      size_t recv_count, int from, int tag);

  /// Elements per message segment (256 KiB of floats).
  static constexpr size_t kSegment = 65536;

  std::shared_ptr<MpiGroup> group_;
  std::vector<Dtype> scratch_;  // received data, before it is added
  std::vector<MPI_Request> requests_;
};

}  // namespace caffe

#endif  // CAFFE_PARALLEL_MPI_GROUP_COMMUNICATOR_HPP_
