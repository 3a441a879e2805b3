// Scale: multiplies the bottom by a scale broadcast over the other axes, optionally adding a bias
// of the same shape (with BatchNorm this makes the learned affine part of batch normalization).
// Legend: outer = product of bottom[0]'s dims before `axis`, D = the scale's count (its dims match
// bottom[0]'s from `axis` on), inner = product of the dims after the scale's.
#ifndef CAFFE_LAYERS_SCALE_LAYER_HPP_
#define CAFFE_LAYERS_SCALE_LAYER_HPP_

#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// top[o, d, i] = bottom[0][o, d, i] * scale[d] (+ bias[d] with bias_term).
/// One bottom: scale is learned, blobs_[0], shape = bottom[0]'s dims [axis, axis + num_axes)
/// (scale_param axis 1, num_axes 1; -1 = to the end, 0 = a scalar), filled by `filler` (default
/// constant 1). Two bottoms: scale = bottom[1], whose shape must match bottom[0]'s from axis on.
/// bias_term (default false) adds a learned bias, the last blob, shaped like the scale and filled
/// by bias_filler (default constant 0). top[0]: bottom[0]'s shape; in place allowed.
template <typename Dtype>
class ScaleLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "Scale"; }
  int MinBottomBlobs() const override { return 1; }
  int MaxBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }
  bool AllowsInPlace(int bottom_index, int) const override { return bottom_index == 0; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Adds the in-place copy of the bottom (written forward, read backward) and the GPU
  /// backward's partial sums.
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;

  /// For a BatchNorm that runs this layer with its own passes (LayerFusion::FuseWithNext): whether
  /// the scale is learned (one bottom) and has one value per channel (axis 1) of a bottom with
  /// `channels` channels; the index of the learned bias in blobs().
  bool ScalesChannels(int channels) const;
  int bias_param_id() const { return bias_param_id_; }  // -1 without bias_term
  /// In place, the bottom that the last forward scaled is kept in `saved` (a fused BatchNorm's
  /// normalized values) rather than in this layer's copy; the layer's own forward resets it.
  void set_saved_bottom(const Blob<Dtype>* saved) { saved_bottom_ = saved; }

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// bottom[0]_diff = top_diff * scale; scale_diff (+)= sum_{o,i} top_diff * bottom[0] (the
  /// learned blob accumulates, bottom[1] is overwritten); bias_diff += sum_{o,i} top_diff.
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

  int axis_ = 0;
  int outer_ = 0;
  int scale_dim_ = 0;  // D
  int inner_ = 0;
  int bias_param_id_ = -1;   // index of the bias in blobs_, -1 without bias_term
  Blob<Dtype> bottom_copy_;  // in place: the bottom's data, which backward needs
  const Blob<Dtype>* saved_bottom_ = &bottom_copy_;  // where that data is (see set_saved_bottom)
  std::vector<double> thread_sums_;  // backward scratch: per thread, sums of dy and dy * x per d
  Blob<double> partials_;            // GPU backward scratch: ChannelSumsKernel's partial sums per d
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_SCALE_LAYER_HPP_
