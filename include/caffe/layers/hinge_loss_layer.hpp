// HingeLoss: the one-vs-all hinge loss of a linear SVM over K class scores, with an L1 or L2
// (squared) penalty.
// Legend: N items, K = count / N scores per item; t_nk = +1 if k == label_n, else -1.
#ifndef CAFFE_LAYERS_HINGE_LOSS_LAYER_HPP_
#define CAFFE_LAYERS_HINGE_LOSS_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"
#include "caffe/layers/loss_layer.hpp"

namespace caffe {

/// loss = 1/N sum_{n,k} max(0, 1 - t_nk x_nk)^p with p = 1 (norm L1) or 2 (norm L2).
/// bottom[0]: scores (N, ...), K values per item; bottom[1]: N integer labels in [0, K);
/// top[0]: the loss (scalar). Only the scores take a gradient.
template <typename Dtype>
class HingeLossLayer final : public LossLayer<Dtype> {
 public:
  using LossLayer<Dtype>::LossLayer;
  const char* type() const override { return "HingeLoss"; }
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

 protected:
  /// Throws caffe::Error naming the label and its item unless 0 <= label < K.
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// bottom[0] diff = -t_nk [margin_nk > 0] top diff / N (L1) or -2 t_nk margin_nk top diff / N
  /// (L2); throws if asked for a gradient with respect to the labels.
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;

 private:
  Blob<Dtype> margins_;  // max(0, 1 - t_nk x_nk), bottom[0]'s shape, saved by forward
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_HINGE_LOSS_LAYER_HPP_
