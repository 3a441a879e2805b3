// Power on the GPU: one thread per element, with the CPU path's special cases (a constant top when
// power * scale == 0, the identity-like power 1, the linear gradient of power 2, and the shift-0
// form), which decide its rounding.
#include <cmath>

#include "caffe/layers/power_layer.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void PowerForwardKernel(int count, Dtype power, Dtype scale, Dtype shift,
                                   const Dtype* bottom_data, Dtype* top_data) {
  CUDA_KERNEL_LOOP(i, count) {
    Dtype x = bottom_data[i];
    if (scale != Dtype(1)) x *= scale;
    if (shift != Dtype(0)) x += shift;
    top_data[i] = power == Dtype(1) ? x : Dtype(pow(x, power));
  }
}

// power 1: the gradient is the constant diff_scale.
template <typename Dtype>
__global__ void PowerLinearBackwardKernel(int count, Dtype diff_scale, const Dtype* top_diff,
                                          Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, count) { bottom_diff[i] = top_diff[i] * diff_scale; }
}

// power 2: dy/dx = diff_scale * (scale x + shift), linear in x.
template <typename Dtype>
__global__ void PowerSquareBackwardKernel(int count, Dtype diff_scale, Dtype scale, Dtype shift,
                                          const Dtype* bottom_data, const Dtype* top_diff,
                                          Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, count) {
    Dtype d = diff_scale * scale * bottom_data[i];
    if (shift != Dtype(0)) d += diff_scale * shift;
    bottom_diff[i] = top_diff[i] * d;
  }
}

// Any other power: dy/dx = diff_scale * y / (shift + scale x); with shift 0 this is
// y / x * power, BVLC's form.
template <typename Dtype>
__global__ void PowerGeneralBackwardKernel(int count, Dtype power, Dtype diff_scale, Dtype scale,
                                           Dtype shift, const Dtype* bottom_data,
                                           const Dtype* top_data, const Dtype* top_diff,
                                           Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, count) {
    Dtype d;
    if (shift == Dtype(0)) {
      d = top_data[i] / bottom_data[i] * power;
    } else {
      Dtype base = bottom_data[i];
      if (scale != Dtype(1)) base *= scale;
      base += shift;
      d = top_data[i] / base;
      if (diff_scale != Dtype(1)) d *= diff_scale;
    }
    bottom_diff[i] = top_diff[i] * d;
  }
}

}  // namespace

template <typename Dtype>
void PowerLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  if (count == 0) return;
  Dtype* top_data = top[0]->mutable_gpu_data();
  if (diff_scale_ == Dtype(0)) {
    // The input does not matter: scale or power is 0. The value comes from the host's pow, as on
    // the CPU path.
    const Dtype value = power_ == Dtype(0) ? Dtype(1) : Dtype(std::pow(shift_, power_));
    caffe_gpu_set(count, value, top_data);
    return;
  }
  PowerForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, power_, scale_, shift_, bottom[0]->gpu_data(), top_data);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void PowerLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                     const Blobs<Dtype>& bottom) {
  const int count = bottom[0]->count();
  if (!propagate_down[0] || count == 0) return;
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  if (diff_scale_ == Dtype(0)) {
    // A constant top: no gradient reaches the bottom.
    caffe_gpu_set(count, Dtype(0), bottom_diff);
    return;
  }
  const Dtype* top_diff = top[0]->gpu_diff();
  if (power_ == Dtype(1)) {
    PowerLinearBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
        count, diff_scale_, top_diff, bottom_diff);
  } else if (power_ == Dtype(2)) {
    PowerSquareBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
        count, diff_scale_, scale_, shift_, bottom[0]->gpu_data(), top_diff, bottom_diff);
  } else {
    PowerGeneralBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
        count, power_, diff_scale_, scale_, shift_, bottom[0]->gpu_data(), top[0]->gpu_data(),
        top_diff, bottom_diff);
  }
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(PowerLayer);

}  // namespace caffe
