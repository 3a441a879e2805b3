#include "caffe/parallel/rcs_communicator.hpp"

#include <algorithm>

namespace caffe {

namespace {
constexpr int kFoldTag = 201;
constexpr int kHalvingTag = 202;
constexpr int kDoublingTag = 203;
constexpr int kUnfoldTag = 204;
}  // namespace

template <typename Dtype>
RcsCommunicator<Dtype>::RcsCommunicator(std::shared_ptr<MpiGroup> group, Compression compression)
    : MpiGroupCommunicator<Dtype>(std::move(group), compression) {
  const int size = this->size(), rank = this->rank();
  power_ = 1;
  while (power_ * 2 <= size) power_ *= 2;
  folded_ = size - power_;
  if (rank < 2 * folded_) {
    virtual_ = (rank % 2 == 1) ? rank / 2 : -1;
  } else {
    virtual_ = rank - folded_;
  }
}

template <typename Dtype>
int RcsCommunicator<Dtype>::RealRank(int virtual_rank) const {
  return virtual_rank < folded_ ? 2 * virtual_rank + 1 : virtual_rank + folded_;
}

template <typename Dtype>
size_t RcsCommunicator<Dtype>::VirtualStart(const Blocks& blocks, int virtual_rank) const {
  if (virtual_rank >= power_) return blocks.total();
  return blocks.offset[virtual_rank < folded_ ? 2 * virtual_rank : virtual_rank + folded_];
}

template <typename Dtype>
void RcsCommunicator<Dtype>::ReduceScatter(Dtype* buffer, const Blocks& blocks) {
  this->CheckBlocks(blocks);
  if (this->size() == 1) return;
  const int rank = this->rank();
  const size_t begin = blocks.offset[0], total = blocks.total() - begin;
  if (virtual_ < 0) {
    // Folded: hand everything to rank + 1 (in the segments it receives and adds), then take
    // back this member's block.
    this->SendReceiveAdd(buffer + begin, total, rank + 1, nullptr, 0, rank + 1, kFoldTag);
    this->Receive(buffer + blocks.offset[rank], blocks.count[rank], rank + 1, kUnfoldTag);
    return;
  }
  if (rank < 2 * folded_) {
    this->SendReceiveAdd(nullptr, 0, rank - 1, buffer + begin, total, rank - 1, kFoldTag);
  }
  // Recursive halving over virtual members: keep the half holding this member's blocks.
  int low = 0, high = power_;
  for (int distance = power_ / 2; distance >= 1; distance /= 2) {
    const int middle = low + (high - low) / 2;
    const bool upper = (virtual_ & distance) != 0;
    const int keep_low = upper ? middle : low, keep_high = upper ? high : middle;
    const int send_low = upper ? low : middle, send_high = upper ? middle : high;
    const size_t send_start = VirtualStart(blocks, send_low);
    const size_t keep_start = VirtualStart(blocks, keep_low);
    this->SendReceiveAdd(buffer + send_start, VirtualStart(blocks, send_high) - send_start,
                         RealRank(virtual_ ^ distance), buffer + keep_start,
                         VirtualStart(blocks, keep_high) - keep_start,
                         RealRank(virtual_ ^ distance), kHalvingTag);
    low = keep_low;
    high = keep_high;
  }
  if (rank < 2 * folded_) {
    this->Send(buffer + blocks.offset[rank - 1], blocks.count[rank - 1], rank - 1, kUnfoldTag);
  }
}

template <typename Dtype>
void RcsCommunicator<Dtype>::Allgather(Dtype* buffer, const Blocks& blocks) {
  this->CheckBlocks(blocks);
  if (this->size() == 1) return;
  const int rank = this->rank();
  const size_t begin = blocks.offset[0], total = blocks.total() - begin;
  // What this member reduced becomes what the others will receive of it.
  this->RoundAsSent(buffer + blocks.offset[rank], blocks.count[rank]);
  if (virtual_ < 0) {
    // Folded: give this member's block to rank + 1, then receive the whole result.
    this->Send(buffer + blocks.offset[rank], blocks.count[rank], rank + 1, kFoldTag);
    this->Receive(buffer + begin, total, rank + 1, kUnfoldTag);
    return;
  }
  if (rank < 2 * folded_) {
    this->Receive(buffer + blocks.offset[rank - 1], blocks.count[rank - 1], rank - 1, kFoldTag);
  }
  // Recursive doubling: swap the aligned range held so far with the partner's.
  for (int distance = 1; distance < power_; distance *= 2) {
    const int own_low = virtual_ & ~(distance - 1);
    const int partner_low = (virtual_ ^ distance) & ~(distance - 1);
    const size_t own_start = VirtualStart(blocks, own_low);
    const size_t partner_start = VirtualStart(blocks, partner_low);
    const size_t own_count = VirtualStart(blocks, own_low + distance) - own_start;
    const size_t partner_count = VirtualStart(blocks, partner_low + distance) - partner_start;
    const int partner = RealRank(virtual_ ^ distance);
    this->SendReceive(buffer + own_start, own_count, partner, buffer + partner_start, partner_count,
                      partner, kDoublingTag);
  }
  if (rank < 2 * folded_) this->Send(buffer + begin, total, rank - 1, kUnfoldTag);
}

template class RcsCommunicator<float>;
template class RcsCommunicator<double>;

}  // namespace caffe
