// Legend as in batch_reindex_layer.hpp: N items, M indices, I values per item.
#include "caffe/layers/batch_reindex_layer.hpp"

#include <vector>

namespace caffe {

template <typename Dtype>
void BatchReindexLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LAYER_CHECK_EQ(bottom[1]->num_axes(), 1)
      << "bottom[1] (the indices) must be 1-D, but has shape " << bottom[1]->shape_string();
  LAYER_CHECK_GE(bottom[0]->num_axes(), 1)
      << "bottom[0] is a scalar; it needs a batch axis to reindex";
  std::vector<int> top_shape = bottom[0]->shape();
  top_shape[0] = bottom[1]->shape(0);
  top[0]->Reshape(top_shape);
}

template <typename Dtype>
void BatchReindexLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int items = bottom[0]->shape(0);
  const int indices = bottom[1]->count();
  const Dtype* index_data = bottom[1]->cpu_data();
  for (int m = 0; m < indices; ++m) {
    const Dtype value = index_data[m];
    LAYER_CHECK(value >= 0 && value < items && value == static_cast<Dtype>(static_cast<int>(value)))
        << "bottom[1] value " << value << " at position " << m
        << " is not a valid index: indices must be integers in [0, " << items << ") for bottom[0] "
        << bottom[0]->shape_string();
  }
  if (top[0]->count() == 0) return;
  const int item_size = bottom[0]->count(1);
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  for (int m = 0; m < indices; ++m) {
    caffe_copy(item_size, bottom_data + static_cast<int>(index_data[m]) * item_size,
               top_data + m * item_size);
  }
}

template <typename Dtype>
void BatchReindexLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top,
                                            const vector<bool>& propagate_down,
                                            const Blobs<Dtype>& bottom) {
  LAYER_CHECK(!propagate_down[1])
      << "cannot backpropagate to bottom[1]: it holds indices, which have no gradient";
  if (!propagate_down[0]) return;
  const int item_size = bottom[0]->count(1);
  const int indices = bottom[1]->count();
  const Dtype* index_data = bottom[1]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  caffe_set(bottom[0]->count(), Dtype(0), bottom_diff);
  // An item picked several times gets the sum of its copies' gradients, in index order.
  for (int m = 0; m < indices; ++m) {
    caffe_axpy(item_size, Dtype(1), top_diff + m * item_size,
               bottom_diff + static_cast<int>(index_data[m]) * item_size);
  }
}

INSTANTIATE_CLASS(BatchReindexLayer);
REGISTER_LAYER_CLASS(BatchReindex);

}  // namespace caffe
