// InfogainLoss: SoftmaxWithLoss generalised by an "information gain" matrix H that weighs every
// (true class, predicted class) pair; H = I gives the plain softmax loss. The softmax is computed
// inside the layer (since BVLC's 2017 rewrite, bottom[0] holds scores, not probabilities).
// Legend: outer = product of the dims before the axis, K classes (dim of the axis), inner =
// product of the dims after it; one label per (outer, inner) position; H is K x K.
#ifndef CAFFE_LAYERS_INFOGAIN_LOSS_LAYER_HPP_
#define CAFFE_LAYERS_INFOGAIN_LOSS_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"
#include "caffe/layers/loss_layer.hpp"

namespace caffe {

/// loss = -sum_{positions} sum_k H[label, k] log(max(p_k, 1e-20)) / normalizer, p = softmax of
/// bottom[0] over infogain_loss_param.axis; positions whose label is loss_param.ignore_label are
/// skipped. bottom[0]: scores (outer, K, inner); bottom[1]: integer labels in [0, K), outer *
/// inner of them; optional bottom[2]: H (any shape of K * K values, row-major), else H is read
/// from the BlobProto file infogain_loss_param.source; top[0]: the loss (scalar); optional
/// top[1]: p (bottom[0]'s shape). normalization defaults to VALID; the deprecated `normalize` is
/// rejected, as in BVLC. bottom[0] diff = (p_k sum_j H[label, j] - H[label, k]) top diff /
/// normalizer, 0 at ignored positions.
template <typename Dtype>
class InfogainLossLayer final : public LossLayer<Dtype> {
 public:
  using LossLayer<Dtype>::LossLayer;
  const char* type() const override { return "InfogainLoss"; }
  /// Reads H from infogain_loss_param.source when there is no bottom[2]; throws caffe::Error
  /// naming the file when it is missing or unreadable.
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Checks the label count and that H holds K * K values.
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  int ExactNumBottomBlobs() const override { return -1; }
  int MinBottomBlobs() const override { return 2; }
  int MaxBottomBlobs() const override { return 3; }
  int ExactNumTopBlobs() const override { return -1; }
  int MinTopBlobs() const override { return 1; }
  int MaxTopBlobs() const override { return 2; }
  /// Neither the labels nor H take a gradient.
  bool AllowForceBackward(int bottom_index) const override { return bottom_index == 0; }

 protected:
  /// Throws caffe::Error naming the label and its position unless 0 <= label < K.
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Throws if asked for a gradient with respect to the labels or H.
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;

 private:
  /// H: bottom[2] if there is one, else the matrix read at setup.
  const Blob<Dtype>& InfogainMatrix(const Blobs<Dtype>& bottom) const {
    return bottom.size() >= 3 ? *bottom[2] : infogain_;
  }
  /// Fills sum_rows_H_ with the row sums of `infogain`.
  void SumRowsOfH(const Blob<Dtype>& infogain);
  void CheckLabel(int label_value, int position) const;

  shared_ptr<Layer<Dtype>> softmax_layer_;  // created through LayerRegistry (engine choice)
  Blob<Dtype> prob_;                        // the softmax output, bottom[0]'s shape
  Blobs<Dtype> softmax_bottom_vec_, softmax_top_vec_;
  Blob<Dtype> infogain_;    // H from infogain_loss_param.source
  Blob<Dtype> sum_rows_H_;  // (K): sum_j H[k, j]
  bool has_ignore_label_ = false;
  int ignore_label_ = 0;
  LossParameter::NormalizationMode normalization_ = LossParameter::VALID;
  int infogain_axis_ = 1;
  int outer_num_ = 0;
  int num_labels_ = 0;  // K
  int inner_num_ = 0;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_INFOGAIN_LOSS_LAYER_HPP_
