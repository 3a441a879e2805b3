// Exp on the GPU: one thread per element, skipping the unit factors as the CPU path does.
#include "caffe/layers/exp_layer.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void ExpForwardKernel(int count, Dtype inner_scale, Dtype outer_scale,
                                 const Dtype* bottom_data, Dtype* top_data) {
  CUDA_KERNEL_LOOP(i, count) {
    const Dtype x = inner_scale == Dtype(1) ? bottom_data[i] : inner_scale * bottom_data[i];
    top_data[i] = outer_scale == Dtype(1) ? exp(x) : outer_scale * exp(x);
  }
}

// Reads only the top, so bottom_diff may be the top's diff (in place).
template <typename Dtype>
__global__ void ExpBackwardKernel(int count, Dtype inner_scale, const Dtype* top_data,
                                  const Dtype* top_diff, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, count) {
    const Dtype d = top_data[i] * top_diff[i];
    bottom_diff[i] = inner_scale == Dtype(1) ? d : inner_scale * d;
  }
}

}  // namespace

template <typename Dtype>
void ExpLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  if (count == 0) return;
  ExpForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, inner_scale_, outer_scale_, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void ExpLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                   const Blobs<Dtype>& bottom) {
  const int count = bottom[0]->count();
  if (!propagate_down[0] || count == 0) return;
  ExpBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, inner_scale_, top[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(ExpLayer);

}  // namespace caffe
