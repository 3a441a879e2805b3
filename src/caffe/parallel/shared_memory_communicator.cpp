#include "caffe/parallel/shared_memory_communicator.hpp"

#include <algorithm>

#include "caffe/memory/device_buffer.hpp"

namespace caffe {

template <typename Dtype>
SharedMemoryCommunicator<Dtype>::SharedMemoryCommunicator(
    std::shared_ptr<SharedMemoryGroup<Dtype>> group, int rank, bool device_buffers)
    : group_(std::move(group)), rank_(rank), device_buffers_(device_buffers) {}

template <typename Dtype>
void SharedMemoryCommunicator<Dtype>::Allreduce(Dtype* buffer, size_t count) {
  Dtype* mine = buffer;
  if (device_buffers_) {
    host_.resize(std::max<size_t>(count, 1));
    CopyDeviceToHost(buffer, host_.data(), count * sizeof(Dtype));
    mine = host_.data();
  }
  std::vector<Dtype*>& buffers = group_->buffers_;
  buffers[rank_] = mine;
  const int members = size();
  group_->barrier().Wait();  // every member's values are in host memory
  const size_t begin = count * rank_ / members;
  const size_t end = count * (rank_ + 1) / members;
  Dtype* sum = buffers[0];
  for (int other = 1; other < members; ++other) {
    AddInto(sum + begin, buffers[other] + begin, end - begin);
  }
  for (int other = 1; other < members; ++other) {
    std::copy(sum + begin, sum + end, buffers[other] + begin);
  }
  group_->barrier().Wait();  // every slice is summed
  if (device_buffers_) CopyHostToDevice(host_.data(), buffer, count * sizeof(Dtype));
}

template class SharedMemoryCommunicator<float>;
template class SharedMemoryCommunicator<double>;

}  // namespace caffe
