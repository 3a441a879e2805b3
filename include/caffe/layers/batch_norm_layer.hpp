// BatchNorm: normalizes each channel to zero mean and unit variance, with the batch's statistics
// (training) or with stored running statistics (testing). The learned scale and shift of the paper
// live in a following Scale layer (bias_term: true), as in BVLC Caffe.
// Legend: N batch (axis 0), C channels (axis 1; 1 for a 1-axis bottom), S = product of the
// remaining dims (spatial).
#ifndef CAFFE_LAYERS_BATCH_NORM_LAYER_HPP_
#define CAFFE_LAYERS_BATCH_NORM_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"
#include "caffe/layers/relu_layer.hpp"
#include "caffe/layers/scale_layer.hpp"

namespace caffe {

/// top[n, c, s] = (bottom[n, c, s] - mean[c]) / sqrt(var[c] + eps). bottom[0]: (N, C, S...);
/// top[0]: same shape; in place allowed.
/// blobs_: [0] running sum of means (C), [1] running sum of variances (C), [2] the running
/// normaliser (1). With use_global_stats (default: phase == TEST) mean = blobs_[0] / blobs_[2] and
/// var = blobs_[1] / blobs_[2] (0 if blobs_[2] is 0). Otherwise the batch's statistics over N and S
/// are used and the running sums are updated: blobs_[0] = maf * blobs_[0] + mean, blobs_[1] =
/// maf * blobs_[1] + m / (m - 1) * var (m = N * S), blobs_[2] = maf * blobs_[2] + 1, with maf =
/// moving_average_fraction. The blobs are statistics, not learned: their lr_mult is forced to 0.
template <typename Dtype>
class BatchNormLayer : public Layer<Dtype>, public LayerFusion<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "BatchNorm"; }
  // Forward writes all of each top, Backward all of each propagated bottom diff (LMS).
  bool WritesWholeOutputs() const override { return true; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool AllowsInPlace(int, int) const override { return true; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// BatchNorm's own: the statistics and normalized values it keeps for backward, which reads
  /// neither the bottom's data nor the top's.
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;

  LayerFusion<Dtype>* fusion() override { return this; }
  /// Whether forward normalizes with the stored statistics (use_global_stats; TEST by default).
  bool uses_global_stats() const { return use_global_stats_; }
  /// mean and inv_std (C each) from the stored sums, as forward uses them with stored statistics.
  void SetGlobalStatistics(Dtype* mean, Dtype* inv_std) const;

  /// The Scale right after (in place on this layer's top, one learned
  /// value per channel, bias or not), and then an in-place ReLU (negative_slope >= 0) if one
  /// follows, run in this layer's passes. Forward: after the statistics, one pass writes top =
  /// ReLU(scale * x_norm + bias) and x_norm (the Scale keeps no copy of its bottom). Backward:
  /// the ReLU's gradient dv = dy where scale * x_norm + bias > 0 (else negative_slope * dy),
  /// recomputed from x_norm rather than read from the top; one summing pass gives the Scale's
  /// parameter gradients and this layer's gradient means, since with dz = scale * dv the means
  /// of dz and dz * x_norm are scale times those of dv and dv * x_norm; one more writes dx. In
  /// place, reads and writes of whole activations drop from 7 to 4 forward and from 8 to 5
  /// backward for BatchNorm and Scale, and the ReLU's 2 and 3 go (on the CPU each channel's
  /// values stay in cache between the passes of a layer, so apart 8 forward and 9 backward, as
  /// one 3 and 3). The top's diff ends as the layers apart leave it: dx in place, else dz, or dv
  /// where the Scale passes no gradient down. With stored statistics (use_global_stats) there
  /// are no statistics to compute forward, and backward sums only for the Scale's gradients:
  /// dx = scale * dv * inv_std.
  bool FuseWithNext(Layer<Dtype>* next, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                    const Blobs<Dtype>& next_bottom, const Blobs<Dtype>& next_top) override;
  bool DeclareMemoryUseFused(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                             const vector<bool>& propagate_down,
                             const vector<vector<bool>>& followers_propagate_down,
                             MemoryUses* uses) const override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Global stats: bottom_diff = top_diff / sqrt(var + eps). Batch stats (y = normalized x):
  /// bottom_diff = (top_diff - mean(top_diff) - mean(top_diff * y) * y) / sqrt(var + eps), the
  /// means over N and S of each channel. Never writes the blobs' diffs.
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
  void ForwardFused_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void BackwardFused_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                         const Blobs<Dtype>& bottom,
                         const vector<vector<bool>>& followers_propagate_down) override;
  // top = x_norm, or with `followers` the Scale's and ReLU's output from it. The statistics
  // into mean_ and inv_std_: the stored ones, or those of bottom (sums_ takes the variance, the
  // running sums are updated). x_norm_ is kept with batch statistics or followers.
  void Normalize_cpu(const Blob<Dtype>& bottom, Blob<Dtype>* top, bool followers);
  /// Adds a batch's mean and (biased) variance into the stored running sums.
  void UpdateStoredStatistics(const Dtype* mean, const Dtype* var);
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
  void ForwardFused_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void BackwardFused_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                         const Blobs<Dtype>& bottom,
                         const vector<vector<bool>>& followers_propagate_down) override;
  // The statistics into mean_ and inv_std_: the stored ones, or BatchStats_gpu's.
  void Statistics_gpu(const Blob<Dtype>& bottom);
  // Batch statistics of bottom into mean_ and inv_std_, and the running sums updated.
  void BatchStats_gpu(const Blob<Dtype>& bottom);
  // y = x_norm, or with `followers` the Scale's and ReLU's output from it; x_norm_ kept with
  // batch statistics or followers.
  void Normalize_gpu(const Blob<Dtype>& bottom, Blob<Dtype>* top, bool followers);
#endif
  // What the group's backward computes (BackwardFused), and so what it declares to LMS.
  struct FusedBackward {
    bool dx = false;          // this layer's bottom diff
    bool dz = false;          // the Scale's bottom diff, left in the top's diff
    bool dv = false;          // the ReLU's bottom diff, left there where the Scale passes none
    bool scale_diff = false;  // the Scale's parameter gradients
    bool bias_diff = false;
    bool means = false;  // dx's means of dz and dz * x_norm (batch statistics)
    bool sums() const { return means || scale_diff || bias_diff; }  // the summing pass
    bool map() const { return dx || dz || dv; }                     // the element-wise pass
  };
  FusedBackward FusedBackwardWork(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                                  const vector<bool>& propagate_down,
                                  const vector<vector<bool>>& followers_propagate_down) const;

  int channels_ = 0;  // C
  int num_ = 0;       // N
  int spatial_ = 0;   // S
  Dtype moving_average_fraction_ = 0;
  Dtype eps_ = 0;
  bool use_global_stats_ = false;
  Blob<Dtype> mean_;       // (C) statistics of the last forward
  Blob<Dtype> inv_std_;    // (C) 1 / sqrt(var + eps) of the last forward
  Blob<Dtype> x_norm_;     // like bottom: the normalized values, kept in case top is overwritten
  Blob<Dtype> sums_;       // (2 C) scratch: batch variance, or mean(dy) and mean(dy * y)
  Blob<double> partials_;  // GPU scratch: ChannelSumsKernel's partial sums of the statistics
  ScaleLayer<Dtype>* scale_ = nullptr;  // the Scale that runs with this layer (FuseWithNext)
  ReLULayer<Dtype>* relu_ = nullptr;    // the ReLU after that Scale, if it runs with them too
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_BATCH_NORM_LAYER_HPP_
