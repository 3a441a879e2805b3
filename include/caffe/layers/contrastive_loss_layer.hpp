// ContrastiveLoss: the siamese-network loss of Hadsell, Chopra and LeCun (2006). Pairs marked
// similar are pulled together by their squared distance; dissimilar pairs are pushed apart until
// their distance reaches the margin.
// Legend: N pairs, C feature dimension; d_n = ||a_n - b_n||_2, y_n = the similarity label.
#ifndef CAFFE_LAYERS_CONTRASTIVE_LOSS_LAYER_HPP_
#define CAFFE_LAYERS_CONTRASTIVE_LOSS_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"
#include "caffe/layers/loss_layer.hpp"

namespace caffe {

/// loss = 1/(2N) sum_n [ y_n d_n^2 + (1 - y_n) max(margin - d_n, 0)^2 ], or with legacy_version
/// (1 - y_n) max(margin - d_n^2, 0) for the dissimilar term; y_n = (int)bottom[2][n] != 0.
/// bottom[0] a and bottom[1] b: (N, C) or (N, C, 1, 1); bottom[2]: N similarity labels
/// ((N), (N, 1) or (N, 1, 1, 1)); top[0]: the loss (scalar). a and b take gradients (the
/// non-legacy dissimilar term divides by d_n + 1e-4, as BVLC does); the labels take none.
template <typename Dtype>
class ContrastiveLossLayer final : public LossLayer<Dtype> {
 public:
  using LossLayer<Dtype>::LossLayer;
  const char* type() const override { return "ContrastiveLoss"; }
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  int ExactNumBottomBlobs() const override { return 3; }
  /// Both features may learn; the similarity labels cannot.
  bool AllowForceBackward(int bottom_index) const override { return bottom_index != 2; }

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Gradients for bottom[0] and bottom[1] (opposite signs); propagate_down[2] is ignored, as
  /// in BVLC.
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

 private:
  Blob<Dtype> diff_;     // a - b, (N, C), saved by forward for backward
  Blob<Dtype> dist_sq_;  // d_n^2, (N)
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_CONTRASTIVE_LOSS_LAYER_HPP_
