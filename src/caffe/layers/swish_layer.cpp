#include "caffe/layers/swish_layer.hpp"

#include "caffe/kernels/math_functions.hpp"
#include "caffe/kernels/vector_math.hpp"
#include "caffe/util/cpu_threads.hpp"

namespace caffe {

template <typename Dtype>
void SwishLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  beta_ = this->layer_param_.swish_param().beta();
}

template <typename Dtype>
void SwishLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  NeuronLayer<Dtype>::Reshape(bottom, top);
  sigmoid_.ReshapeLike(*bottom[0]);
}

template <typename Dtype>
void SwishLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  // top = x sigmoid(beta x); the sigmoid is kept for backward.
  const int count = bottom[0]->count();
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* sigmoid = sigmoid_.mutable_cpu_data();
  caffe_cpu_scale(count, beta_, bottom_data, sigmoid);
  caffe_sigmoid(count, sigmoid, sigmoid);
  caffe_mul(count, bottom_data, sigmoid, top[0]->mutable_cpu_data());
}

template <typename Dtype>
void SwishLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                     const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_data = top[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  const Dtype* sigmoid = sigmoid_.cpu_data();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const Dtype beta = beta_;
  // d/dx x s(beta x) = s + beta x s (1 - s) = beta y + s (1 - beta y).
  caffe_parallel_for(bottom[0]->count(), [=](int i) {
    bottom_diff[i] =
        top_diff[i] * (beta * top_data[i] + sigmoid[i] * (Dtype(1) - beta * top_data[i]));
  });
}

INSTANTIATE_CLASS(SwishLayer);
REGISTER_LAYER_CLASS(Swish);

}  // namespace caffe
