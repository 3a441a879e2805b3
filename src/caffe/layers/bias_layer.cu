// Bias on the GPU: one thread per element adds bias[d]; the bias gradient gives one thread block
// to each d, which sums the top gradient over outer and inner in a fixed order.
// Legend as in bias_layer.hpp: outer, D = the bias's count, inner.
#include "caffe/layers/bias_layer.hpp"
#include "caffe/util/gpu_block_reduce.cuh"

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

// bias_diff[d] = (accumulate ? bias_diff[d] : 0) + sum over o, i of top_diff at (o, d, i); one
// block per d (blockDim.x == kBlockReduceThreads).
template <typename Dtype>
__global__ void BiasBackwardKernel(int outer, int bias_dim, int inner, bool accumulate,
                                   const Dtype* top_diff, Dtype* bias_diff) {
  const int per_d = outer * inner;
  for (int d = blockIdx.x; d < bias_dim; d += gridDim.x) {
    Dtype sum = 0;
    for (int k = threadIdx.x; k < per_d; k += blockDim.x) {
      const int o = k / inner;
      sum += top_diff[(o * bias_dim + d) * inner + (k - o * inner)];
    }
    sum = BlockReduce(sum, BlockSumOp());
    if (threadIdx.x == 0) bias_diff[d] = accumulate ? bias_diff[d] + sum : sum;
  }
}

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
  if (propagate_down[0] && bottom[0] != top[0]) {
    caffe_gpu_copy(bottom[0]->count(), top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
  }
  const bool learned_bias = bottom.size() == 1;
  if (bias_dim_ > 0 && (learned_bias ? this->param_propagate_down(0) : propagate_down[1])) {
    Blob<Dtype>* bias = learned_bias ? this->blobs_[0].get() : bottom[1];
    // A learned param accumulates its diff (shared params, iter_size); a bottom's is set.
    BiasBackwardKernel<Dtype><<<bias_dim_, kBlockReduceThreads>>>(
        outer_, bias_dim_, inner_, learned_bias, top[0]->gpu_diff(), bias->mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(BiasLayer);

}  // namespace caffe
