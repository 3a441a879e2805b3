// Legend as in argmax_layer.hpp: D values ranked per example.
#include "caffe/layers/argmax_layer.hpp"

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

namespace caffe {

template <typename Dtype>
void ArgMaxLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const ArgMaxParameter& param = this->layer_param_.argmax_param();
  out_max_val_ = param.out_max_val();
  LAYER_CHECK_GE(param.top_k(), 1u) << "argmax_param.top_k must be >= 1";
  top_k_ = static_cast<int>(param.top_k());
  has_axis_ = param.has_axis();
}

template <typename Dtype>
void ArgMaxLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const ArgMaxParameter& param = this->layer_param_.argmax_param();
  const int num_axes = bottom[0]->num_axes();
  if (has_axis_) {
    LAYER_CHECK(param.axis() >= -num_axes && param.axis() < num_axes)
        << "argmax_param.axis is " << param.axis() << ", but bottom[0] "
        << bottom[0]->shape_string() << " has " << num_axes << " axes; must be in [" << -num_axes
        << ", " << num_axes << ")";
    axis_ = bottom[0]->CanonicalAxisIndex(param.axis());
    LAYER_CHECK_LE(top_k_, bottom[0]->shape(axis_))
        << "argmax_param.top_k exceeds the dim of axis " << axis_ << " of bottom[0] "
        << bottom[0]->shape_string();
  } else {
    LAYER_CHECK_GE(num_axes, 1) << "bottom[0] is a scalar; it needs a batch axis";
    LAYER_CHECK_LE(top_k_, bottom[0]->count(1))
        << "argmax_param.top_k exceeds the number of values per example of bottom[0] "
        << bottom[0]->shape_string();
  }
  std::vector<int> shape(std::max(num_axes, 3), 1);
  if (has_axis_) {
    shape = bottom[0]->shape();
    shape[axis_] = top_k_;
  } else {
    shape[0] = bottom[0]->shape(0);
    shape[1] = out_max_val_ ? 2 : 1;
    shape[2] = top_k_;
  }
  top[0]->Reshape(shape);
}

template <typename Dtype>
void ArgMaxLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  // Example i's values lie `stride` apart: D of them starting at (i / stride) * D * stride +
  // i % stride. Without an axis, examples are contiguous rows (stride 1).
  const int dim = has_axis_ ? bottom[0]->shape(axis_) : bottom[0]->count(1);
  const int stride = has_axis_ ? bottom[0]->count(axis_ + 1) : 1;
  const int examples = dim == 0 ? 0 : bottom[0]->count() / dim;
  const int top_k = top_k_;
  std::vector<std::pair<Dtype, int>> ranked(dim);
  for (int i = 0; i < examples; ++i) {
    const int first = (i / stride) * dim * stride + i % stride;
    for (int d = 0; d < dim; ++d) ranked[d] = std::make_pair(bottom_data[first + d * stride], d);
    // Equal values rank by decreasing index: the pair comparison falls back to the index.
    std::partial_sort(ranked.begin(), ranked.begin() + top_k, ranked.end(),
                      std::greater<std::pair<Dtype, int>>());
    for (int k = 0; k < top_k; ++k) {
      if (has_axis_) {
        const int out = (i / stride) * top_k * stride + k * stride + i % stride;
        top_data[out] = out_max_val_ ? ranked[k].first : Dtype(ranked[k].second);
      } else {
        // Row i of the top: the top_k indices, then (out_max_val) the top_k values.
        const int row = i * top_k * (out_max_val_ ? 2 : 1);
        top_data[row + k] = Dtype(ranked[k].second);
        if (out_max_val_) top_data[row + top_k + k] = ranked[k].first;
      }
    }
  }
}

template <typename Dtype>
void ArgMaxLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                      const Blobs<Dtype>& bottom) {
  LAYER_CHECK(!propagate_down[0])
      << "has no gradient (BVLC implements no backward): do not propagate down into its bottom";
}

INSTANTIATE_CLASS(ArgMaxLayer);
REGISTER_LAYER_CLASS(ArgMax);

}  // namespace caffe
