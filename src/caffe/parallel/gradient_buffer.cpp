#include "caffe/parallel/gradient_buffer.hpp"

#include <algorithm>
#include <climits>

#include "caffe/kernels/math_functions.hpp"
#include "caffe/parallel/gradient_order.hpp"

namespace caffe {

template <typename Dtype>
GradientBuffer<Dtype>::GradientBuffer(Net<Dtype>* net, bool on_device, size_t bucket_capacity)
    : net_(net) {
  const Blobs<Dtype>& learnable = net->learnable_params();
  const GradientOrder order = BackwardGradientOrder(*net);
  const size_t capacity = std::max<size_t>(bucket_capacity, 1);
  for (int index : order.order) {
    const size_t count = learnable[index]->count();
    if (count == 0) continue;
    if (buckets_.empty() || buckets_.back().count + count > capacity) {
      buckets_.emplace_back();
      buckets_.back().offset = count_;
    }
    Bucket& bucket = buckets_.back();
    bucket.params.push_back(index);
    bucket.count += count;
    // The params come in backward's order: the last one added is completed last.
    bucket.ready_layer = order.ready[index] == INT_MAX ? 0 : order.ready[index];
    count_ += count;
  }
  if (on_device) {
    device_ = std::make_unique<DeviceBuffer<Dtype>>(count_);
    data_ = device_->data();
  } else {
    host_.assign(std::max<size_t>(count_, 1), Dtype(0));
    data_ = host_.data();
  }
  for (const Bucket& bucket : buckets_) {
    size_t offset = bucket.offset;
    for (int index : bucket.params) {
      Blob<Dtype>* param = learnable[index];
      if (on_device) {
        param->diff()->set_gpu_data(data_ + offset);
      } else {
        param->diff()->set_cpu_data(data_ + offset);
      }
      offset += param->count();
    }
  }
}

template <typename Dtype>
size_t GradientBuffer<Dtype>::ReadyEnd(size_t first, int layer) const {
  size_t end = first;
  while (end < buckets_.size() && buckets_[end].ready_layer >= layer) ++end;
  return end;
}

template <typename Dtype>
size_t GradientBuffer<Dtype>::RangeCount(size_t first, size_t end) const {
  if (end <= first) return 0;
  return buckets_[end - 1].offset + buckets_[end - 1].count - buckets_[first].offset;
}

template <typename Dtype>
void GradientBuffer<Dtype>::MakeCurrent(size_t first, size_t end) {
  const Blobs<Dtype>& learnable = net_->learnable_params();
  for (size_t b = first; b < end; ++b) {
    for (int index : buckets_[b].params) {
      if (on_device()) {
        learnable[index]->mutable_gpu_diff();
      } else {
        learnable[index]->mutable_cpu_diff();
      }
    }
  }
}

template <typename Dtype>
void GradientBuffer<Dtype>::Scale(Dtype factor) {
  if (count_ == 0) return;
#ifndef CPU_ONLY
  if (on_device()) {
    caffe_gpu_scal(static_cast<int>(count_), factor, data_);
    return;
  }
#endif
  for (size_t i = 0; i < count_; ++i) data_[i] *= factor;
}

template class GradientBuffer<float>;
template class GradientBuffer<double>;

}  // namespace caffe
