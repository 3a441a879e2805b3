// LossLayer: the base of layers that turn predictions and targets into a scalar objective. Their
// top has loss_weight 1 unless the prototxt says otherwise, and the labels/targets (bottom[1]) take
// no gradient unless a subclass allows it.
#ifndef CAFFE_LAYERS_LOSS_LAYER_HPP_
#define CAFFE_LAYERS_LOSS_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// A loss. bottom[0]: predictions (N, ...); bottom[1]: labels or targets (N, ...), the same N;
/// top[0]: the loss, a scalar (0 axes), created automatically when the prototxt names no top.
template <typename Dtype>
class LossLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  /// Gives top 0 loss_weight 1 (and any further top 0) when the prototxt sets no loss_weight.
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Checks that both bottoms have the same first dimension; makes top[0] a scalar.
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

  int ExactNumBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }
  bool AutoTopBlobs() const override { return true; }
  /// Labels cannot take a gradient, so force_backward must not ask for one.
  bool AllowForceBackward(int bottom_index) const override { return bottom_index != 1; }

  /// The mode `param` asks for: `normalization`, or, for prototxts that only set the deprecated
  /// `normalize`, VALID (true) or BATCH_SIZE (false).
  static LossParameter::NormalizationMode NormalizationMode(const LossParameter& param);
  /// What the summed loss is divided by: outer * inner (FULL), valid_count (VALID; -1 means all
  /// of outer * inner are valid), outer (BATCH_SIZE) or 1 (NONE); never less than 1, so a batch
  /// whose labels are all ignored gives loss 0 rather than NaN.
  static Dtype GetNormalizer(LossParameter::NormalizationMode mode, int outer_num, int inner_num,
                             int valid_count);
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_LOSS_LAYER_HPP_
