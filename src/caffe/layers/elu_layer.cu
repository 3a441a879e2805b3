// ELU on the GPU: one thread per element, the CPU path's formulas.
#include "caffe/layers/elu_layer.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void ELUForwardKernel(int count, Dtype alpha, const Dtype* bottom_data,
                                 Dtype* top_data) {
  CUDA_KERNEL_LOOP(i, count) {
    const Dtype x = bottom_data[i];
    // std::max(x, 0) and std::min(x, 0), NaN passing through as on the CPU.
    const Dtype positive = x < Dtype(0) ? Dtype(0) : x;
    const Dtype negative = Dtype(0) < x ? Dtype(0) : x;
    top_data[i] = positive + alpha * (exp(negative) - Dtype(1));
  }
}

// For x <= 0, d/dx alpha (e^x - 1) = alpha e^x = y + alpha.
template <typename Dtype>
__global__ void ELUBackwardKernel(int count, Dtype alpha, const Dtype* bottom_data,
                                  const Dtype* top_data, const Dtype* top_diff,
                                  Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, count) {
    const Dtype x = bottom_data[i];
    bottom_diff[i] = top_diff[i] * (Dtype(x > 0) + (alpha + top_data[i]) * Dtype(x <= 0));
  }
}

}  // namespace

template <typename Dtype>
void ELULayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  if (count == 0) return;
  ELUForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, alpha_, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void ELULayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                   const Blobs<Dtype>& bottom) {
  const int count = bottom[0]->count();
  if (!propagate_down[0] || count == 0) return;
  ELUBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, alpha_, bottom[0]->gpu_data(), top[0]->gpu_data(), top[0]->gpu_diff(),
      bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(ELULayer);

}  // namespace caffe
