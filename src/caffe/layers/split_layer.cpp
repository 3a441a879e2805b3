#include "caffe/layers/split_layer.hpp"

namespace caffe {

template <typename Dtype>
void SplitLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  count_ = bottom[0]->count();
  for (size_t i = 0; i < top.size(); ++i) {
    top[i]->ReshapeLike(*bottom[0]);
  }
}

template <typename Dtype>
void SplitLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  for (auto* top_blob : top) top_blob->ShareData(*bottom[0]);
}

template <typename Dtype>
void SplitLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                     const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  if (top.size() == 1) {
    caffe_copy(count_, top[0]->cpu_diff(), bottom_diff);
    return;
  }
  caffe_add(count_, top[0]->cpu_diff(), top[1]->cpu_diff(), bottom_diff);
  for (size_t i = 2; i < top.size(); ++i) {
    caffe_axpy(count_, Dtype(1), top[i]->cpu_diff(), bottom_diff);
  }
}

INSTANTIATE_CLASS(SplitLayer);
REGISTER_LAYER_CLASS(Split);

}  // namespace caffe
