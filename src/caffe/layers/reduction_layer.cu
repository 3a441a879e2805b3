// Reduction on the GPU: one thread block per output reduces its D values; backward is one
// thread per input value.
// Legend as in reduction_layer.hpp: M outputs, D values reduced into each.
#include <algorithm>

#include "caffe/kernels/gpu_block_reduce.cuh"
#include "caffe/layers/reduction_layer.hpp"

namespace caffe {

namespace {

// More blocks than this gain nothing; the kernel loops over the remaining outputs.
constexpr int kMaxReductionBlocks = 65535;

template <typename Dtype>
__global__ void ReductionForwardKernel(int outer, int inner, ReductionParameter_ReductionOp op,
                                       Dtype coeff, const Dtype* bottom_data, Dtype* top_data) {
  for (int m = blockIdx.x; m < outer; m += gridDim.x) {
    const Dtype* x = bottom_data + static_cast<size_t>(m) * inner;
    Dtype partial = 0;
    for (int d = threadIdx.x; d < inner; d += blockDim.x) {
      switch (op) {
        case ReductionParameter_ReductionOp_ASUM:
          partial += fabs(x[d]);
          break;
        case ReductionParameter_ReductionOp_SUMSQ:
          partial += x[d] * x[d];
          break;
        default:  // SUM and MEAN (whose 1/D is in coeff)
          partial += x[d];
          break;
      }
    }
    const Dtype value = BlockReduce(partial, BlockSumOp());
    if (threadIdx.x == 0) top_data[m] = coeff == Dtype(1) ? value : coeff * value;
  }
}

template <typename Dtype>
__global__ void ReductionBackwardKernel(int count, int inner, ReductionParameter_ReductionOp op,
                                        Dtype coeff, const Dtype* bottom_data,
                                        const Dtype* top_diff, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(j, count) {
    const Dtype scale = top_diff[j / inner] * coeff;
    const Dtype x = bottom_data[j];
    switch (op) {
      case ReductionParameter_ReductionOp_ASUM:
        bottom_diff[j] = (Dtype(x > 0) - Dtype(x < 0)) * scale;
        break;
      case ReductionParameter_ReductionOp_SUMSQ:
        bottom_diff[j] = 2 * scale * x;
        break;
      default:  // SUM and MEAN
        bottom_diff[j] = scale;
        break;
    }
  }
}

}  // namespace

template <typename Dtype>
void ReductionLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  switch (op_) {
    case ReductionParameter_ReductionOp_SUM:
    case ReductionParameter_ReductionOp_MEAN:
    case ReductionParameter_ReductionOp_ASUM:
    case ReductionParameter_ReductionOp_SUMSQ:
      break;
    default:
      LAYER_THROW() << "unknown reduction_param.operation " << op_;
  }
  if (outer_ == 0) return;
  ReductionForwardKernel<Dtype><<<std::min(outer_, kMaxReductionBlocks), kBlockReduceThreads>>>(
      outer_, inner_, op_, coeff_, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void ReductionLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top,
                                         const vector<bool>& propagate_down,
                                         const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  if (count == 0) return;
  ReductionBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, inner_, op_, coeff_, bottom[0]->gpu_data(), top[0]->gpu_diff(),
      bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(ReductionLayer);

}  // namespace caffe
