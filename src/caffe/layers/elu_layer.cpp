#include "caffe/layers/elu_layer.hpp"

#include "caffe/kernels/vector_math.hpp"
#include "caffe/util/cpu_threads.hpp"

namespace caffe {

template <typename Dtype>
void ELULayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  alpha_ = this->layer_param_.elu_param().alpha();
}

template <typename Dtype>
void ELULayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  caffe_elu(bottom[0]->count(), alpha_, bottom[0]->cpu_data(), top[0]->mutable_cpu_data());
}

template <typename Dtype>
void ELULayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                   const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* bottom_data = bottom[0]->cpu_data();
  const Dtype* top_data = top[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const Dtype alpha = alpha_;
  // For x <= 0, d/dx alpha (e^x - 1) = alpha e^x = y + alpha.
  caffe_parallel_for(bottom[0]->count(), [=](int i) {
    const Dtype x = bottom_data[i];
    bottom_diff[i] = top_diff[i] * (Dtype(x > 0) + (alpha + top_data[i]) * Dtype(x <= 0));
  });
}

INSTANTIATE_CLASS(ELULayer);
REGISTER_LAYER_CLASS(ELU);

}  // namespace caffe
