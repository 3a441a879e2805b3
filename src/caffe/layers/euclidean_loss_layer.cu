// EuclideanLoss on the GPU: the difference is formed on the device and its squared norm comes
// back from cuBLAS as the host scalar the loss needs.
#include "caffe/layers/euclidean_loss_layer.hpp"

namespace caffe {

template <typename Dtype>
void EuclideanLossLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  caffe_gpu_sub(count, bottom[0]->gpu_data(), bottom[1]->gpu_data(), diff_.mutable_gpu_data());
  Dtype dot = 0;
  caffe_gpu_dot(count, diff_.gpu_data(), diff_.gpu_data(), &dot);
  top[0]->mutable_cpu_data()[0] = dot / Dtype(bottom[0]->shape(0)) / Dtype(2);
}

template <typename Dtype>
void EuclideanLossLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top,
                                             const vector<bool>& propagate_down,
                                             const Blobs<Dtype>& bottom) {
  for (int i = 0; i < 2; ++i) {
    if (!propagate_down[i]) continue;
    const Dtype sign = i == 0 ? 1 : -1;
    const Dtype alpha = sign * top[0]->cpu_diff()[0] / Dtype(bottom[i]->shape(0));
    caffe_gpu_scale(bottom[i]->count(), alpha, diff_.gpu_data(), bottom[i]->mutable_gpu_diff());
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(EuclideanLossLayer);

}  // namespace caffe
