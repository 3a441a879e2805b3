// NeuronLayer: the base of element-wise layers (ReLU, Sigmoid, TanH, Dropout, ...). Each top
// element depends only on the bottom element at the same index, so the top has the bottom's shape
// and the layer may run in place (top == bottom), which is how nets usually save activation memory.
#ifndef CAFFE_LAYERS_NEURON_LAYER_HPP_
#define CAFFE_LAYERS_NEURON_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// An element-wise layer. bottom[0]: any shape; top[0]: the same shape, possibly bottom[0] itself.
template <typename Dtype>
class NeuronLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  // Forward writes all of each top, Backward all of each propagated bottom diff (LMS).
  bool WritesWholeOutputs() const override { return true; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  /// Element-wise, so in place unless a layer's backward needs the bottom it overwrote.
  bool AllowsInPlace(int, int) const override { return true; }
  /// Gives top[0] the shape of bottom[0] (a no-op when they are the same blob).
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_NEURON_LAYER_HPP_
