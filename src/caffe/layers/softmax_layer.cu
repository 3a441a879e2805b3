// Softmax on the GPU. A row of classes that is contiguous (inner == 1, the classifier case) gets
// one thread block, which reduces it cooperatively; otherwise each (outer, inner) position gets
// one thread that walks its C classes, neighbouring threads reading neighbouring positions.
// Legend as in softmax_layer.hpp: outer, C classes along the axis, inner.
#include <algorithm>

#include "caffe/kernels/gpu_block_reduce.cuh"
#include "caffe/layers/softmax_layer.hpp"

namespace caffe {

namespace {

// One block per row of `channels` contiguous values. Each thread reads and writes only its own
// elements, and the reductions finish before any write, so top may alias bottom.
template <typename Dtype>
__global__ void SoftmaxRowForwardKernel(int rows, int channels, const Dtype* bottom_data,
                                        Dtype* top_data) {
  for (int row = blockIdx.x; row < rows; row += gridDim.x) {
    const Dtype* x = bottom_data + static_cast<size_t>(row) * channels;
    Dtype* y = top_data + static_cast<size_t>(row) * channels;
    Dtype local_max = x[0];
    for (int c = threadIdx.x; c < channels; c += blockDim.x) local_max = max(local_max, x[c]);
    const Dtype row_max = BlockReduce(local_max, BlockMaxOp());
    Dtype local_sum = 0;
    for (int c = threadIdx.x; c < channels; c += blockDim.x) {
      y[c] = exp(x[c] - row_max);
      local_sum += y[c];
    }
    const Dtype row_sum = BlockReduce(local_sum, BlockSumOp());
    for (int c = threadIdx.x; c < channels; c += blockDim.x) y[c] /= row_sum;
  }
}

// One thread per (outer, inner) position, walking the C classes `inner` apart.
template <typename Dtype>
__global__ void SoftmaxColumnForwardKernel(int positions, int channels, int inner,
                                           const Dtype* bottom_data, Dtype* top_data) {
  CUDA_KERNEL_LOOP(position, positions) {
    const int o = position / inner;
    const int i = position % inner;
    const size_t start = static_cast<size_t>(o) * channels * inner + i;
    const Dtype* x = bottom_data + start;
    Dtype* y = top_data + start;
    Dtype column_max = x[0];
    for (int c = 1; c < channels; ++c) column_max = max(column_max, x[c * inner]);
    Dtype sum = 0;
    for (int c = 0; c < channels; ++c) {
      y[c * inner] = exp(x[c * inner] - column_max);
      sum += y[c * inner];
    }
    for (int c = 0; c < channels; ++c) y[c * inner] /= sum;
  }
}

// bottom_diff = (top_diff - sum_c top_diff * top) * top, one block per contiguous row. The dot
// product is complete before any write, so bottom_diff may alias top_diff.
template <typename Dtype>
__global__ void SoftmaxRowBackwardKernel(int rows, int channels, const Dtype* top_data,
                                         const Dtype* top_diff, Dtype* bottom_diff) {
  for (int row = blockIdx.x; row < rows; row += gridDim.x) {
    const size_t start = static_cast<size_t>(row) * channels;
    Dtype local_dot = 0;
    for (int c = threadIdx.x; c < channels; c += blockDim.x) {
      local_dot += top_diff[start + c] * top_data[start + c];
    }
    const Dtype dot = BlockReduce(local_dot, BlockSumOp());
    for (int c = threadIdx.x; c < channels; c += blockDim.x) {
      bottom_diff[start + c] = (top_diff[start + c] - dot) * top_data[start + c];
    }
  }
}

template <typename Dtype>
__global__ void SoftmaxColumnBackwardKernel(int positions, int channels, int inner,
                                            const Dtype* top_data, const Dtype* top_diff,
                                            Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(position, positions) {
    const int o = position / inner;
    const int i = position % inner;
    const size_t start = static_cast<size_t>(o) * channels * inner + i;
    Dtype dot = 0;
    for (int c = 0; c < channels; ++c) {
      dot += top_diff[start + c * inner] * top_data[start + c * inner];
    }
    for (int c = 0; c < channels; ++c) {
      const size_t j = start + c * inner;
      bottom_diff[j] = (top_diff[j] - dot) * top_data[j];
    }
  }
}

// More blocks than this gain nothing; the row kernels loop over the rest.
constexpr int kMaxRowBlocks = 65535;

}  // namespace

template <typename Dtype>
void SoftmaxLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  if (outer_num_ == 0 || channels_ == 0 || inner_num_ == 0) return;
  const Dtype* bottom_data = bottom[0]->gpu_data();
  Dtype* top_data = top[0]->mutable_gpu_data();
  if (inner_num_ == 1) {
    SoftmaxRowForwardKernel<Dtype><<<std::min(outer_num_, kMaxRowBlocks), kBlockReduceThreads>>>(
        outer_num_, channels_, bottom_data, top_data);
  } else {
    const int positions = outer_num_ * inner_num_;
    SoftmaxColumnForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(positions), CAFFE_CUDA_NUM_THREADS>>>(
        positions, channels_, inner_num_, bottom_data, top_data);
  }
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void SoftmaxLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                       const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  if (outer_num_ == 0 || channels_ == 0 || inner_num_ == 0) return;
  const Dtype* top_data = top[0]->gpu_data();
  const Dtype* top_diff = top[0]->gpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  if (inner_num_ == 1) {
    SoftmaxRowBackwardKernel<Dtype><<<std::min(outer_num_, kMaxRowBlocks), kBlockReduceThreads>>>(
        outer_num_, channels_, top_data, top_diff, bottom_diff);
  } else {
    const int positions = outer_num_ * inner_num_;
    SoftmaxColumnBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(positions), CAFFE_CUDA_NUM_THREADS>>>(
        positions, channels_, inner_num_, top_data, top_diff, bottom_diff);
  }
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(SoftmaxLayer);

}  // namespace caffe
