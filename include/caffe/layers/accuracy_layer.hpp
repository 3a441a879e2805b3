// Accuracy: the fraction of positions whose true class is among the top_k scores. Not a loss: it
// has no gradient.
// Legend: outer = product of the dims before the class axis, C = classes (dim of the axis),
// inner = product of the dims after it; there is one label per (outer, inner) position.
#ifndef CAFFE_LAYERS_ACCURACY_LAYER_HPP_
#define CAFFE_LAYERS_ACCURACY_LAYER_HPP_

#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// A position counts as correct when fewer than top_k other classes score at least as high as the
/// true class (so a tie with the true class counts against it, as in BVLC). Positions labelled
/// accuracy_param.ignore_label are skipped. bottom[0]: scores (outer, C, inner) seen through
/// accuracy_param.axis (default 1); bottom[1]: integer-valued labels in [0, C), outer * inner of
/// them; top[0]: correct / counted (scalar; 0 when nothing was counted); optional top[1]: (C),
/// per-class accuracy, 0 for a class with no samples.
template <typename Dtype>
class AccuracyLayer final : public Layer<Dtype> {
 public:
  /// Where the per-class counts start among the GPU forward's counters.
  static constexpr int kClassCounters = 3;

  using Layer<Dtype>::Layer;
  const char* type() const override { return "Accuracy"; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  int ExactNumBottomBlobs() const override { return 2; }
  int MinTopBlobs() const override { return 1; }
  int MaxTopBlobs() const override { return 2; }
  /// Adds the GPU pass's counters (scratch) to the default declaration.
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Accuracy is not differentiable: throws if any bottom is asked for a gradient.
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  /// Ranks on the GPU; the counts come back to the host, which forms the tops.
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
#endif

 private:
  int top_k_ = 1;
  bool has_ignore_label_ = false;
  int ignore_label_ = 0;
  int label_axis_ = 1;
  int outer_num_ = 0;
  int channels_ = 0;  // C
  int inner_num_ = 0;
  std::vector<int> class_count_;  // (C): positions per true class, for top[1]
#ifndef CPU_ONLY
  /// The GPU forward's counters: correct, counted, first bad label, then C per-class correct
  /// and C per-class counted (shaped in Reshape, so that LMS plans them).
  Blob<int> counters_;
#endif
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_ACCURACY_LAYER_HPP_
