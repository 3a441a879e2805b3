#include "caffe/parallel/ring_communicator.hpp"

namespace caffe {

namespace {
constexpr int kReduceScatterTag = 101;
constexpr int kAllgatherTag = 102;

int Modulo(int value, int size) { return ((value % size) + size) % size; }
}  // namespace

template <typename Dtype>
void RingCommunicator<Dtype>::ReduceScatter(Dtype* buffer, const Blocks& blocks) {
  this->CheckBlocks(blocks);
  const int size = this->size(), rank = this->rank();
  if (size == 1) return;
  const int right = Modulo(rank + 1, size), left = Modulo(rank - 1, size);
  for (int step = 0; step < size - 1; ++step) {
    // What goes out at step s is what came in (and was added) at step s-1.
    const int send_block = Modulo(rank - step - 1, size);
    const int recv_block = Modulo(rank - step - 2, size);
    this->SendReceiveAdd(buffer + blocks.offset[send_block], blocks.count[send_block], right,
                         buffer + blocks.offset[recv_block], blocks.count[recv_block], left,
                         kReduceScatterTag);
  }
}

template <typename Dtype>
void RingCommunicator<Dtype>::Allgather(Dtype* buffer, const Blocks& blocks) {
  this->CheckBlocks(blocks);
  const int size = this->size(), rank = this->rank();
  if (size == 1) return;
  const int right = Modulo(rank + 1, size), left = Modulo(rank - 1, size);
  // What this member reduced becomes what the others will receive of it.
  this->RoundAsSent(buffer + blocks.offset[rank], blocks.count[rank]);
  for (int step = 0; step < size - 1; ++step) {
    const int send_block = Modulo(rank - step, size);
    const int recv_block = Modulo(rank - step - 1, size);
    this->SendReceive(buffer + blocks.offset[send_block], blocks.count[send_block], right,
                      buffer + blocks.offset[recv_block], blocks.count[recv_block], left,
                      kAllgatherTag);
  }
}

template class RingCommunicator<float>;
template class RingCommunicator<double>;

}  // namespace caffe
