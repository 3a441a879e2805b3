#include "caffe/memory/device_batch.hpp"

namespace caffe {

PushStream::PushStream() { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }

PushStream::~PushStream() { cudaStreamDestroy(stream_); }

namespace {

constexpr const char* kWhat = "a data layer's prefetched batch";

// `count` values from host memory into `device`, queued on `stream`.
template <typename Dtype>
void CopyInAsync(const Dtype* host, size_t count, Dtype* device, cudaStream_t stream) {
  if (count == 0) return;
  CUDA_CHECK(cudaMemcpyAsync(device, host, count * sizeof(Dtype), cudaMemcpyHostToDevice, stream));
}

// The held `count` values from `device` into `top` (`top_count` values), queued on the default
// stream.
template <typename Dtype>
void CopyOutAsync(const Dtype* device, size_t count, Dtype* top, size_t top_count) {
  CHECK_EQ(top_count, count) << "the top is not shaped like the batch";
  if (count == 0) return;
  CUDA_CHECK(
      cudaMemcpyAsync(top, device, count * sizeof(Dtype), cudaMemcpyDeviceToDevice, nullptr));
}

}  // namespace

template <typename Dtype>
DeviceBatch<Dtype>::DeviceBatch(size_t data_count, size_t label_count)
    : data_(data_count, kWhat), label_(label_count, kWhat) {
  CUDA_CHECK(cudaEventCreateWithFlags(&pulled_, cudaEventDisableTiming));
  // The buffers' zero fill is queued on the default stream: the first Push waits for it too.
  CUDA_CHECK(cudaEventRecord(pulled_, nullptr));
}

template <typename Dtype>
DeviceBatch<Dtype>::~DeviceBatch() {
  // The buffers go back to an allocator that may hand them out at once.
  cudaEventSynchronize(pulled_);
  cudaEventDestroy(pulled_);
}

template <typename Dtype>
bool DeviceBatch<Dtype>::Push(const Dtype* data, size_t data_count, const Dtype* label,
                              size_t label_count, cudaStream_t stream) {
  holds_ = false;
  data_count_ = data_count;
  label_count_ = label ? label_count : 0;
  if (data_count_ > data_.count() || label_count_ > label_.count()) return false;
  // The net's thread may still be copying the previous batch out of this room.
  CUDA_CHECK(cudaStreamWaitEvent(stream, pulled_, 0));
  CopyInAsync(data, data_count_, data_.data(), stream);
  if (label) CopyInAsync(label, label_count_, label_.data(), stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  holds_ = true;
  return true;
}

template <typename Dtype>
void DeviceBatch<Dtype>::Pull(Dtype* data_top, size_t data_top_count, Dtype* label_top,
                              size_t label_top_count) {
  CHECK(holds_) << "no batch was pushed to this room";
  CopyOutAsync(data_.data(), data_count_, data_top, data_top_count);
  if (label_top) CopyOutAsync(label_.data(), label_count_, label_top, label_top_count);
  CUDA_CHECK(cudaEventRecord(pulled_, nullptr));
  holds_ = false;
}

template class DeviceBatch<float>;
template class DeviceBatch<double>;

}  // namespace caffe
