// SoftmaxWithLoss: the multinomial logistic loss of the softmax of the predictions, fused so the
// gradient is the numerically benign (p - onehot) rather than a division by p.
// Legend: outer = product of the dims before the softmax axis, C = classes (dim of the axis),
// inner = product of the dims after it; there is one label per (outer, inner) position.
#ifndef CAFFE_LAYERS_SOFTMAX_WITH_LOSS_LAYER_HPP_
#define CAFFE_LAYERS_SOFTMAX_WITH_LOSS_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"
#include "caffe/layers/loss_layer.hpp"

namespace caffe {

/// loss = -sum log(max(p[label], FLT_MIN)) / normalizer, p = softmax of bottom[0] over
/// softmax_param.axis; positions whose label is loss_param.ignore_label are skipped.
/// bottom[0]: scores (outer, C, inner); bottom[1]: integer-valued labels in [0, C), outer * inner
/// of them; top[0]: the loss (scalar); optional top[1]: the probabilities p, bottom[0]'s shape.
template <typename Dtype>
class SoftmaxWithLossLayer final : public LossLayer<Dtype> {
 public:
  using LossLayer<Dtype>::LossLayer;
  const char* type() const override { return "SoftmaxWithLoss"; }
  // Forward writes all of each top, Backward all of each propagated bottom diff (LMS).
  bool WritesWholeOutputs() const override { return true; }
  /// Backward reads the probabilities it kept and the labels, not the scores or the loss.
  bool BackwardReadsTopData(int) const override { return false; }
  bool BackwardReadsBottomData(int bottom_index) const override { return bottom_index == 1; }
  /// LMS: the bottoms, tops and learned blobs, plus the probabilities and the inner Softmax
  /// layer's buffers.
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  int ExactNumTopBlobs() const override { return -1; }
  int MinTopBlobs() const override { return 1; }
  int MaxTopBlobs() const override { return 2; }

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// bottom[0] diff = (p - onehot(label)) * top[0] diff / normalizer, 0 at ignored positions;
  /// throws if asked for a gradient with respect to the labels.
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

 private:
  /// Throws caffe::Error naming the label and its position unless 0 <= label < C.
  void CheckLabel(int label_value, int position) const;
#ifndef CPU_ONLY
  /// After a GPU kernel recorded first_bad_label_: throws as CheckLabel for that position.
  void ThrowIfBadLabelOnGpu(const Blob<Dtype>& label);
  Blob<Dtype> position_loss_;     // (outer * inner) GPU forward: each position's loss, or 0
  Blob<Dtype> position_counted_;  // (outer * inner) 1 where the label is counted, else 0
  Blob<int> first_bad_label_;     // (1) first position with an out-of-range label, or INT_MAX
#endif

  shared_ptr<Layer<Dtype>> softmax_layer_;  // created through LayerRegistry (engine choice)
  Blob<Dtype> prob_;                        // the softmax output, bottom[0]'s shape
  Blobs<Dtype> softmax_bottom_vec_, softmax_top_vec_;
  bool has_ignore_label_ = false;
  int ignore_label_ = 0;
  LossParameter::NormalizationMode normalization_ = LossParameter::VALID;
  int softmax_axis_ = 1;
  int outer_num_ = 0;
  int channels_ = 0;  // C
  int inner_num_ = 0;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_SOFTMAX_WITH_LOSS_LAYER_HPP_
