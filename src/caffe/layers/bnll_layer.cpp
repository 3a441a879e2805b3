#include "caffe/layers/bnll_layer.hpp"

#include <cmath>

#include "caffe/kernels/math_functions.hpp"
#include "caffe/kernels/vector_math.hpp"
#include "caffe/util/cpu_threads.hpp"

namespace caffe {

template <typename Dtype>
void BNLLLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  // A loop of std:: calls: oneDNN 2.6's soft_relu is off by up to 8e-6 for x < -16.
  caffe_parallel_for(bottom[0]->count(), [=](int i) {
    const Dtype x = bottom_data[i];
    // log(1 + e^x) = x + log(1 + e^-x): the form whose exp cannot overflow.
    top_data[i] = x > 0 ? x + std::log(1. + std::exp(-x)) : std::log(1. + std::exp(x));
  });
}

template <typename Dtype>
void BNLLLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                    const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  // d/dx log(1 + e^x) = e^x / (1 + e^x), the sigmoid (BNLL never runs in place).
  const int count = bottom[0]->count();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  caffe_sigmoid(count, bottom[0]->cpu_data(), bottom_diff);
  caffe_mul(count, top[0]->cpu_diff(), bottom_diff, bottom_diff);
}

INSTANTIATE_CLASS(BNLLLayer);
REGISTER_LAYER_CLASS(BNLL);

}  // namespace caffe
