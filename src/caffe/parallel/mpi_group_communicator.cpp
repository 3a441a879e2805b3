#include "caffe/parallel/mpi_group_communicator.hpp"

#include <algorithm>

namespace caffe {

template <typename Dtype>
void MpiGroupCommunicator<Dtype>::SendReceiveAdd(const Dtype* send, size_t send_count, int to,
                                                 Dtype* target, size_t recv_count, int from,
                                                 int tag) {
  const MPI_Comm comm = group_->comm();
  const MPI_Datatype type = MpiType<Dtype>();
  // Every segment's receive and send is posted at once, so transfers never wait for a receive
  // to be posted (a round trip per segment over TCP); segments are added in order as they land.
  if (scratch_.size() < recv_count) scratch_.resize(recv_count);
  const size_t recv_segments = (recv_count + kSegment - 1) / kSegment;
  const size_t send_segments = (send_count + kSegment - 1) / kSegment;
  requests_.assign(recv_segments + send_segments, MPI_REQUEST_NULL);
  for (size_t segment = 0; segment < recv_segments; ++segment) {
    const size_t offset = segment * kSegment;
    MPI_CHECK(MPI_Irecv(scratch_.data() + offset,
                        static_cast<int>(std::min(kSegment, recv_count - offset)), type, from, tag,
                        comm, &requests_[segment]));
  }
  for (size_t segment = 0; segment < send_segments; ++segment) {
    const size_t offset = segment * kSegment;
    MPI_CHECK(MPI_Isend(const_cast<Dtype*>(send) + offset,
                        static_cast<int>(std::min(kSegment, send_count - offset)), type, to, tag,
                        comm, &requests_[recv_segments + segment]));
  }
  for (size_t segment = 0; segment < recv_segments; ++segment) {
    MPI_CHECK(MPI_Wait(&requests_[segment], MPI_STATUS_IGNORE));
    const size_t offset = segment * kSegment;
    AddInto(target + offset, scratch_.data() + offset, std::min(kSegment, recv_count - offset));
  }
  if (send_segments > 0) {
    MPI_CHECK(MPI_Waitall(static_cast<int>(send_segments), requests_.data() + recv_segments,
                          MPI_STATUSES_IGNORE));
  }
}

template class MpiGroupCommunicator<float>;
template class MpiGroupCommunicator<double>;

}  // namespace caffe
