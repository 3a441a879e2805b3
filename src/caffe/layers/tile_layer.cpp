// Legend as in tile_layer.hpp: outer = axes before `axis`, inner = axes from it on.
#include "caffe/layers/tile_layer.hpp"

#include <vector>

namespace caffe {

template <typename Dtype>
void TileLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const TileParameter& param = this->layer_param_.tile_param();
  const int num_axes = bottom[0]->num_axes();
  LAYER_CHECK(param.axis() >= -num_axes && param.axis() < num_axes)
      << "tile_param.axis is " << param.axis() << ", but bottom[0] " << bottom[0]->shape_string()
      << " has " << num_axes << " axes; must be in [" << -num_axes << ", " << num_axes << ")";
  const int axis = bottom[0]->CanonicalAxisIndex(param.axis());
  LAYER_CHECK(param.has_tiles()) << "tile_param.tiles (the number of copies) must be given";
  tiles_ = param.tiles();
  LAYER_CHECK_GE(tiles_, 1) << "tile_param.tiles must be >= 1";
  std::vector<int> top_shape = bottom[0]->shape();
  top_shape[axis] *= tiles_;
  top[0]->Reshape(top_shape);
  outer_ = bottom[0]->count(0, axis);
  inner_ = bottom[0]->count(axis);
}

template <typename Dtype>
void TileLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  for (int o = 0; o < outer_; ++o) {
    for (int t = 0; t < tiles_; ++t) {
      caffe_copy(inner_, bottom_data + o * inner_, top_data + (o * tiles_ + t) * inner_);
    }
  }
}

template <typename Dtype>
void TileLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                    const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  for (int o = 0; o < outer_; ++o) {
    Dtype* dx = bottom_diff + o * inner_;
    caffe_copy(inner_, top_diff + o * tiles_ * inner_, dx);
    for (int t = 1; t < tiles_; ++t) {
      caffe_axpy(inner_, Dtype(1), top_diff + (o * tiles_ + t) * inner_, dx);
    }
  }
}

INSTANTIATE_CLASS(TileLayer);
REGISTER_LAYER_CLASS(Tile);

}  // namespace caffe
