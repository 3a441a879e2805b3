#include "caffe/layers/log_layer.hpp"

#include <cmath>

#include "caffe/util/cpu_threads.hpp"

namespace caffe {

template <typename Dtype>
void LogLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const LogParameter& param = this->layer_param_.log_param();
  const Dtype base = param.base();
  if (base != Dtype(-1)) {
    LAYER_CHECK_GT(base, Dtype(0)) << "log_param.base must be -1 (for e) or > 0";
  }
  const Dtype log_base = base == Dtype(-1) ? Dtype(1) : std::log(base);
  LAYER_CHECK(std::isfinite(log_base))
      << "log_param.base " << base << " gives log(base) = " << log_base << "; must be finite";
  base_scale_ = Dtype(1) / log_base;
  LAYER_CHECK(std::isfinite(base_scale_))
      << "log_param.base " << base << " gives 1 / log(base) = " << base_scale_
      << "; must be finite (base may not be 1)";
  input_scale_ = param.scale();
  input_shift_ = param.shift();
  backward_num_scale_ = input_scale_ / log_base;
}

template <typename Dtype>
void LogLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  const Dtype scale = input_scale_, shift = input_shift_, base_scale = base_scale_;
  caffe_parallel_for(bottom[0]->count(), [=](int i) {
    Dtype x = bottom_data[i];
    if (scale != Dtype(1)) x *= scale;
    if (shift != Dtype(0)) x += shift;
    const Dtype y = std::log(x);
    top_data[i] = base_scale == Dtype(1) ? y : base_scale * y;
  });
}

template <typename Dtype>
void LogLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                   const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* bottom_data = bottom[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const Dtype scale = input_scale_, shift = input_shift_, num_scale = backward_num_scale_;
  caffe_parallel_for(bottom[0]->count(), [=](int i) {
    Dtype x = bottom_data[i];
    if (scale != Dtype(1)) x *= scale;
    if (shift != Dtype(0)) x += shift;
    Dtype d = Dtype(1) / x;
    if (num_scale != Dtype(1)) d *= num_scale;
    bottom_diff[i] = top_diff[i] * d;
  });
}

INSTANTIATE_CLASS(LogLayer);
REGISTER_LAYER_CLASS(Log);

}  // namespace caffe
