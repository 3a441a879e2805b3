// PReLU on the GPU: one thread per element for the top and the bottom gradient; the slope gradient
// gives one thread block to each channel, which sums over the batch and the spatial positions in
// a fixed order (so repeated runs agree bit for bit).
// Legend as in prelu_layer.hpp: N batch, C channels, S = product of the axes after the channels.
#include "caffe/layers/prelu_layer.hpp"
#include "caffe/util/gpu_block_reduce.cuh"

namespace caffe {

namespace {

// `inner` is S; the channel of element i is (i / S) % C, or 0 with a shared slope.
template <typename Dtype>
__global__ void PReLUForwardKernel(int count, int channels, int inner, bool shared,
                                   const Dtype* slope, const Dtype* bottom_data, Dtype* top_data) {
  CUDA_KERNEL_LOOP(i, count) {
    const int c = shared ? 0 : (i / inner) % channels;
    const Dtype x = bottom_data[i];
    // std::max(x, 0) and std::min(x, 0), NaN passing through as on the CPU.
    const Dtype positive = x < Dtype(0) ? Dtype(0) : x;
    const Dtype negative = Dtype(0) < x ? Dtype(0) : x;
    top_data[i] = positive + slope[c] * negative;
  }
}

template <typename Dtype>
__global__ void PReLUBackwardKernel(int count, int channels, int inner, bool shared,
                                    const Dtype* slope, const Dtype* bottom_data,
                                    const Dtype* top_diff, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, count) {
    const int c = shared ? 0 : (i / inner) % channels;
    const Dtype x = bottom_data[i];
    bottom_diff[i] = top_diff[i] * (Dtype(x > 0) + slope[c] * Dtype(x <= 0));
  }
}

// slope_diff[c] += sum over n < outer, s < inner of top_diff * x * (x <= 0) at (n, c, s); one
// block per channel (blockDim.x == kBlockReduceThreads). A shared slope is called with outer 1,
// channels 1 and inner = count.
template <typename Dtype>
__global__ void PReLUSlopeBackwardKernel(int outer, int channels, int inner,
                                         const Dtype* bottom_data, const Dtype* top_diff,
                                         Dtype* slope_diff) {
  const int per_channel = outer * inner;
  for (int c = blockIdx.x; c < channels; c += gridDim.x) {
    Dtype sum = 0;
    for (int k = threadIdx.x; k < per_channel; k += blockDim.x) {
      const int n = k / inner;
      const int index = (n * channels + c) * inner + (k - n * inner);
      const Dtype x = bottom_data[index];
      sum += top_diff[index] * x * Dtype(x <= 0);
    }
    sum = BlockReduce(sum, BlockSumOp());
    if (threadIdx.x == 0) slope_diff[c] += sum;
  }
}

}  // namespace

template <typename Dtype>
void PReLULayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  if (count == 0) return;
  const Dtype* bottom_data = bottom[0]->gpu_data();
  // In place the input is about to be overwritten; backward needs it.
  if (top[0] == bottom[0]) caffe_gpu_copy(count, bottom_data, bottom_memory_.mutable_gpu_data());
  PReLUForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, channels_, bottom[0]->count(2), channel_shared_, this->blobs_[0]->gpu_data(),
      bottom_data, top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void PReLULayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                     const Blobs<Dtype>& bottom) {
  const int count = bottom[0]->count();
  if (count == 0) return;
  const Dtype* bottom_data =
      top[0] == bottom[0] ? bottom_memory_.gpu_data() : bottom[0]->gpu_data();
  const Dtype* top_diff = top[0]->gpu_diff();
  const int inner = bottom[0]->count(2);
  // The slope gradient first: in place, the bottom diff below overwrites the top diff.
  if (this->param_propagate_down_[0]) {
    const int outer = channel_shared_ ? 1 : count / (channels_ * inner);
    const int channels = channel_shared_ ? 1 : channels_;
    const int slope_inner = channel_shared_ ? count : inner;
    PReLUSlopeBackwardKernel<Dtype><<<channels, kBlockReduceThreads>>>(
        outer, channels, slope_inner, bottom_data, top_diff, this->blobs_[0]->mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
  }
  if (propagate_down[0]) {
    PReLUBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
        count, channels_, inner, channel_shared_, this->blobs_[0]->gpu_data(), bottom_data,
        top_diff, bottom[0]->mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(PReLULayer);

}  // namespace caffe
