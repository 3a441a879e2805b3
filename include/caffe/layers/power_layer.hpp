// Power: a power of an affine function of the input, element-wise.
#ifndef CAFFE_LAYERS_POWER_LAYER_HPP_
#define CAFFE_LAYERS_POWER_LAYER_HPP_

#include "caffe/layers/neuron_layer.hpp"

namespace caffe {

/// top = (shift + scale * bottom) ^ power;
/// bottom_diff = top_diff * power * scale * (shift + scale * bottom) ^ (power - 1), computed as
/// BVLC does: a constant when power * scale == 0 (then top is constant: 1 for power 0, else
/// shift ^ power, and bottom_diff = 0) or power == 1; a linear function for power 2; otherwise
/// top / (shift + scale * bottom) times power * scale. bottom[0]: any shape; top[0]: the same
/// shape. Backward reads both bottom and top: not in place.
template <typename Dtype>
class PowerLayer : public NeuronLayer<Dtype> {
 public:
  using NeuronLayer<Dtype>::NeuronLayer;
  const char* type() const override { return "Power"; }
  /// Backward needs the input unless the power is 1 (then the gradient is the scale alone).
  bool AllowsInPlace(int, int) const override {
    return this->layer_param_.power_param().power() == 1;
  }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

  Dtype power_ = 1;
  Dtype scale_ = 1;
  Dtype shift_ = 0;
  Dtype diff_scale_ = 1;  // power * scale
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_POWER_LAYER_HPP_
