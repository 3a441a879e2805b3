// Filter on the GPU. Reshape has already read the selector on the host (the tops' shapes depend
// on it), so the selected item numbers go up to the device once per pass, and each top value is
// then gathered (or its diff scattered back) by one thread.
// Legend as in filter_layer.hpp: N items, K filtered bottoms, S selected items.
#include <algorithm>

#include "caffe/layers/filter_layer.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void FilterForwardKernel(int count, int item_size, const int* selected,
                                    const Dtype* bottom_data, Dtype* top_data) {
  CUDA_KERNEL_LOOP(j, count) {
    const int item = selected[j / item_size];
    top_data[j] = bottom_data[static_cast<size_t>(item) * item_size + j % item_size];
  }
}

// The selected items are distinct, so no two threads write the same value.
template <typename Dtype>
__global__ void FilterBackwardKernel(int count, int item_size, const int* selected,
                                     const Dtype* top_diff, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(j, count) {
    const int item = selected[j / item_size];
    bottom_diff[static_cast<size_t>(item) * item_size + j % item_size] = top_diff[j];
  }
}

}  // namespace

template <typename Dtype>
const int* FilterLayer<Dtype>::SelectedOnGpu() {
  selected_gpu_.Reshape(vector<int>{static_cast<int>(selected_.size())});
  std::copy(selected_.begin(), selected_.end(), selected_gpu_.mutable_cpu_data());
  return selected_gpu_.gpu_data();
}

template <typename Dtype>
void FilterLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  if (selected_.empty()) return;
  const int* selected = SelectedOnGpu();
  for (size_t k = 0; k < top.size(); ++k) {
    const int item_size = bottom[k]->count(1);
    const int count = static_cast<int>(selected_.size()) * item_size;
    if (count == 0) continue;
    FilterForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
        count, item_size, selected, bottom[k]->gpu_data(), top[k]->mutable_gpu_data());
    CUDA_POST_KERNEL_CHECK;
  }
}

template <typename Dtype>
void FilterLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                      const Blobs<Dtype>& bottom) {
  LAYER_CHECK(!propagate_down.back())
      << "cannot backpropagate to the selector bottom[" << bottom.size() - 1 << "]";
  const int* selected = selected_.empty() ? nullptr : SelectedOnGpu();
  for (size_t k = 0; k < top.size(); ++k) {
    if (!propagate_down[k]) continue;
    const int item_size = bottom[k]->count(1);
    Dtype* bottom_diff = bottom[k]->mutable_gpu_diff();
    caffe_gpu_set(bottom[k]->count(), Dtype(0), bottom_diff);
    const int count = static_cast<int>(selected_.size()) * item_size;
    if (count == 0) continue;
    FilterBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
        count, item_size, selected, top[k]->gpu_diff(), bottom_diff);
    CUDA_POST_KERNEL_CHECK;
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(FilterLayer);

}  // namespace caffe
