// PReLU on the GPU: one thread per element for the top and the bottom gradient; the slope gradient
// sums over the batch and the spatial positions per channel with ChannelSumsKernel (in double, in
// a fixed order, so repeated runs agree bit for bit), writing the bottom gradient in the same pass.
// Legend as in prelu_layer.hpp: N batch, C channels, S = product of the axes after the channels.
#include "caffe/kernels/gpu_channel_sums.cuh"
#include "caffe/layers/prelu_layer.hpp"

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

// The bottom gradient of one value x with top gradient dy and slope a.
template <typename Dtype>
__device__ Dtype PReLUBottomDiff(Dtype x, Dtype dy, Dtype slope) {
  return dy * (Dtype(x > 0) + slope * Dtype(x <= 0));
}

template <typename Dtype>
__global__ void PReLUBackwardKernel(int count, int channels, int inner, bool shared,
                                    const Dtype* slope, const Dtype* bottom_data,
                                    const Dtype* top_diff, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, count) {
    const int c = shared ? 0 : (i / inner) % channels;
    bottom_diff[i] = PReLUBottomDiff(bottom_data[i], top_diff[i], slope[c]);
  }
}

// ChannelSumsKernel's term over (outer, slopes, inner): the sum of top_diff * x * (x <= 0) per
// slope; with bottom_diff, also the bottom gradient, top_diff read before written (in place the
// diffs are one).
template <typename Dtype>
struct PReLUBackwardTerm {
  const Dtype* bottom_data;
  const Dtype* top_diff;
  const Dtype* slope;
  Dtype* bottom_diff;
  __device__ void operator()(size_t j, int c, double (&sums)[1]) const {
    const Dtype x = bottom_data[j];
    const Dtype dy = top_diff[j];
    sums[0] += dy * x * Dtype(x <= 0);
    if (bottom_diff != nullptr) bottom_diff[j] = PReLUBottomDiff(x, dy, slope[c]);
  }
};

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
  Dtype* bottom_diff = propagate_down[0] ? bottom[0]->mutable_gpu_diff() : nullptr;
  if (!this->param_propagate_down_[0]) {
    if (bottom_diff != nullptr) {
      PReLUBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
          count, channels_, inner, channel_shared_, this->blobs_[0]->gpu_data(), bottom_data,
          top_diff, bottom_diff);
      CUDA_POST_KERNEL_CHECK;
    }
    return;
  }
  const int slopes = channel_shared_ ? 1 : channels_;
  const ChannelSumsGrid grid(slope_outer_, slopes, slope_inner_);
  double* partials = partials_.mutable_gpu_data();
  const PReLUBackwardTerm<Dtype> term{bottom_data, top_diff, this->blobs_[0]->gpu_data(),
                                      bottom_diff};
  ChannelSumsKernel<1><<<grid.blocks, grid.threads>>>(grid, term, partials);
  CUDA_POST_KERNEL_CHECK;
  StoreChannelSumKernel<1><<<CAFFE_GET_BLOCKS(slopes), CAFFE_CUDA_NUM_THREADS>>>(
      slopes, grid.slices, partials, 0, 1.0, true, this->blobs_[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(PReLULayer);

}  // namespace caffe
