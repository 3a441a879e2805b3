// Scale on the GPU: one thread per element for the top and the bottom gradient; the scale and
// bias gradients give one thread block to each d, which sums over outer and inner in a fixed
// order. In place, forward keeps a copy of the input for the scale gradient, as the CPU path does.
// Legend as in scale_layer.hpp: outer, D = the scale's count, inner.
#include "caffe/layers/scale_layer.hpp"
#include "caffe/util/gpu_block_reduce.cuh"

namespace caffe {

namespace {

// Each thread reads and writes only its own element, so top may be the bottom (in place).
// bias is null without bias_term.
template <typename Dtype>
__global__ void ScaleForwardKernel(int count, int scale_dim, int inner, const Dtype* bottom_data,
                                   const Dtype* scale, const Dtype* bias, Dtype* top_data) {
  CUDA_KERNEL_LOOP(index, count) {
    const int d = (index / inner) % scale_dim;
    top_data[index] =
        bias != nullptr ? bottom_data[index] * scale[d] + bias[d] : bottom_data[index] * scale[d];
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

// out[d] = (accumulate ? out[d] : 0) + sum over o, i of top_diff (* bottom_data, when not null)
// at (o, d, i): the scale gradient with bottom_data, the bias gradient without. One block per d
// (blockDim.x == kBlockReduceThreads).
template <typename Dtype>
__global__ void ScaleParamBackwardKernel(int outer, int scale_dim, int inner, bool accumulate,
                                         const Dtype* top_diff, const Dtype* bottom_data,
                                         Dtype* out) {
  const int per_d = outer * inner;
  for (int d = blockIdx.x; d < scale_dim; d += gridDim.x) {
    Dtype sum = 0;
    for (int k = threadIdx.x; k < per_d; k += blockDim.x) {
      const int o = k / inner;
      const int index = (o * scale_dim + d) * inner + (k - o * inner);
      sum += bottom_data != nullptr ? top_diff[index] * bottom_data[index] : top_diff[index];
    }
    sum = BlockReduce(sum, BlockSumOp());
    if (threadIdx.x == 0) out[d] = accumulate ? out[d] + sum : sum;
  }
}

}  // namespace

template <typename Dtype>
void ScaleLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  if (count == 0) return;
  const Dtype* bottom_data = bottom[0]->gpu_data();
  if (bottom[0] == top[0]) {
    // Backward needs the input, which the output is about to overwrite.
    caffe_gpu_copy(count, bottom_data, bottom_copy_.mutable_gpu_data());
  }
  const Dtype* scale = (bottom.size() > 1 ? bottom[1] : this->blobs_[0].get())->gpu_data();
  const Dtype* bias = bias_param_id_ >= 0 ? this->blobs_[bias_param_id_]->gpu_data() : nullptr;
  ScaleForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, scale_dim_, inner_, bottom_data, scale, bias, top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void ScaleLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                     const Blobs<Dtype>& bottom) {
  if (scale_dim_ == 0) return;  // nothing to scale, nothing to differentiate
  const Dtype* top_diff = top[0]->gpu_diff();
  // Param diffs first: in place, bottom[0]'s diff is the top's and is overwritten last.
  if (bias_param_id_ >= 0 && this->param_propagate_down(bias_param_id_)) {
    ScaleParamBackwardKernel<Dtype><<<scale_dim_, kBlockReduceThreads>>>(
        outer_, scale_dim_, inner_, true, top_diff, static_cast<const Dtype*>(nullptr),
        this->blobs_[bias_param_id_]->mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
  }
  const bool learned_scale = bottom.size() == 1;
  Blob<Dtype>* scale = learned_scale ? this->blobs_[0].get() : bottom[1];
  if (learned_scale ? this->param_propagate_down(0) : propagate_down[1]) {
    const Dtype* bottom_data = (bottom[0] == top[0] ? &bottom_copy_ : bottom[0])->gpu_data();
    // A learned param accumulates its diff (shared params, iter_size); a bottom's is set.
    ScaleParamBackwardKernel<Dtype>
        <<<scale_dim_, kBlockReduceThreads>>>(outer_, scale_dim_, inner_, learned_scale, top_diff,
                                              bottom_data, scale->mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
  }
  const int count = bottom[0]->count();
  if (propagate_down[0] && count > 0) {
    ScaleBottomBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
        count, scale_dim_, inner_, top_diff, scale->gpu_data(), bottom[0]->mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(ScaleLayer);

}  // namespace caffe
