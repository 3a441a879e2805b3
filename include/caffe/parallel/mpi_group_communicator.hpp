// The base of the communicators that move a buffer between the processes of one MPI group with
// MPI's own calls (ring, RCS, MPI's collectives): the group, the transfers the point-to-point
// algorithms share (a segmented send-receive-add, blocking sends and exchanges), and the values'
// form on the wire: the buffer's own type, or 16 bits with -compress (compression.hpp), in which
// case every transfer here converts on the way out and in.
#ifndef CAFFE_PARALLEL_MPI_GROUP_COMMUNICATOR_HPP_
#define CAFFE_PARALLEL_MPI_GROUP_COMMUNICATOR_HPP_

#include <cstdint>
#include <memory>
#include <vector>

#include "caffe/parallel/communicator.hpp"
#include "caffe/parallel/compression.hpp"
#include "caffe/parallel/mpi_util.hpp"

namespace caffe {

/// A two-phase algorithm over one MPI group (host buffers).
template <typename Dtype>
class MpiGroupCommunicator : public TwoPhaseCommunicator<Dtype> {
 public:
  explicit MpiGroupCommunicator(std::shared_ptr<MpiGroup> group,
                                Compression compression = Compression::kNone)
      : group_(std::move(group)), compression_(compression) {}
  int rank() const override { return group_->rank(); }
  int size() const override { return group_->size(); }
  const MpiGroup& group() const { return *group_; }
  Compression compression() const { return compression_; }

 protected:
  /// Sends send[0, send_count) to `to` while receiving recv_count elements from `from` and adding
  /// them into target[0, recv_count). Transfers go in segments, so adding one segment overlaps
  /// receiving the next. send and target must not overlap.
  void SendReceiveAdd(const Dtype* send, size_t send_count, int to, Dtype* target,
                      size_t recv_count, int from, int tag);
  /// Sends send[0, send_count) to `to` while receiving recv[0, recv_count) from `from`.
  void SendReceive(const Dtype* send, size_t send_count, int to, Dtype* recv, size_t recv_count,
                   int from, int tag);
  /// Blocking transfers of data[0, count) to / from member `peer`.
  void Send(const Dtype* data, size_t count, int peer, int tag);
  void Receive(Dtype* data, size_t count, int peer, int tag);
  /// Before a member sends out the block it reduced: data becomes what the others will receive
  /// (compression.hpp), so all members end with bitwise the same values.
  void RoundAsSent(Dtype* data, size_t count) const {
    RoundAsCompressed(compression_, data, count);
  }
  bool compressed() const { return compression_ != Compression::kNone; }
  /// The MPI datatype of one value on the wire.
  MPI_Datatype WireType() const { return compressed() ? MPI_UINT16_T : MpiType<Dtype>(); }
  /// What goes on the wire for data[0, count): data itself, or its 16-bit form (in wire_out_).
  const void* Outgoing(const Dtype* data, size_t count);
  /// Where count values from the wire are received for data: data itself, or wire_in_, from
  /// which Landed then converts them into data.
  void* Incoming(Dtype* data, size_t count);
  void Landed(Dtype* data, size_t count);

  /// Elements per message segment (256 KiB of floats).
  static constexpr size_t kSegment = 65536;

  std::shared_ptr<MpiGroup> group_;
  Compression compression_;
  std::vector<Dtype> scratch_;                // received data, before it is added
  std::vector<uint16_t> wire_out_, wire_in_;  // 16-bit values going out and coming in
  std::vector<MPI_Request> requests_;
};

}  // namespace caffe

#endif  // CAFFE_PARALLEL_MPI_GROUP_COMMUNICATOR_HPP_
