// Swish: x * sigmoid(beta * x), element-wise.
#ifndef CAFFE_LAYERS_SWISH_LAYER_HPP_
#define CAFFE_LAYERS_SWISH_LAYER_HPP_

#include "caffe/layers/neuron_layer.hpp"

namespace caffe {

/// top = bottom * s, s = sigmoid(beta * bottom) (as 0.5 * tanh(0.5 * beta * bottom) + 0.5, like
/// the Sigmoid layer); bottom_diff = top_diff * (beta * top + s * (1 - beta * top)).
/// bottom[0]: any shape; top[0]: the same shape, may be bottom[0] itself (backward reads the top
/// and the saved s only).
template <typename Dtype>
class SwishLayer : public NeuronLayer<Dtype> {
 public:
  using NeuronLayer<Dtype>::NeuronLayer;
  const char* type() const override { return "Swish"; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

  Dtype beta_ = 1;
  Blob<Dtype> sigmoid_;  // s, saved by forward
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_SWISH_LAYER_HPP_
