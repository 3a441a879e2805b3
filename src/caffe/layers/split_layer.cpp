#include "caffe/layers/split_layer.hpp"

namespace caffe {

template <typename Dtype>
void SplitLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  count_ = bottom[0]->count();
  // The tops share the bottom's memory from here on, not from Forward on: a top's own memory,
  // made by ReshapeLike, would otherwise be freed inside Forward, under anything that holds it
  // for that step (LMS's plan names it and pins it, a HostView maps it).
  for (size_t i = 0; i < top.size(); ++i) {
    top[i]->ReshapeLike(*bottom[0]);
    top[i]->ShareData(*bottom[0]);
  }
}

template <typename Dtype>
void SplitLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  // Nothing to do: Reshape, which Forward runs first, made the tops share the bottom's data.
}

template <typename Dtype>
void SplitLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                     const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  // Element-wise, in the channel blocks of the values (the gradient goes where they went).
  const int block = bottom[0]->cpu_data_block();
  const Dtype* first = top[0]->cpu_diff_in(block);
  const Dtype* second = top.size() > 1 ? top[1]->cpu_diff_in(block) : nullptr;
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff_in(block, /*keep_values=*/false);
  if (top.size() == 1) {
    caffe_copy(count_, first, bottom_diff);
    return;
  }
  caffe_add(count_, first, second, bottom_diff);
  for (size_t i = 2; i < top.size(); ++i) {
    caffe_axpy(count_, Dtype(1), top[i]->cpu_diff_in(block), bottom_diff);
  }
}

INSTANTIATE_CLASS(SplitLayer);
REGISTER_LAYER_CLASS(Split);

}  // namespace caffe
