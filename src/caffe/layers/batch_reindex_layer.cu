// BatchReindex on the GPU. The indices are checked on the host first, as on the CPU (they are M
// values, and a bad one must be reported, not followed). Forward gathers one value per thread;
// backward gives each bottom value one thread, which sums the top values that picked it in index
// order, so repeated picks need no atomics and add up in the CPU's order.
// Legend as in batch_reindex_layer.hpp: N items, M indices, I values per item.
#include "caffe/layers/batch_reindex_layer.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void BatchReindexForwardKernel(int count, int item_size, const Dtype* index_data,
                                          const Dtype* bottom_data, Dtype* top_data) {
  CUDA_KERNEL_LOOP(j, count) {
    const int m = j / item_size;
    const int item = static_cast<int>(index_data[m]);
    top_data[j] = bottom_data[static_cast<size_t>(item) * item_size + j % item_size];
  }
}

template <typename Dtype>
__global__ void BatchReindexBackwardKernel(int count, int item_size, int indices,
                                           const Dtype* index_data, const Dtype* top_diff,
                                           Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(j, count) {
    const int item = j / item_size;
    const int d = j % item_size;
    Dtype sum = 0;
    for (int m = 0; m < indices; ++m) {
      if (static_cast<int>(index_data[m]) == item) {
        sum += top_diff[static_cast<size_t>(m) * item_size + d];
      }
    }
    bottom_diff[j] = sum;
  }
}

}  // namespace

template <typename Dtype>
void BatchReindexLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int items = bottom[0]->shape(0);
  const int indices = bottom[1]->count();
  const Dtype* host_index = bottom[1]->cpu_data();
  for (int m = 0; m < indices; ++m) {
    const Dtype value = host_index[m];
    LAYER_CHECK(value >= 0 && value < items && value == static_cast<Dtype>(static_cast<int>(value)))
        << "bottom[1] value " << value << " at position " << m
        << " is not a valid index: indices must be integers in [0, " << items << ") for bottom[0] "
        << bottom[0]->shape_string();
  }
  const int count = top[0]->count();
  if (count == 0) return;
  BatchReindexForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, bottom[0]->count(1), bottom[1]->gpu_data(), bottom[0]->gpu_data(),
      top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void BatchReindexLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top,
                                            const vector<bool>& propagate_down,
                                            const Blobs<Dtype>& bottom) {
  LAYER_CHECK(!propagate_down[1])
      << "cannot backpropagate to bottom[1]: it holds indices, which have no gradient";
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  if (count == 0) return;
  BatchReindexBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, bottom[0]->count(1), bottom[1]->count(), bottom[1]->gpu_data(), top[0]->gpu_diff(),
      bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(BatchReindexLayer);

}  // namespace caffe
