// Legend as in filter_layer.hpp: N items, K filtered bottoms, S selected items.
#include "caffe/layers/filter_layer.hpp"

#include <vector>

namespace caffe {

template <typename Dtype>
void FilterLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LAYER_CHECK_EQ(top.size(), bottom.size() - 1)
      << "needs one top per filtered bottom (every bottom but the last, the selector)";
  first_reshape_ = true;
}

template <typename Dtype>
void FilterLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Blob<Dtype>& selector = *bottom.back();
  const int selector_index = static_cast<int>(bottom.size()) - 1;
  LAYER_CHECK_GE(selector.num_axes(), 1)
      << "the selector bottom[" << selector_index << "] is a scalar; it needs one value per item";
  for (int axis = 1; axis < selector.num_axes(); ++axis) {
    LAYER_CHECK_EQ(selector.shape(axis), 1)
        << "the selector bottom[" << selector_index << "] " << selector.shape_string()
        << " must hold one value per item: every dim but the first must be 1";
  }
  const int items = selector.shape(0);
  for (int k = 0; k < selector_index; ++k) {
    LAYER_CHECK(bottom[k]->num_axes() >= 1 && bottom[k]->shape(0) == items)
        << "bottom[" << k << "] " << bottom[k]->shape_string() << " must have as many items "
        << "(dim 0) as the selector bottom[" << selector_index << "] " << selector.shape_string();
  }
  const Dtype* selector_data = selector.cpu_data();
  selected_.clear();
  for (int n = 0; n < items; ++n) {
    if (selector_data[n] != Dtype(0)) selected_.push_back(n);
  }
  // At setup the selector usually holds no data yet: size the tops for every item.
  const int top_items = first_reshape_ ? items : static_cast<int>(selected_.size());
  first_reshape_ = false;
  for (size_t k = 0; k < top.size(); ++k) {
    std::vector<int> shape = bottom[k]->shape();
    shape[0] = top_items;
    top[k]->Reshape(shape);
  }
}

template <typename Dtype>
void FilterLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  for (size_t k = 0; k < top.size(); ++k) {
    const int item_size = bottom[k]->count(1);
    const Dtype* bottom_data = bottom[k]->cpu_data();
    Dtype* top_data = top[k]->mutable_cpu_data();
    for (size_t s = 0; s < selected_.size(); ++s) {
      caffe_copy(item_size, bottom_data + selected_[s] * item_size, top_data + s * item_size);
    }
  }
}

template <typename Dtype>
void FilterLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                      const Blobs<Dtype>& bottom) {
  LAYER_CHECK(!propagate_down.back())
      << "cannot backpropagate to the selector bottom[" << bottom.size() - 1 << "]";
  for (size_t k = 0; k < top.size(); ++k) {
    if (!propagate_down[k]) continue;
    const int item_size = bottom[k]->count(1);
    const Dtype* top_diff = top[k]->cpu_diff();
    Dtype* bottom_diff = bottom[k]->mutable_cpu_diff();
    caffe_set(bottom[k]->count(), Dtype(0), bottom_diff);
    for (size_t s = 0; s < selected_.size(); ++s) {
      caffe_copy(item_size, top_diff + s * item_size, bottom_diff + selected_[s] * item_size);
    }
  }
}

INSTANTIATE_CLASS(FilterLayer);
REGISTER_LAYER_CLASS(Filter);

}  // namespace caffe
