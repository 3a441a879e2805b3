// ReLU: the rectified linear unit, leaky when negative_slope is non-zero. Usually run in place.
#ifndef CAFFE_LAYERS_RELU_LAYER_HPP_
#define CAFFE_LAYERS_RELU_LAYER_HPP_

#include "caffe/layers/neuron_layer.hpp"

namespace caffe {

/// top = max(bottom, 0) + negative_slope * min(bottom, 0), element-wise.
/// bottom[0]: any shape; top[0]: the same shape (may be bottom[0] itself).
template <typename Dtype>
class ReLULayer : public NeuronLayer<Dtype> {
 public:
  using NeuronLayer<Dtype>::NeuronLayer;
  const char* type() const override { return "ReLU"; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  Dtype negative_slope() const { return negative_slope_; }
  /// `next` if it is a ReLU that works in place on `blob` (next_bottom and next_top are that
  /// one blob) and whose output keeps its input's sign (negative_slope >= 0), so that the
  /// gradient's factor read off either is the same; else null. For the layers that run such a
  /// ReLU in their own passes (LayerFusion::FuseWithNext).
  static ReLULayer<Dtype>* FusableInPlaceOn(const Blob<Dtype>* blob, Layer<Dtype>* next,
                                            const Blobs<Dtype>& next_bottom,
                                            const Blobs<Dtype>& next_top);

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// bottom_diff = top_diff * (1 if bottom > 0 else negative_slope). In place, "bottom" holds the
  /// output, which has the input's sign, so the same rule applies (as in BVLC).
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

  Dtype negative_slope_ = 0;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_RELU_LAYER_HPP_
