// Swish on the GPU: one thread per element; forward saves sigmoid(beta x) for backward, as the
// CPU path does.
#include "caffe/layers/swish_layer.hpp"

namespace caffe {

namespace {

// Reads x before writing y, so top may be the bottom (in place).
template <typename Dtype>
__global__ void SwishForwardKernel(int count, Dtype beta, const Dtype* bottom_data, Dtype* sigmoid,
                                   Dtype* top_data) {
  CUDA_KERNEL_LOOP(i, count) {
    const Dtype x = bottom_data[i];
    // The Sigmoid layer's form, which cannot overflow.
    const Dtype s = Dtype(0.5) * tanh(Dtype(0.5) * (beta * x)) + Dtype(0.5);
    sigmoid[i] = s;
    top_data[i] = x * s;
  }
}

// d/dx x s(beta x) = s + beta x s (1 - s) = beta y + s (1 - beta y): reads only the top and s.
template <typename Dtype>
__global__ void SwishBackwardKernel(int count, Dtype beta, const Dtype* top_data,
                                    const Dtype* sigmoid, const Dtype* top_diff,
                                    Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, count) {
    const Dtype y = top_data[i];
    bottom_diff[i] = top_diff[i] * (beta * y + sigmoid[i] * (Dtype(1) - beta * y));
  }
}

}  // namespace

template <typename Dtype>
void SwishLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  if (count == 0) return;
  SwishForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, beta_, bottom[0]->gpu_data(), sigmoid_.mutable_gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void SwishLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                     const Blobs<Dtype>& bottom) {
  const int count = bottom[0]->count();
  if (!propagate_down[0] || count == 0) return;
  SwishBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, beta_, top[0]->gpu_data(), sigmoid_.gpu_data(), top[0]->gpu_diff(),
      bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(SwishLayer);

}  // namespace caffe
