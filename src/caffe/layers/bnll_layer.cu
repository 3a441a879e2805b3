// BNLL (softplus) on the GPU: one thread per element, with the CPU path's overflow-free forms and
// its mixed precision (exp in Dtype, the log and the division in double).
#include "caffe/layers/bnll_layer.hpp"

namespace caffe {

namespace {

// Above this input exp() would overflow in float; the gradient is 1 to working precision anyway.
constexpr double kBNLLThreshold = 50;

template <typename Dtype>
__global__ void BNLLForwardKernel(int count, const Dtype* bottom_data, Dtype* top_data) {
  CUDA_KERNEL_LOOP(i, count) {
    const Dtype x = bottom_data[i];
    // log(1 + e^x) = x + log(1 + e^-x): the form whose exp cannot overflow.
    top_data[i] = x > 0 ? x + log(1. + exp(-x)) : log(1. + exp(x));
  }
}

template <typename Dtype>
__global__ void BNLLBackwardKernel(int count, const Dtype* bottom_data, const Dtype* top_diff,
                                   Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, count) {
    const Dtype x = bottom_data[i];
    // exp(std::min(x, threshold)), NaN passing through as on the CPU.
    const Dtype expval = exp(Dtype(kBNLLThreshold) < x ? Dtype(kBNLLThreshold) : x);
    bottom_diff[i] = top_diff[i] * expval / (expval + 1.);
  }
}

}  // namespace

template <typename Dtype>
void BNLLLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  if (count == 0) return;
  BNLLForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void BNLLLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                    const Blobs<Dtype>& bottom) {
  const int count = bottom[0]->count();
  if (!propagate_down[0] || count == 0) return;
  BNLLBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(BNLLLayer);

}  // namespace caffe
