#include "caffe/layers/bnll_layer.hpp"

#include <algorithm>
#include <cmath>

#include "caffe/util/parallel.hpp"

namespace caffe {

namespace {
// Above this input exp() would overflow in float; the gradient is 1 to working precision anyway.
constexpr double kBNLLThreshold = 50;
}  // namespace

template <typename Dtype>
void BNLLLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
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
  const Dtype* bottom_data = bottom[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  caffe_parallel_for(bottom[0]->count(), [=](int i) {
    const Dtype expval = std::exp(std::min(bottom_data[i], Dtype(kBNLLThreshold)));
    bottom_diff[i] = top_diff[i] * expval / (expval + 1.);
  });
}

INSTANTIATE_CLASS(BNLLLayer);
REGISTER_LAYER_CLASS(BNLL);

}  // namespace caffe
