#include "caffe/layers/dropout_layer.hpp"

namespace caffe {

template <typename Dtype>
void DropoutLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const float ratio = this->layer_param_.dropout_param().dropout_ratio();
  LAYER_CHECK(ratio >= 0 && ratio < 1) << "dropout_ratio is " << ratio << "; must be in [0, 1)";
  threshold_ = ratio;
  // Computed in double from the Dtype threshold, as BVLC does, so the float scale is bit-identical.
  scale_ = static_cast<Dtype>(1. / (1. - static_cast<double>(threshold_)));
}

template <typename Dtype>
void DropoutLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  NeuronLayer<Dtype>::Reshape(bottom, top);
  mask_.Reshape(bottom[0]->shape());
}

template <typename Dtype>
void DropoutLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  const int count = bottom[0]->count();
  if (this->phase_ != TRAIN) {
    caffe_copy(count, bottom_data, top_data);
    return;
  }
  unsigned int* mask = mask_.mutable_cpu_data();
  caffe_rng_bernoulli(count, 1. - static_cast<double>(threshold_), mask);
  const Dtype scale = scale_;
  for (int i = 0; i < count; ++i) top_data[i] = bottom_data[i] * Dtype(mask[i]) * scale;
}

template <typename Dtype>
void DropoutLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                       const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const int count = bottom[0]->count();
  if (this->phase_ != TRAIN) {
    caffe_copy(count, top_diff, bottom_diff);
    return;
  }
  const unsigned int* mask = mask_.cpu_data();
  const Dtype scale = scale_;
  for (int i = 0; i < count; ++i) bottom_diff[i] = top_diff[i] * Dtype(mask[i]) * scale;
}

template <typename Dtype>
bool DropoutLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                           const Blobs<Dtype>& top,
                                           const vector<bool>& propagate_down,
                                           MemoryUses* uses) const {
  NeuronLayer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  if (this->phase_ != TRAIN) return true;
  if (pass == Pass::kForward) {
    uses->AddData(mask_, kOverwrite);
  } else if (propagate_down[0]) {
    uses->AddData(mask_, kRead);
  }
  return true;
}

INSTANTIATE_CLASS(DropoutLayer);
REGISTER_LAYER_CLASS(Dropout);

}  // namespace caffe
