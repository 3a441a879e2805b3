#include "caffe/layers/exp_layer.hpp"

#include <cmath>

#include "caffe/kernels/math_functions.hpp"
#include "caffe/kernels/vector_math.hpp"
#include "caffe/util/cpu_threads.hpp"

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
  // top = outer_scale exp(inner_scale x)
  const int count = bottom[0]->count();
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  if (inner_scale_ != Dtype(1)) {
    caffe_cpu_scale(count, inner_scale_, bottom_data, top_data);
    bottom_data = top_data;
  }
  caffe_exp(count, bottom_data, top_data);
  if (outer_scale_ != Dtype(1)) caffe_scal(count, outer_scale_, top_data);
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
