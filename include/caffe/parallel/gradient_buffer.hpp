// The one flat buffer of a net's gradients that every synchronizer reduces (solver threads in one
// process, pycaffe's caffe.NCCL, DDL's learners): the learnable params' diffs moved into one
// contiguous buffer, in the order backward completes them, cut into buckets. Backward then writes
// straight into it, each bucket is one allreduce, and a bucket can be reduced as soon as backward
// has passed the lowest layer that writes it (overlapping communication with backward).
#ifndef CAFFE_PARALLEL_GRADIENT_BUFFER_HPP_
#define CAFFE_PARALLEL_GRADIENT_BUFFER_HPP_

#include <cstddef>
#include <memory>
#include <vector>

#include "caffe/memory/device_buffer.hpp"
#include "caffe/net.hpp"

namespace caffe {

template <typename Dtype>
class GradientBuffer {
 public:
  /// A contiguous range of the buffer, reduced by one allreduce.
  struct Bucket {
    size_t offset = 0, count = 0;
    int ready_layer = 0;      // complete once backward has run layer ready_layer
    std::vector<int> params;  // indices into the net's learnable_params(), in buffer order
  };

  /// Moves `net`'s learnable params' diffs into the buffer (shared params share their owner's
  /// diff, so they follow); the values there are zeros. `on_device`: device memory (GPU solvers;
  /// made on the solver's thread, within its budget), else host memory. Buckets hold at most
  /// `bucket_capacity` values (a larger param gets a bucket of its own; SIZE_MAX: one bucket,
  /// 1: a bucket per param). Must outlive every use of the net's diffs.
  GradientBuffer(Net<Dtype>* net, bool on_device, size_t bucket_capacity);

  Dtype* data() { return data_; }
  /// Gradient values in all.
  size_t count() const { return count_; }
  bool on_device() const { return device_ != nullptr; }
  const std::vector<Bucket>& buckets() const { return buckets_; }
  /// Backward runs from the top layer down: the end of the run of buckets from `first` on that
  /// are complete once layer `layer`'s backward has run.
  size_t ReadyEnd(size_t first, int layer) const;
  /// Buckets [first, end) as one range of the buffer: its start and its number of values.
  Dtype* RangeData(size_t first) { return data_ + buckets_.at(first).offset; }
  size_t RangeCount(size_t first, size_t end) const;
  /// Makes the buffer's side current for the params of buckets [first, end): a gradient that a
  /// layer without code for the buffer's side wrote on the other side is copied over.
  void MakeCurrent(size_t first, size_t end);
  /// Multiplies every gradient by `factor` (1/N turns N solvers' sum into their mean), on the
  /// side the buffer lives; on a GPU, queued on the default stream.
  void Scale(Dtype factor);

 private:
  Net<Dtype>* net_;
  std::vector<Bucket> buckets_;
  size_t count_ = 0;
  std::vector<Dtype> host_;
  std::unique_ptr<DeviceBuffer<Dtype>> device_;
  Dtype* data_ = nullptr;
};

}  // namespace caffe

#endif  // CAFFE_PARALLEL_GRADIENT_BUFFER_HPP_
