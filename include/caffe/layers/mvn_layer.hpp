// MVN: mean-variance normalization of each channel of each image (or of each whole image).
// Legend: N batch (axis 0), C channels (axis 1); a "row" is one (n, c) slice, or one n with
// across_channels; D the number of values in a row.
#ifndef CAFFE_LAYERS_MVN_LAYER_HPP_
#define CAFFE_LAYERS_MVN_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// top = (x - mean_row) / (std_row + eps) with normalize_variance (the default), else
/// x - mean_row; std is the population standard deviation, and eps is added to it, not to the
/// variance (as BVLC). bottom[0]: (N, C, ...); top[0]: the same shape.
/// Backward (BVLC's formula): dx = (dy - (sum_row(dy) + y * sum_row(y dy)) / D) / (std + eps);
/// without normalize_variance dx = dy - mean_row(dy).
template <typename Dtype>
class MVNLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "MVN"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool AllowsInPlace(int, int) const override { return true; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Adds scale_ (written forward, read backward).
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

  bool normalize_variance_ = true;
  bool across_channels_ = false;
  Dtype eps_ = 0;
  int rows_ = 0;       // N * C, or N with across_channels
  int row_size_ = 0;   // D
  Blob<Dtype> scale_;  // (rows_): std + eps of each row, saved by forward
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_MVN_LAYER_HPP_
