#include "caffe/parallel/communicator.hpp"

#include <glog/logging.h>

#include <algorithm>

#include "caffe/util/error.hpp"

namespace caffe {

Blocks Blocks::Even(size_t total, int parts) {
  CAFFE_CHECK_GT(parts, 0) << "a buffer must be split into at least one block";
  Blocks blocks;
  blocks.offset.resize(parts);
  blocks.count.resize(parts);
  const size_t base = total / parts, larger = total % parts;
  size_t offset = 0;
  for (int i = 0; i < parts; ++i) {
    blocks.offset[i] = offset;
    blocks.count[i] = base + (static_cast<size_t>(i) < larger ? 1 : 0);
    offset += blocks.count[i];
  }
  return blocks;
}

size_t Blocks::largest() const {
  return count.empty() ? 0 : *std::max_element(count.begin(), count.end());
}

template <typename Dtype>
void TwoPhaseCommunicator<Dtype>::CheckBlocks(const Blocks& blocks) const {
  CAFFE_CHECK_EQ(blocks.parts(), size())
      << this->name() << ": a buffer split into " << blocks.parts()
      << " blocks cannot be reduced by " << size() << " learners";
  for (int i = 0; i < blocks.parts(); ++i) {
    CAFFE_CHECK_LE(blocks.count[i], kMaxMpiCount)
        << this->name() << ": block " << i << " of " << blocks.count[i]
        << " elements is larger than one MPI message can carry";
    if (i > 0) {
      CHECK_EQ(blocks.offset[i], blocks.offset[i - 1] + blocks.count[i - 1])
          << "blocks must be contiguous and in member order";
    }
  }
}

template <typename Dtype>
void TwoPhaseCommunicator<Dtype>::SendReceiveAdd(const Dtype* send, size_t send_count, int to,
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

template <typename Dtype>
void TwoPhaseCommunicator<Dtype>::Allreduce(Dtype* buffer, size_t count) {
  if (size() == 1 || count == 0) return;
  const Blocks blocks = Blocks::Even(count, size());
  ReduceScatter(buffer, blocks);
  Allgather(buffer, blocks);
}

template <typename Dtype>
void AddInto(Dtype* dst, const Dtype* src, size_t count) {
  // Plain loop: the compiler vectorizes it; summation order per element is fixed (dst + src).
  for (size_t i = 0; i < count; ++i) dst[i] += src[i];
}

template class TwoPhaseCommunicator<float>;
template class TwoPhaseCommunicator<double>;
template void AddInto<float>(float*, const float*, size_t);
template void AddInto<double>(double*, const double*, size_t);

}  // namespace caffe
