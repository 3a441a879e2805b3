// Sigmoid on the GPU: one thread per element, in the CPU path's tanh form (no exp overflow).
#include "caffe/layers/sigmoid_layer.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void SigmoidForwardKernel(int count, const Dtype* bottom_data, Dtype* top_data) {
  CUDA_KERNEL_LOOP(i, count) {
    top_data[i] = Dtype(0.5) * tanh(Dtype(0.5) * bottom_data[i]) + Dtype(0.5);
  }
}

// Reads only the top, so bottom_diff may be the top's diff (in place).
template <typename Dtype>
__global__ void SigmoidBackwardKernel(int count, const Dtype* top_data, const Dtype* top_diff,
                                      Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, count) {
    const Dtype sigmoid_x = top_data[i];
    bottom_diff[i] = top_diff[i] * sigmoid_x * (Dtype(1) - sigmoid_x);
  }
}

}  // namespace

template <typename Dtype>
void SigmoidLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  if (count == 0) return;
  SigmoidForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void SigmoidLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                       const Blobs<Dtype>& bottom) {
  const int count = bottom[0]->count();
  if (!propagate_down[0] || count == 0) return;
  SigmoidBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, top[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(SigmoidLayer);

}  // namespace caffe
