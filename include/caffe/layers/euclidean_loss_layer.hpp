// EuclideanLoss: half the mean (over the batch) squared distance between two blobs, for regression.
#ifndef CAFFE_LAYERS_EUCLIDEAN_LOSS_LAYER_HPP_
#define CAFFE_LAYERS_EUCLIDEAN_LOSS_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"
#include "caffe/layers/loss_layer.hpp"

namespace caffe {

/// loss = sum((bottom[0] - bottom[1])^2) / N / 2. bottom[0], bottom[1]: (N, ...) with the same
/// number of values per item; top[0]: the loss (scalar). Both bottoms may take a gradient:
/// +-(bottom[0] - bottom[1]) * top[0] diff / N.
template <typename Dtype>
class EuclideanLossLayer final : public LossLayer<Dtype> {
 public:
  using LossLayer<Dtype>::LossLayer;
  const char* type() const override { return "EuclideanLoss"; }
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Adds diff_ (written forward, read backward).
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;
  /// Unlike most losses, the target is a value that can be learned too.
  bool AllowForceBackward(int bottom_index) const override { return true; }

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

 private:
  Blob<Dtype> diff_;  // bottom[0] - bottom[1], saved by forward for backward
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_EUCLIDEAN_LOSS_LAYER_HPP_
