// ReLU on the GPU: one thread per element, the CPU path's formulas (products rather than
// selections, so the signed zeros agree too).
#include "caffe/layers/relu_layer.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void ReLUForwardKernel(int count, Dtype negative_slope, const Dtype* bottom_data,
                                  Dtype* top_data) {
  CUDA_KERNEL_LOOP(i, count) {
    const Dtype x = bottom_data[i];
    // std::max(x, 0) and std::min(x, 0), NaN passing through as on the CPU.
    const Dtype positive = x < Dtype(0) ? Dtype(0) : x;
    const Dtype negative = Dtype(0) < x ? Dtype(0) : x;
    top_data[i] = positive + negative_slope * negative;
  }
}

template <typename Dtype>
__global__ void ReLUBackwardKernel(int count, Dtype negative_slope, const Dtype* bottom_data,
                                   const Dtype* top_diff, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, count) {
    const Dtype x = bottom_data[i];
    bottom_diff[i] = top_diff[i] * (Dtype(x > 0) + negative_slope * Dtype(x <= 0));
  }
}

}  // namespace

template <typename Dtype>
void ReLULayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  if (count == 0) return;
  ReLUForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, negative_slope_, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void ReLULayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                    const Blobs<Dtype>& bottom) {
  const int count = bottom[0]->count();
  if (!propagate_down[0] || count == 0) return;
  // In place "bottom" holds the output, which has the input's sign (see the header).
  ReLUBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, negative_slope_, bottom[0]->gpu_data(), top[0]->gpu_diff(),
      bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(ReLULayer);

}  // namespace caffe
