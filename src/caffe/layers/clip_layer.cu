// Clip on the GPU: one thread per element.
#include "caffe/layers/clip_layer.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void ClipForwardKernel(int count, Dtype min, Dtype max, const Dtype* bottom_data,
                                  Dtype* top_data) {
  CUDA_KERNEL_LOOP(i, count) {
    // std::max(min, std::min(x, max)), NaN passing through as on the CPU.
    const Dtype x = bottom_data[i];
    const Dtype upper_clipped = max < x ? max : x;
    top_data[i] = min < upper_clipped ? upper_clipped : min;
  }
}

// The bounds themselves pass the gradient (BVLC's rule).
template <typename Dtype>
__global__ void ClipBackwardKernel(int count, Dtype min, Dtype max, const Dtype* bottom_data,
                                   const Dtype* top_diff, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, count) {
    const Dtype x = bottom_data[i];
    bottom_diff[i] = top_diff[i] * Dtype(x >= min && x <= max);
  }
}

}  // namespace

template <typename Dtype>
void ClipLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  if (count == 0) return;
  ClipForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, min_, max_, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void ClipLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                    const Blobs<Dtype>& bottom) {
  const int count = bottom[0]->count();
  if (!propagate_down[0] || count == 0) return;
  ClipBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, min_, max_, bottom[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(ClipLayer);

}  // namespace caffe
