// MultinomialLogisticLoss: the negative log-likelihood of the true class under predicted
// probabilities (e.g. a Softmax layer's output). SoftmaxWithLoss is the numerically safer fused
// form; this layer exists for nets that produce probabilities themselves.
// Legend: N items, K = count / N probabilities per item.
#ifndef CAFFE_LAYERS_MULTINOMIAL_LOGISTIC_LOSS_LAYER_HPP_
#define CAFFE_LAYERS_MULTINOMIAL_LOGISTIC_LOSS_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"
#include "caffe/layers/loss_layer.hpp"

namespace caffe {

/// loss = -1/N sum_n log(max(p_n[label_n], 1e-20)). bottom[0]: probabilities (N, ...), K values
/// per item; bottom[1]: N integer labels in [0, K) ((N) or (N, 1, 1, 1)); top[0]: the loss
/// (scalar). bottom[0] diff is -top diff / (N max(p, 1e-20)) at the labelled class, 0 elsewhere.
template <typename Dtype>
class MultinomialLogisticLossLayer final : public LossLayer<Dtype> {
 public:
  using LossLayer<Dtype>::LossLayer;
  const char* type() const override { return "MultinomialLogisticLoss"; }
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

 protected:
  /// Throws caffe::Error naming the label and its item unless 0 <= label < K.
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Throws if asked for a gradient with respect to the labels.
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_MULTINOMIAL_LOGISTIC_LOSS_LAYER_HPP_
