// SigmoidCrossEntropyLoss: the cross-entropy between targets in [0, 1] and the sigmoid of the
// predictions, one independent binary problem per value (multi-label classification). The loss
// is computed from the scores directly in a form that cannot overflow; the gradient is the
// benign sigmoid(x) - target.
// Legend: N batch (first axis), D = count / N values per item.
#ifndef CAFFE_LAYERS_SIGMOID_CROSS_ENTROPY_LOSS_LAYER_HPP_
#define CAFFE_LAYERS_SIGMOID_CROSS_ENTROPY_LOSS_LAYER_HPP_

#include <memory>

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"
#include "caffe/layers/loss_layer.hpp"
#include "caffe/layers/sigmoid_layer.hpp"

namespace caffe {

/// loss = -sum_i [t_i log(s_i) + (1 - t_i) log(1 - s_i)] / normalizer with s = sigmoid(x),
/// evaluated as sum_i [log(1 + exp(x_i - 2 x_i [x_i >= 0])) - x_i (t_i - [x_i >= 0])]; values
/// whose (int)target is loss_param.ignore_label are skipped. normalization defaults to
/// BATCH_SIZE (N), and the deprecated normalize: true means VALID. bottom[0]: scores (N, ...);
/// bottom[1]: targets, the same count; top[0]: the loss (scalar). bottom[0] diff =
/// (s - t) top diff / normalizer, 0 where ignored.
template <typename Dtype>
class SigmoidCrossEntropyLossLayer final : public LossLayer<Dtype> {
 public:
  using LossLayer<Dtype>::LossLayer;
  const char* type() const override { return "SigmoidCrossEntropyLoss"; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Adds the inner Sigmoid's output and the GPU forward's per-value scratch.
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Throws if asked for a gradient with respect to the targets.
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

 private:
  std::unique_ptr<SigmoidLayer<Dtype>> sigmoid_layer_;  // maps scores to s for the gradient
  Blob<Dtype> sigmoid_output_;                          // s, bottom[0]'s shape
  Blobs<Dtype> sigmoid_bottom_vec_, sigmoid_top_vec_;
  bool has_ignore_label_ = false;
  int ignore_label_ = 0;
  LossParameter::NormalizationMode normalization_ = LossParameter::BATCH_SIZE;
  Dtype normalizer_ = 1;  // of the last forward, reused by backward
  int outer_num_ = 0;     // N
  int inner_num_ = 0;     // D
#ifndef CPU_ONLY
  Blob<Dtype> value_loss_;     // (N * D) GPU forward: each value's loss, 0 where ignored
  Blob<Dtype> value_counted_;  // (N * D) 1 where counted, else 0
#endif
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_SIGMOID_CROSS_ENTROPY_LOSS_LAYER_HPP_
