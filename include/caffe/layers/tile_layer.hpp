// Tile: repeats a blob `tiles` times along one axis.
// Legend: outer = product of the axes before `axis`, inner = product of the axes from it on.
#ifndef CAFFE_LAYERS_TILE_LAYER_HPP_
#define CAFFE_LAYERS_TILE_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// top[o, t, i] = bottom[o, i] for t < tiles, viewing bottom as (outer, inner) and top as
/// (outer, tiles, inner). bottom[0]: any shape; top[0]: the same with the dim of tile_param.axis
/// (default 1) multiplied by tile_param.tiles (required, >= 1). Backward sums the tiles.
template <typename Dtype>
class TileLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "Tile"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

  int tiles_ = 0;
  int outer_ = 0;
  int inner_ = 0;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_TILE_LAYER_HPP_
