#include "caffe/layers/sigmoid_layer.hpp"

#include "caffe/kernels/vector_math.hpp"
#include "caffe/util/cpu_threads.hpp"

namespace caffe {

template <typename Dtype>
void SigmoidLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  caffe_sigmoid(bottom[0]->count(), bottom[0]->cpu_data(), top[0]->mutable_cpu_data());
}

template <typename Dtype>
void SigmoidLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                       const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_data = top[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  caffe_parallel_for(bottom[0]->count(), [=](int i) {
    const Dtype sigmoid_x = top_data[i];
    bottom_diff[i] = top_diff[i] * sigmoid_x * (Dtype(1) - sigmoid_x);
  });
}

INSTANTIATE_CLASS(SigmoidLayer);

// Its engines (layers/cudnn/, layers/dnnl/) are chosen by layer_engine.hpp.
REGISTER_LAYER_CLASS(Sigmoid);

}  // namespace caffe
