// Exp: an exponential of an affine function of the input, element-wise.
#ifndef CAFFE_LAYERS_EXP_LAYER_HPP_
#define CAFFE_LAYERS_EXP_LAYER_HPP_

#include "caffe/layers/neuron_layer.hpp"

namespace caffe {

/// top = base ^ (shift + scale * bottom), base -1 meaning e; computed as
/// outer_scale * exp(inner_scale * bottom) with inner_scale = ln(base) * scale and
/// outer_scale = base ^ shift. bottom_diff = top_diff * top * inner_scale (reads only the top, so
/// in place is allowed). bottom[0]: any shape; top[0]: the same shape.
template <typename Dtype>
class ExpLayer : public NeuronLayer<Dtype> {
 public:
  using NeuronLayer<Dtype>::NeuronLayer;
  const char* type() const override { return "Exp"; }
  /// Reads exp_param; base must be -1 or > 0.
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

  Dtype inner_scale_ = 1;
  Dtype outer_scale_ = 1;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_EXP_LAYER_HPP_
