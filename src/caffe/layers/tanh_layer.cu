// TanH on the GPU: one thread per element.
#include "caffe/layers/tanh_layer.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void TanHForwardKernel(int count, const Dtype* bottom_data, Dtype* top_data) {
  CUDA_KERNEL_LOOP(i, count) { top_data[i] = tanh(bottom_data[i]); }
}

// Reads only the top, so bottom_diff may be the top's diff (in place).
template <typename Dtype>
__global__ void TanHBackwardKernel(int count, const Dtype* top_data, const Dtype* top_diff,
                                   Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, count) {
    const Dtype tanh_x = top_data[i];
    bottom_diff[i] = top_diff[i] * (Dtype(1) - tanh_x * tanh_x);
  }
}

}  // namespace

template <typename Dtype>
void TanHLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  if (count == 0) return;
  TanHForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void TanHLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                    const Blobs<Dtype>& bottom) {
  const int count = bottom[0]->count();
  if (!propagate_down[0] || count == 0) return;
  TanHBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, top[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(TanHLayer);

}  // namespace caffe
