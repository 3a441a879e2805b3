// Threshold on the GPU: the forward step function, one thread per element. There is no GPU
// backward: the CPU one only rejects propagate_down and touches no data.
#include "caffe/layers/threshold_layer.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void ThresholdForwardKernel(int count, Dtype threshold, const Dtype* bottom_data,
                                       Dtype* top_data) {
  CUDA_KERNEL_LOOP(i, count) { top_data[i] = bottom_data[i] > threshold ? 1 : 0; }
}

}  // namespace

template <typename Dtype>
void ThresholdLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  if (count == 0) return;
  ThresholdForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, threshold_, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FORWARD(ThresholdLayer);

}  // namespace caffe
