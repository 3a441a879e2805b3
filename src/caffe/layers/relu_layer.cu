// ReLU on the GPU: one thread per element, the CPU path's formulas (gpu_relu.cuh).
#include "caffe/kernels/gpu_relu.cuh"
#include "caffe/layers/relu_layer.hpp"

namespace caffe {

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
