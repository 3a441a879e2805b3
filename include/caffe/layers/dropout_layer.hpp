// Dropout: in TRAIN, zeroes each element with probability dropout_ratio and scales the survivors
// by 1 / (1 - dropout_ratio) so the expected value is unchanged; in TEST, the identity.
#ifndef CAFFE_LAYERS_DROPOUT_LAYER_HPP_
#define CAFFE_LAYERS_DROPOUT_LAYER_HPP_

#include "caffe/layers/neuron_layer.hpp"

namespace caffe {

/// TRAIN: top = bottom * mask / (1 - dropout_ratio), mask ~ Bernoulli(1 - dropout_ratio) per
/// element, drawn from this thread's Caffe::rng(); TEST: top = bottom.
/// bottom[0]: any shape; top[0]: the same shape (may be bottom[0] itself).
template <typename Dtype>
class DropoutLayer final : public NeuronLayer<Dtype> {
 public:
  using NeuronLayer<Dtype>::NeuronLayer;
  const char* type() const override { return "Dropout"; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Backward scales the top's gradient by the mask: it reads no data blob.
  bool BackwardReadsTopData(int) const override { return false; }
  bool BackwardReadsBottomData(int) const override { return false; }
  /// Adds the TRAIN phase's mask (drawn forward, read backward).
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// TRAIN: bottom_diff = top_diff * mask * scale, with the mask of the last forward; TEST: copy.
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

 private:
  Blob<unsigned int> mask_;  // bottom's shape; 1 keeps an element, 0 drops it
  Dtype threshold_ = 0;      // dropout_ratio: the probability of dropping
  Dtype scale_ = 1;          // 1 / (1 - threshold_)
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_DROPOUT_LAYER_HPP_
