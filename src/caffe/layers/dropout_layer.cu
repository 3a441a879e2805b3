// Dropout on the GPU. TRAIN draws 32-bit uniform integers with cuRAND into the mask and keeps an
// element when its integer is at least dropout_ratio * 2^32, which it does with probability
// 1 - dropout_ratio (exactly 1 for ratio 0); the mask then holds 1 (kept) or 0 (dropped), as on
// the CPU path, and backward applies the same mask. TEST is the identity. The GPU draws differ
// from the CPU's (another generator), but the distribution and the scale are the same.
#include <algorithm>

#include "caffe/layers/dropout_layer.hpp"

namespace caffe {

namespace {

// Turns the raw draws in `mask` into 0/1 and applies them; reads x before writing y, so top may
// be the bottom (in place).
template <typename Dtype>
__global__ void DropoutForwardKernel(int count, unsigned int keep_threshold, Dtype scale,
                                     const Dtype* bottom_data, unsigned int* mask,
                                     Dtype* top_data) {
  CUDA_KERNEL_LOOP(i, count) {
    const unsigned int keep = mask[i] >= keep_threshold ? 1u : 0u;
    mask[i] = keep;
    top_data[i] = bottom_data[i] * Dtype(keep) * scale;
  }
}

template <typename Dtype>
__global__ void DropoutBackwardKernel(int count, Dtype scale, const unsigned int* mask,
                                      const Dtype* top_diff, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, count) { bottom_diff[i] = top_diff[i] * Dtype(mask[i]) * scale; }
}

}  // namespace

template <typename Dtype>
void DropoutLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  if (count == 0) return;
  const Dtype* bottom_data = bottom[0]->gpu_data();
  Dtype* top_data = top[0]->mutable_gpu_data();
  if (this->phase_ != TRAIN) {
    caffe_gpu_copy(count, bottom_data, top_data);  // a no-op in place
    return;
  }
  unsigned int* mask = mask_.mutable_gpu_data();
  caffe_gpu_rng_uniform(count, mask);
  // P(draw >= t) = 1 - t / 2^32 for a uniform 32-bit draw; threshold_ < 1 keeps t below 2^32.
  const double scaled_ratio = static_cast<double>(threshold_) * 4294967296.0;
  const unsigned int keep_threshold =
      static_cast<unsigned int>(std::min(scaled_ratio, 4294967295.0));
  DropoutForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, keep_threshold, scale_, bottom_data, mask, top_data);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void DropoutLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                       const Blobs<Dtype>& bottom) {
  const int count = bottom[0]->count();
  if (!propagate_down[0] || count == 0) return;
  const Dtype* top_diff = top[0]->gpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  if (this->phase_ != TRAIN) {
    caffe_gpu_copy(count, top_diff, bottom_diff);
    return;
  }
  DropoutBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, scale_, mask_.gpu_data(), top_diff, bottom_diff);
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(DropoutLayer);

}  // namespace caffe
