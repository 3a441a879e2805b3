#include "caffe/parallel/communicator.hpp"

#include <glog/logging.h>

#include <algorithm>
#include <climits>

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
  CAFFE_CHECK_EQ(blocks.parts(), this->size())
      << this->name() << ": a buffer split into " << blocks.parts()
      << " blocks cannot be reduced by " << this->size() << " learners";
  for (int i = 0; i < blocks.parts(); ++i) {
    CAFFE_CHECK_LE(blocks.count[i], static_cast<size_t>(INT_MAX))
        << this->name() << ": block " << i << " of " << blocks.count[i]
        << " elements is larger than one message can carry";
    if (i > 0) {
      CHECK_EQ(blocks.offset[i], blocks.offset[i - 1] + blocks.count[i - 1])
          << "blocks must be contiguous and in member order";
    }
  }
}

template <typename Dtype>
void TwoPhaseCommunicator<Dtype>::Allreduce(Dtype* buffer, size_t count) {
  if (this->size() == 1 || count == 0) return;
  const Blocks blocks = Blocks::Even(count, this->size());
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
