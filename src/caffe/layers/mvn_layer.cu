// MVN on the GPU: one thread block per row. Each thread keeps to the same elements of its row in
// every phase, and each phase's reduction completes before the next phase writes, so the layer
// may run in place (top == bottom, and bottom diff == top diff) as on the CPU.
// Legend as in mvn_layer.hpp: a row is one (n, c) slice (or one n), D its size.
#include <algorithm>

#include "caffe/kernels/gpu_block_reduce.cuh"
#include "caffe/layers/mvn_layer.hpp"

namespace caffe {

namespace {

// More blocks than this gain nothing; the kernels loop over the remaining rows.
constexpr int kMaxRowBlocks = 65535;

template <typename Dtype>
__global__ void MVNForwardKernel(int rows, int size, bool normalize_variance, Dtype eps,
                                 const Dtype* bottom_data, Dtype* top_data, Dtype* scale) {
  for (int r = blockIdx.x; r < rows; r += gridDim.x) {
    const Dtype* x = bottom_data + static_cast<size_t>(r) * size;
    Dtype* y = top_data + static_cast<size_t>(r) * size;
    Dtype partial = 0;
    for (int d = threadIdx.x; d < size; d += blockDim.x) partial += x[d];
    const Dtype mean = BlockReduce(partial, BlockSumOp()) / size;
    for (int d = threadIdx.x; d < size; d += blockDim.x) y[d] = x[d] - mean;
    if (!normalize_variance) continue;
    partial = 0;
    for (int d = threadIdx.x; d < size; d += blockDim.x) partial += y[d] * y[d];
    const Dtype row_scale = sqrt(BlockReduce(partial, BlockSumOp()) / size) + eps;
    if (threadIdx.x == 0) scale[r] = row_scale;
    for (int d = threadIdx.x; d < size; d += blockDim.x) y[d] /= row_scale;
  }
}

template <typename Dtype>
__global__ void MVNBackwardKernel(int rows, int size, bool normalize_variance,
                                  const Dtype* top_data, const Dtype* top_diff, const Dtype* scale,
                                  Dtype* bottom_diff) {
  for (int r = blockIdx.x; r < rows; r += gridDim.x) {
    const size_t start = static_cast<size_t>(r) * size;
    const Dtype* y = top_data + start;
    const Dtype* dy = top_diff + start;
    Dtype* dx = bottom_diff + start;
    Dtype partial_dy = 0;
    Dtype partial_y_dy = 0;
    for (int d = threadIdx.x; d < size; d += blockDim.x) {
      partial_dy += dy[d];
      partial_y_dy += y[d] * dy[d];
    }
    const Dtype sum_dy = BlockReduce(partial_dy, BlockSumOp());
    if (!normalize_variance) {
      const Dtype mean_dy = sum_dy / size;
      for (int d = threadIdx.x; d < size; d += blockDim.x) dx[d] = dy[d] - mean_dy;
      continue;
    }
    const Dtype sum_y_dy = BlockReduce(partial_y_dy, BlockSumOp());
    for (int d = threadIdx.x; d < size; d += blockDim.x) {
      dx[d] = (dy[d] - (y[d] * sum_y_dy + sum_dy) / size) / scale[r];
    }
  }
}

}  // namespace

template <typename Dtype>
void MVNLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  if (rows_ == 0 || row_size_ == 0) return;
  MVNForwardKernel<Dtype><<<std::min(rows_, kMaxRowBlocks), kBlockReduceThreads>>>(
      rows_, row_size_, normalize_variance_, eps_, bottom[0]->gpu_data(),
      top[0]->mutable_gpu_data(), scale_.mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void MVNLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                   const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  if (rows_ == 0 || row_size_ == 0) return;
  MVNBackwardKernel<Dtype><<<std::min(rows_, kMaxRowBlocks), kBlockReduceThreads>>>(
      rows_, row_size_, normalize_variance_, top[0]->gpu_data(), top[0]->gpu_diff(),
      scale_.gpu_data(), bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(MVNLayer);

}  // namespace caffe
