// TanH: the hyperbolic tangent, element-wise.
#ifndef CAFFE_LAYERS_TANH_LAYER_HPP_
#define CAFFE_LAYERS_TANH_LAYER_HPP_

#include "caffe/layers/neuron_layer.hpp"

namespace caffe {

/// top = tanh(bottom). bottom[0]: any shape; top[0]: the same shape (may be bottom[0] itself).
template <typename Dtype>
class TanHLayer : public NeuronLayer<Dtype> {
 public:
  using NeuronLayer<Dtype>::NeuronLayer;
  const char* type() const override { return "TanH"; }

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// bottom_diff = top_diff * (1 - top^2): reads only the top, so in-place use is safe.
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_TANH_LAYER_HPP_
