#include "caffe/layers/power_layer.hpp"

#include <cmath>

#include "caffe/util/cpu_threads.hpp"

namespace caffe {

template <typename Dtype>
void PowerLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const PowerParameter& param = this->layer_param_.power_param();
  power_ = param.power();
  scale_ = param.scale();
  shift_ = param.shift();
  diff_scale_ = power_ * scale_;
}

template <typename Dtype>
void PowerLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  Dtype* top_data = top[0]->mutable_cpu_data();
  const int count = bottom[0]->count();
  if (diff_scale_ == Dtype(0)) {
    // The input does not matter: scale or power is 0.
    const Dtype value = power_ == Dtype(0) ? Dtype(1) : Dtype(std::pow(shift_, power_));
    caffe_set(count, value, top_data);
    return;
  }
  const Dtype* bottom_data = bottom[0]->cpu_data();
  const Dtype power = power_, scale = scale_, shift = shift_;
  caffe_parallel_for(count, [=](int i) {
    Dtype x = bottom_data[i];
    if (scale != Dtype(1)) x *= scale;
    if (shift != Dtype(0)) x += shift;
    top_data[i] = power == Dtype(1) ? x : Dtype(std::pow(x, power));
  });
}

template <typename Dtype>
void PowerLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                     const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const int count = bottom[0]->count();
  if (diff_scale_ == Dtype(0)) {
    // A constant top: no gradient reaches the bottom.
    caffe_set(count, Dtype(0), bottom_diff);
    return;
  }
  const Dtype* top_diff = top[0]->cpu_diff();
  const Dtype diff_scale = diff_scale_, power = power_, scale = scale_, shift = shift_;
  if (power == Dtype(1)) {
    caffe_parallel_for(count, [=](int i) { bottom_diff[i] = top_diff[i] * diff_scale; });
    return;
  }
  const Dtype* bottom_data = bottom[0]->cpu_data();
  const Dtype* top_data = top[0]->cpu_data();
  // dy/dx = power * scale * (shift + scale x)^(power - 1) = diff_scale * y / (shift + scale x),
  // with BVLC's special forms for power 2 and for shift 0 (which give its rounding).
  if (power == Dtype(2)) {
    caffe_parallel_for(count, [=](int i) {
      Dtype d = diff_scale * scale * bottom_data[i];
      if (shift != Dtype(0)) d += diff_scale * shift;
      bottom_diff[i] = top_diff[i] * d;
    });
  } else if (shift == Dtype(0)) {
    caffe_parallel_for(count, [=](int i) {
      const Dtype d = top_data[i] / bottom_data[i] * power;
      bottom_diff[i] = top_diff[i] * d;
    });
  } else {
    caffe_parallel_for(count, [=](int i) {
      Dtype base = bottom_data[i];
      if (scale != Dtype(1)) base *= scale;
      base += shift;
      Dtype d = top_data[i] / base;
      if (diff_scale != Dtype(1)) d *= diff_scale;
      bottom_diff[i] = top_diff[i] * d;
    });
  }
}

INSTANTIATE_CLASS(PowerLayer);
REGISTER_LAYER_CLASS(Power);

}  // namespace caffe
