#include "caffe/layers/euclidean_loss_layer.hpp"

namespace caffe {

template <typename Dtype>
void EuclideanLossLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LossLayer<Dtype>::Reshape(bottom, top);
  LAYER_CHECK_EQ(bottom[0]->count(1), bottom[1]->count(1))
      << "bottoms need the same number of values per item: bottom[0] " << bottom[0]->shape_string()
      << ", bottom[1] " << bottom[1]->shape_string();
  diff_.ReshapeLike(*bottom[0]);
}

template <typename Dtype>
void EuclideanLossLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  caffe_sub(count, bottom[0]->cpu_data(), bottom[1]->cpu_data(), diff_.mutable_cpu_data());
  const Dtype dot = caffe_cpu_dot(count, diff_.cpu_data(), diff_.cpu_data());
  top[0]->mutable_cpu_data()[0] = dot / Dtype(bottom[0]->shape(0)) / Dtype(2);
}

template <typename Dtype>
void EuclideanLossLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top,
                                             const vector<bool>& propagate_down,
                                             const Blobs<Dtype>& bottom) {
  for (int i = 0; i < 2; ++i) {
    if (!propagate_down[i]) continue;
    const Dtype sign = i == 0 ? 1 : -1;
    const Dtype alpha = sign * top[0]->cpu_diff()[0] / Dtype(bottom[i]->shape(0));
    caffe_cpu_scale(bottom[i]->count(), alpha, diff_.cpu_data(), bottom[i]->mutable_cpu_diff());
  }
}

template <typename Dtype>
bool EuclideanLossLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                                 const Blobs<Dtype>& top,
                                                 const vector<bool>& propagate_down,
                                                 MemoryUses* uses) const {
  Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  uses->AddData(diff_, pass == Pass::kForward ? kOverwrite : kRead);
  return true;
}

INSTANTIATE_CLASS(EuclideanLossLayer);
REGISTER_LAYER_CLASS(EuclideanLoss);

}  // namespace caffe
