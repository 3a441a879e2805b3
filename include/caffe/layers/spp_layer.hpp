// SPP: spatial pyramid pooling. Level l pools each channel into a 2^l x 2^l grid of bins; the
// levels' outputs, flattened, are concatenated into one fixed-size vector per image whatever the
// input size. Built, as in BVLC, from internal Split, Pooling, Flatten and Concat layers.
// Legend: N images, C channels, H/W input height/width, L = pyramid_height, b = 2^l bins per
// side at level l.
#ifndef CAFFE_LAYERS_SPP_LAYER_HPP_
#define CAFFE_LAYERS_SPP_LAYER_HPP_

#include <memory>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// Level l pools with kernel k = ceil(H / b), stride k and pad (k b - H + 1) / 2 (integer
/// division; likewise for W), using the Pooling layer's MAX or AVE (spp_param.pool). bottom[0]:
/// (N, C, H, W); top[0]: (N, C * sum_l PH_l * PW_l), level 0 first, each level's (C, PH, PW)
/// flattened — except for pyramid_height 1, where, as in BVLC, top[0] is the single level's
/// unflattened (N, C, 1, 1). Backward: the sum over levels of each pooling's gradient.
template <typename Dtype>
class SPPLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "SPP"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  /// Reads spp_param (pyramid_height >= 1).
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Rebuilds the internal layers when the bottom's shape changes.
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// The internal layers' declarations, in the order they run.
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;

 private:
  /// The Pooling layer parameters of pyramid level `level` for an H x W input.
  LayerParameter PoolingParam(int level, int height, int width) const;
  /// Creates and sets up the internal layers for bottom's current shape.
  void BuildPyramid(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top);

  int pyramid_height_ = 0;
  std::vector<int> built_shape_;  // bottom shape the internal layers were built for

  std::shared_ptr<Layer<Dtype>> split_layer_;
  std::vector<std::shared_ptr<Layer<Dtype>>> pooling_layers_, flatten_layers_;
  std::shared_ptr<Layer<Dtype>> concat_layer_;
  // Per level: the split's copy of the bottom, the pooled blob and its flattened view.
  std::vector<std::unique_ptr<Blob<Dtype>>> split_tops_, pooled_, flattened_;
  Blobs<Dtype> split_top_vec_, concat_bottom_vec_;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_SPP_LAYER_HPP_
