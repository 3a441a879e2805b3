#include "caffe/parallel/mpi_group_communicator.hpp"

#include <algorithm>

namespace caffe {

namespace {

void CheckFitsOneMessage(size_t count) {
  CAFFE_CHECK_LE(count, kMaxMpiCount) << "a block larger than one MPI message takes";
}

}  // namespace

template <typename Dtype>
void MpiGroupCommunicator<Dtype>::SendReceiveAdd(const Dtype* send, size_t send_count, int to,
                                                 Dtype* target, size_t recv_count, int from,
                                                 int tag) {
  const MPI_Comm comm = group_->comm();
  const MPI_Datatype type = WireType();
  // With compression the whole send is converted first (a pass over memory, far cheaper than
  // the bytes it saves), and each segment is converted back as it is added.
  const void* out = send;
  char* in = nullptr;
  size_t value_bytes = sizeof(Dtype);
  if (compressed()) {
    if (wire_out_.size() < send_count) wire_out_.resize(send_count);
    if (wire_in_.size() < recv_count) wire_in_.resize(recv_count);
    Compress(compression_, send, send_count, wire_out_.data());
    out = wire_out_.data();
    in = reinterpret_cast<char*>(wire_in_.data());
    value_bytes = sizeof(uint16_t);
  } else {
    if (scratch_.size() < recv_count) scratch_.resize(recv_count);
    in = reinterpret_cast<char*>(scratch_.data());
  }
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
    MPI_CHECK(MPI_Isend(static_cast<const char*>(out) + offset * value_bytes,
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
  if (!compressed()) {
    MPI_CHECK(MPI_Sendrecv(send, static_cast<int>(send_count), MpiType<Dtype>(), to, tag, recv,
                           static_cast<int>(recv_count), MpiType<Dtype>(), from, tag,
                           group_->comm(), MPI_STATUS_IGNORE));
    return;
  }
  if (wire_out_.size() < send_count) wire_out_.resize(send_count);
  if (wire_in_.size() < recv_count) wire_in_.resize(recv_count);
  Compress(compression_, send, send_count, wire_out_.data());
  MPI_CHECK(MPI_Sendrecv(wire_out_.data(), static_cast<int>(send_count), MPI_UINT16_T, to, tag,
                         wire_in_.data(), static_cast<int>(recv_count), MPI_UINT16_T, from, tag,
                         group_->comm(), MPI_STATUS_IGNORE));
  Decompress(compression_, wire_in_.data(), recv_count, recv);
}

template <typename Dtype>
void MpiGroupCommunicator<Dtype>::Send(const Dtype* data, size_t count, int peer, int tag) {
  CheckFitsOneMessage(count);
  if (!compressed()) {
    MPI_CHECK(MPI_Send(data, static_cast<int>(count), MpiType<Dtype>(), peer, tag, group_->comm()));
    return;
  }
  if (wire_out_.size() < count) wire_out_.resize(count);
  Compress(compression_, data, count, wire_out_.data());
  MPI_CHECK(
      MPI_Send(wire_out_.data(), static_cast<int>(count), MPI_UINT16_T, peer, tag, group_->comm()));
}

template <typename Dtype>
void MpiGroupCommunicator<Dtype>::Receive(Dtype* data, size_t count, int peer, int tag) {
  CheckFitsOneMessage(count);
  if (!compressed()) {
    MPI_CHECK(MPI_Recv(data, static_cast<int>(count), MpiType<Dtype>(), peer, tag, group_->comm(),
                       MPI_STATUS_IGNORE));
    return;
  }
  if (wire_in_.size() < count) wire_in_.resize(count);
  MPI_CHECK(MPI_Recv(wire_in_.data(), static_cast<int>(count), MPI_UINT16_T, peer, tag,
                     group_->comm(), MPI_STATUS_IGNORE));
  Decompress(compression_, wire_in_.data(), count, data);
}

template class MpiGroupCommunicator<float>;
template class MpiGroupCommunicator<double>;

}  // namespace caffe
