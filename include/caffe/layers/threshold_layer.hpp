// Threshold: a step function, element-wise.
#ifndef CAFFE_LAYERS_THRESHOLD_LAYER_HPP_
#define CAFFE_LAYERS_THRESHOLD_LAYER_HPP_

#include "caffe/layers/neuron_layer.hpp"

namespace caffe {

/// top = 1 if bottom > threshold else 0. bottom[0]: any shape; top[0]: the same shape (may be
/// bottom[0] itself). Not differentiable: as in BVLC there is no backward, and asking for a
/// bottom gradient is an error.
template <typename Dtype>
class ThresholdLayer : public NeuronLayer<Dtype> {
 public:
  using NeuronLayer<Dtype>::NeuronLayer;
  const char* type() const override { return "Threshold"; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Throws caffe::Error if propagate_down[0] is set; does nothing otherwise.
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  // No Backward_gpu: the CPU one only checks propagate_down and touches no data.
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
#endif

  Dtype threshold_ = 0;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_THRESHOLD_LAYER_HPP_
