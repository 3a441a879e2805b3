// AbsVal on the GPU: one thread per element.
#include "caffe/layers/absval_layer.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void AbsValForwardKernel(int count, const Dtype* bottom_data, Dtype* top_data) {
  CUDA_KERNEL_LOOP(i, count) { top_data[i] = fabs(bottom_data[i]); }
}

// sign(x) * top_diff, the sign being 0 at x == 0 as on the CPU.
template <typename Dtype>
__global__ void AbsValBackwardKernel(int count, const Dtype* bottom_data, const Dtype* top_diff,
                                     Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, count) {
    const Dtype x = bottom_data[i];
    const Dtype sign = Dtype(x > 0) - Dtype(x < 0);
    bottom_diff[i] = sign * top_diff[i];
  }
}

}  // namespace

template <typename Dtype>
void AbsValLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  if (count == 0) return;
  AbsValForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void AbsValLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                      const Blobs<Dtype>& bottom) {
  const int count = bottom[0]->count();
  if (!propagate_down[0] || count == 0) return;
  AbsValBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, bottom[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(AbsValLayer);

}  // namespace caffe
