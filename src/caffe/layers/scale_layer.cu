// Scale on the GPU: one thread per element for the top (in place, the same pass keeps the copy
// of the input that the scale gradient needs, as the CPU path does). Backward sums the scale and
// bias gradients per d with ChannelSumsKernel (in double, in a fixed order) and writes the
// bottom gradient in the same pass, so top_diff is read once.
// Legend as in scale_layer.hpp: outer, D = the scale's count, inner.
#include "caffe/kernels/gpu_channel_sums.cuh"
#include "caffe/layers/scale_layer.hpp"

namespace caffe {

namespace {

// Each thread reads and writes only its own element, so top may be the bottom (in place).
// bias is null without bias_term; bottom_copy, when not null, receives the bottom.
template <typename Dtype>
__global__ void ScaleForwardKernel(int count, int scale_dim, int inner, const Dtype* bottom_data,
                                   const Dtype* scale, const Dtype* bias, Dtype* top_data,
                                   Dtype* bottom_copy) {
  CUDA_KERNEL_LOOP(index, count) {
    const int d = (index / inner) % scale_dim;
    const Dtype value = bottom_data[index];
    if (bottom_copy != nullptr) bottom_copy[index] = value;
    top_data[index] = bias != nullptr ? value * scale[d] + bias[d] : value * scale[d];
  }
}

// bottom_diff = top_diff * scale[d]; bottom_diff may be the top's diff (in place).
template <typename Dtype>
__global__ void ScaleBottomBackwardKernel(int count, int scale_dim, int inner,
                                          const Dtype* top_diff, const Dtype* scale,
                                          Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, count) {
    bottom_diff[index] = top_diff[index] * scale[(index / inner) % scale_dim];
  }
}

// ChannelSumsKernel's term: sums of top_diff (the bias gradient) and, with bottom_data, of
// top_diff * bottom_data (the scale gradient) per d; with bottom_diff, also bottom_diff =
// top_diff * scale[d], read before written, so the diffs may be one (in place).
template <typename Dtype>
struct ScaleBackwardTerm {
  const Dtype* top_diff;
  const Dtype* bottom_data;
  const Dtype* scale;
  Dtype* bottom_diff;
  __device__ void operator()(size_t j, int d, double (&sums)[2]) const {
    const Dtype dy = top_diff[j];
    sums[0] += dy;
    if (bottom_data != nullptr) sums[1] += static_cast<double>(dy) * bottom_data[j];
    if (bottom_diff != nullptr) bottom_diff[j] = dy * scale[d];
  }
};

}  // namespace

template <typename Dtype>
void ScaleLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  if (count == 0) return;
  const Dtype* bottom_data = bottom[0]->gpu_data();
  // In place, backward needs the input, which the output is about to overwrite.
  Dtype* bottom_copy = bottom[0] == top[0] ? bottom_copy_.mutable_gpu_data() : nullptr;
  saved_bottom_ = &bottom_copy_;
  const Dtype* scale = (bottom.size() > 1 ? bottom[1] : this->blobs_[0].get())->gpu_data();
  const Dtype* bias = bias_param_id_ >= 0 ? this->blobs_[bias_param_id_]->gpu_data() : nullptr;
  ScaleForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, scale_dim_, inner_, bottom_data, scale, bias, top[0]->mutable_gpu_data(), bottom_copy);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void ScaleLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                     const Blobs<Dtype>& bottom) {
  if (scale_dim_ == 0) return;  // nothing to scale, nothing to differentiate
  const Dtype* top_diff = top[0]->gpu_diff();
  const bool learned_scale = bottom.size() == 1;
  Blob<Dtype>* scale = learned_scale ? this->blobs_[0].get() : bottom[1];
  // A learned param accumulates its diff (shared params, iter_size); a bottom's is set.
  Dtype* scale_diff = (learned_scale ? this->param_propagate_down(0) : propagate_down[1])
                          ? scale->mutable_gpu_diff()
                          : nullptr;
  Dtype* bias_diff = bias_param_id_ >= 0 && this->param_propagate_down(bias_param_id_)
                         ? this->blobs_[bias_param_id_]->mutable_gpu_diff()
                         : nullptr;
  const int count = bottom[0]->count();
  Dtype* bottom_diff = propagate_down[0] && count > 0 ? bottom[0]->mutable_gpu_diff() : nullptr;
  if (scale_diff == nullptr && bias_diff == nullptr) {
    if (bottom_diff != nullptr) {
      ScaleBottomBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
          count, scale_dim_, inner_, top_diff, scale->gpu_data(), bottom_diff);
      CUDA_POST_KERNEL_CHECK;
    }
    return;
  }
  const Dtype* bottom_data = scale_diff == nullptr
                                 ? nullptr
                                 : (bottom[0] == top[0] ? saved_bottom_ : bottom[0])->gpu_data();
  const ChannelSumsGrid grid(outer_, scale_dim_, inner_);
  double* partials = partials_.mutable_gpu_data();
  ChannelSumsKernel<2><<<grid.blocks, grid.threads>>>(
      grid,
      ScaleBackwardTerm<Dtype>{top_diff, bottom_data,
                               bottom_diff == nullptr ? nullptr : scale->gpu_data(), bottom_diff},
      partials);
  CUDA_POST_KERNEL_CHECK;
  if (bias_diff != nullptr) {
    StoreChannelSumKernel<2><<<CAFFE_GET_BLOCKS(scale_dim_), CAFFE_CUDA_NUM_THREADS>>>(
        scale_dim_, grid.slices, partials, 0, 1.0, true, bias_diff);
    CUDA_POST_KERNEL_CHECK;
  }
  if (scale_diff != nullptr) {
    StoreChannelSumKernel<2><<<CAFFE_GET_BLOCKS(scale_dim_), CAFFE_CUDA_NUM_THREADS>>>(
        scale_dim_, grid.slices, partials, 1, 1.0, learned_scale, scale_diff);
    CUDA_POST_KERNEL_CHECK;
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(ScaleLayer);

}  // namespace caffe
