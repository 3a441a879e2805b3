// Bias on the GPU: one thread per element adds bias[d]; the bias gradient sums the top gradient
// over outer and inner per d with ChannelSumsKernel (in double, in a fixed order), copying it to
// the bottom gradient in the same pass.
// Legend as in bias_layer.hpp: outer, D = the bias's count, inner.
#include "caffe/kernels/gpu_channel_sums.cuh"
#include "caffe/layers/bias_layer.hpp"

namespace caffe {

namespace {

// Each thread reads and writes only its own element, so top may be the bottom (in place).
template <typename Dtype>
__global__ void BiasForwardKernel(int count, int bias_dim, int inner, const Dtype* bottom_data,
                                  const Dtype* bias, Dtype* top_data) {
  CUDA_KERNEL_LOOP(index, count) {
    top_data[index] = bottom_data[index] + bias[(index / inner) % bias_dim];
  }
}

// ChannelSumsKernel's term: the sum of top_diff per d; with bottom_diff, also bottom_diff =
// top_diff.
template <typename Dtype>
struct BiasBackwardTerm {
  const Dtype* top_diff;
  Dtype* bottom_diff;
  __device__ void operator()(size_t j, int, double (&sums)[1]) const {
    const Dtype dy = top_diff[j];
    sums[0] += dy;
    if (bottom_diff != nullptr) bottom_diff[j] = dy;
  }
};

}  // namespace

template <typename Dtype>
void BiasLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = top[0]->count();
  if (count == 0) return;
  const Dtype* bias = (bottom.size() > 1 ? bottom[1] : this->blobs_[0].get())->gpu_data();
  BiasForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, bias_dim_, inner_, bottom[0]->gpu_data(), bias, top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void BiasLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                    const Blobs<Dtype>& bottom) {
  // In place the bottom's diff already is the top's.
  const bool copy_diff = propagate_down[0] && bottom[0] != top[0];
  const bool learned_bias = bottom.size() == 1;
  if (bias_dim_ == 0 || !(learned_bias ? this->param_propagate_down(0) : propagate_down[1])) {
    if (copy_diff) {
      caffe_gpu_copy(bottom[0]->count(), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
    }
    return;
  }
  Blob<Dtype>* bias = learned_bias ? this->blobs_[0].get() : bottom[1];
  const ChannelSumsGrid grid(outer_, bias_dim_, inner_);
  double* partials = partials_.mutable_gpu_data();
  ChannelSumsKernel<1><<<grid.blocks, grid.threads>>>(
      grid,
      BiasBackwardTerm<Dtype>{top[0]->gpu_diff(),
                              copy_diff ? bottom[0]->mutable_gpu_diff() : nullptr},
      partials);
  CUDA_POST_KERNEL_CHECK;
  // A learned param accumulates its diff (shared params, iter_size); a bottom's is set.
  StoreChannelSumKernel<1><<<CAFFE_GET_BLOCKS(bias_dim_), CAFFE_CUDA_NUM_THREADS>>>(
      bias_dim_, grid.slices, partials, 0, 1.0, learned_bias, bias->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(BiasLayer);

}  // namespace caffe
