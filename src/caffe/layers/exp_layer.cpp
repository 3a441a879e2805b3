#include "caffe/layers/exp_layer.hpp"

#include <cmath>

#include "caffe/util/parallel.hpp"

namespace caffe {

template <typename Dtype>
void ExpLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const ExpParameter& param = this->layer_param_.exp_param();
  const Dtype base = param.base();
  if (base != Dtype(-1)) {
    LAYER_CHECK_GT(base, Dtype(0)) << "exp_param.base must be -1 (for e) or > 0";
  }
  const Dtype log_base = base == Dtype(-1) ? Dtype(1) : std::log(base);
  LAYER_CHECK(std::isfinite(log_base))
      << "exp_param.base " << base << " gives log(base) = " << log_base << "; must be finite";
  const Dtype scale = param.scale();
  const Dtype shift = param.shift();
  inner_scale_ = log_base * scale;
  if (shift == Dtype(0)) {
    outer_scale_ = 1;
  } else {
    outer_scale_ = base == Dtype(-1) ? std::exp(shift) : std::pow(base, shift);
  }
}

template <typename Dtype>
void ExpLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  const Dtype inner_scale = inner_scale_, outer_scale = outer_scale_;
  caffe_parallel_for(bottom[0]->count(), [=](int i) {
    const Dtype x = inner_scale == Dtype(1) ? bottom_data[i] : inner_scale * bottom_data[i];
    top_data[i] = outer_scale == Dtype(1) ? std::exp(x) : outer_scale * std::exp(x);
  });
}

template <typename Dtype>
void ExpLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                   const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_data = top[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const Dtype inner_scale = inner_scale_;
  caffe_parallel_for(bottom[0]->count(), [=](int i) {
    const Dtype d = top_data[i] * top_diff[i];
    bottom_diff[i] = inner_scale == Dtype(1) ? d : inner_scale * d;
  });
}

INSTANTIATE_CLASS(ExpLayer);
REGISTER_LAYER_CLASS(Exp);

}  // namespace caffe
