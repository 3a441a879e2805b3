// The device side of a data layer's prefetched batches (BVLC's async_gpu_push). In GPU mode the
// prefetch thread copies each batch it has loaded to the device, on a stream of its own, so the
// transfer overlaps the net's kernels instead of stalling the net's thread at the data layer; the
// net's thread then copies the batch device to device into the tops, on the default stream (the
// one the layers run on), without waiting. An event recorded after that copy keeps the prefetch
// thread from writing the batch's room again before the copy has read it. GPU builds only.
#ifndef CAFFE_MEMORY_DEVICE_BATCH_HPP_
#define CAFFE_MEMORY_DEVICE_BATCH_HPP_

#ifndef CPU_ONLY

#include <cstddef>
#include <memory>

#include "caffe/common.hpp"
#include "caffe/memory/device_buffer.hpp"

namespace caffe {

/// A stream on the current device that does not wait for the default stream's work
/// (cudaStreamNonBlocking): the prefetch thread's copies run beside the net's kernels.
class PushStream {
 public:
  PushStream();
  ~PushStream();
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;

  PushStream(const PushStream&) = delete;
  PushStream& operator=(const PushStream&) = delete;
};

/// Room on the device for one batch: its data and its labels.
template <typename Dtype>
class DeviceBatch {
 public:
  /// Room for `data_count` and `label_count` values on the current device, from the calling
  /// thread's LMS manager (as memory it never swaps) or the GPU's caching allocator, so it counts
  /// against -gpu_mem_limit. Made and destroyed on the net's thread. Throws a caffe::Error when
  /// the device has no such room.
  DeviceBatch(size_t data_count, size_t label_count);
  /// Waits for the last copy out of the room.
  ~DeviceBatch();

  /// Prefetch thread: copies `data_count` values of `data` and `label_count` of `label` (null:
  /// none), host memory, into the room on `stream`, after the net's last Pull from it, and waits
  /// for the copy. Returns false, and then holds nothing, when the batch is larger than the room.
  bool Push(const Dtype* data, size_t data_count, const Dtype* label, size_t label_count,
            cudaStream_t stream);
  /// Whether the room holds a batch that Push copied.
  bool holds() const { return holds_; }
  /// Net's thread: copies the batch Push left into the device memory `data_top` and `label_top`
  /// (null: none), which hold as many values as the batch (`*_count`, checked), on the default
  /// stream, without waiting. The room's next Push waits for these copies.
  void Pull(Dtype* data_top, size_t data_top_count, Dtype* label_top, size_t label_top_count);

  size_t data_capacity() const { return data_.count(); }
  size_t label_capacity() const { return label_.count(); }

 private:
  DeviceBuffer<Dtype> data_, label_;
  size_t data_count_ = 0, label_count_ = 0;  // the held batch's
  bool holds_ = false;
  cudaEvent_t pulled_ = nullptr;  // recorded on the default stream after Pull's copies

  DeviceBatch(const DeviceBatch&) = delete;
  DeviceBatch& operator=(const DeviceBatch&) = delete;
};

}  // namespace caffe

#endif  // CPU_ONLY
#endif  // CAFFE_MEMORY_DEVICE_BATCH_HPP_
