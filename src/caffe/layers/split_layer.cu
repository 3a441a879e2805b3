// Split on the GPU: the tops share the bottom's memory (since Reshape) as on the CPU; backward sums
// the tops' diffs on the device.
#include "caffe/layers/split_layer.hpp"

namespace caffe {

template <typename Dtype>
void SplitLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  // Nothing to do: Reshape, which Forward runs first, made the tops share the bottom's data.
}

template <typename Dtype>
void SplitLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                     const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  if (top.size() == 1) {
    caffe_gpu_copy(count_, top[0]->gpu_diff(), bottom_diff);
    return;
  }
  caffe_gpu_add(count_, top[0]->gpu_diff(), top[1]->gpu_diff(), bottom_diff);
  for (size_t i = 2; i < top.size(); ++i) {
    caffe_gpu_axpy(count_, Dtype(1), top[i]->gpu_diff(), bottom_diff);
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(SplitLayer);

}  // namespace caffe
