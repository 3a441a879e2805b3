// Log on the GPU: one thread per element, skipping the unit scale and zero shift as the CPU path
// does.
#include "caffe/layers/log_layer.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void LogForwardKernel(int count, Dtype scale, Dtype shift, Dtype base_scale,
                                 const Dtype* bottom_data, Dtype* top_data) {
  CUDA_KERNEL_LOOP(i, count) {
    Dtype x = bottom_data[i];
    if (scale != Dtype(1)) x *= scale;
    if (shift != Dtype(0)) x += shift;
    const Dtype y = log(x);
    top_data[i] = base_scale == Dtype(1) ? y : base_scale * y;
  }
}

template <typename Dtype>
__global__ void LogBackwardKernel(int count, Dtype scale, Dtype shift, Dtype num_scale,
                                  const Dtype* bottom_data, const Dtype* top_diff,
                                  Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, count) {
    Dtype x = bottom_data[i];
    if (scale != Dtype(1)) x *= scale;
    if (shift != Dtype(0)) x += shift;
    Dtype d = Dtype(1) / x;
    if (num_scale != Dtype(1)) d *= num_scale;
    bottom_diff[i] = top_diff[i] * d;
  }
}

}  // namespace

template <typename Dtype>
void LogLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  if (count == 0) return;
  LogForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, input_scale_, input_shift_, base_scale_, bottom[0]->gpu_data(),
      top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void LogLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                   const Blobs<Dtype>& bottom) {
  const int count = bottom[0]->count();
  if (!propagate_down[0] || count == 0) return;
  LogBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, input_scale_, input_shift_, backward_num_scale_, bottom[0]->gpu_data(),
      top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(LogLayer);

}  // namespace caffe
