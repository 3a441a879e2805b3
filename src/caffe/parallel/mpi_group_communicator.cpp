#include "caffe/parallel/mpi_group_communicator.hpp"

#include <algorithm>

namespace caffe {

namespace {

void CheckFitsOneMessage(size_t count) {
  CAFFE_CHECK_LE(count, kMaxMpiCount) << "a block larger than one MPI message takes";
}

}  // namespace

template <typename Dtype>
const void* MpiGroupCommunicator<Dtype>::Outgoing(const Dtype* data, size_t count) {
  if (!compressed()) return data;
  if (wire_out_.size() < count) wire_out_.resize(count);
  Compress(compression_, data, count, wire_out_.data());
  return wire_out_.data();
}

template <typename Dtype>
void* MpiGroupCommunicator<Dtype>::Incoming(Dtype* data, size_t count) {
  if (!compressed()) return data;
  if (wire_in_.size() < count) wire_in_.resize(count);
  return wire_in_.data();
}

template <typename Dtype>
void MpiGroupCommunicator<Dtype>::Landed(Dtype* data, size_t count) {
  if (compressed()) Decompress(compression_, wire_in_.data(), count, data);
}

template <typename Dtype>
void MpiGroupCommunicator<Dtype>::SendReceiveAdd(const Dtype* send, size_t send_count, int to,
                                                 Dtype* target, size_t recv_count, int from,
                                                 int tag) {
  const MPI_Comm comm = group_->comm();
  const MPI_Datatype type = WireType();
  const size_t value_bytes = CompressedBytes(compression_, sizeof(Dtype));
  // With compression the whole send is converted first (a pass over memory, far cheaper than
  // the bytes it saves), and each segment is converted back as it is added. Received values
  // land apart from `target`, in scratch_ (or the 16-bit buffer), to be added.
  const char* out = static_cast<const char*>(Outgoing(send, send_count));
  if (!compressed() && scratch_.size() < recv_count) scratch_.resize(recv_count);
  char* in = static_cast<char*>(Incoming(scratch_.data(), recv_count));
  // Every segment's receive and send is posted at once, so transfers never wait for a receive
  // to be posted (a round trip per segment over TCP); segments are added in order as they land.
  const size_t recv_segments = (recv_count + kSegment - 1) / kSegment;
  const size_t send_segments = (send_count + kSegment - 1) / kSegment;
  requests_.assign(recv_segments + send_segments, MPI_REQUEST_NULL);
  for (size_t segment = 0; segment < recv_segments; ++segment) {
    const size_t offset = segment * kSegment;
    MPI_CHECK(MPI_Irecv(in + offset * value_bytes,
                        static_cast<int>(std::min(kSegment, recv_count - offset)), type, from, tag,
                        comm, &requests_[segment]));
  }
  for (size_t segment = 0; segment < send_segments; ++segment) {
    const size_t offset = segment * kSegment;
    MPI_CHECK(MPI_Isend(out + offset * value_bytes,
                        static_cast<int>(std::min(kSegment, send_count - offset)), type, to, tag,
                        comm, &requests_[recv_segments + segment]));
  }
  for (size_t segment = 0; segment < recv_segments; ++segment) {
    MPI_CHECK(MPI_Wait(&requests_[segment], MPI_STATUS_IGNORE));
    const size_t offset = segment * kSegment;
    const size_t count = std::min(kSegment, recv_count - offset);
    if (compressed()) {
      DecompressAdd(compression_, wire_in_.data() + offset, count, target + offset);
    } else {
      AddInto(target + offset, scratch_.data() + offset, count);
    }
  }
  if (send_segments > 0) {
    MPI_CHECK(MPI_Waitall(static_cast<int>(send_segments), requests_.data() + recv_segments,
                          MPI_STATUSES_IGNORE));
  }
}

template <typename Dtype>
void MpiGroupCommunicator<Dtype>::SendReceive(const Dtype* send, size_t send_count, int to,
                                              Dtype* recv, size_t recv_count, int from, int tag) {
  CheckFitsOneMessage(std::max(send_count, recv_count));
  MPI_CHECK(MPI_Sendrecv(Outgoing(send, send_count), static_cast<int>(send_count), WireType(), to,
                         tag, Incoming(recv, recv_count), static_cast<int>(recv_count), WireType(),
                         from, tag, group_->comm(), MPI_STATUS_IGNORE));
  Landed(recv, recv_count);
}

template <typename Dtype>
void MpiGroupCommunicator<Dtype>::Send(const Dtype* data, size_t count, int peer, int tag) {
  CheckFitsOneMessage(count);
  MPI_CHECK(MPI_Send(Outgoing(data, count), static_cast<int>(count), WireType(), peer, tag,
                     group_->comm()));
}

template <typename Dtype>
void MpiGroupCommunicator<Dtype>::Receive(Dtype* data, size_t count, int peer, int tag) {
  CheckFitsOneMessage(count);
  MPI_CHECK(MPI_Recv(Incoming(data, count), static_cast<int>(count), WireType(), peer, tag,
                     group_->comm(), MPI_STATUS_IGNORE));
  Landed(data, count);
}

template class MpiGroupCommunicator<float>;
template class MpiGroupCommunicator<double>;

}  // namespace caffe
