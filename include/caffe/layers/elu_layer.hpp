// ELU: the exponential linear unit, element-wise.
#ifndef CAFFE_LAYERS_ELU_LAYER_HPP_
#define CAFFE_LAYERS_ELU_LAYER_HPP_

#include "caffe/layers/neuron_layer.hpp"

namespace caffe {

/// top = x for x > 0, alpha * (exp(x) - 1) otherwise; bottom_diff = top_diff for x > 0 and
/// top_diff * (top + alpha) otherwise (BVLC's form). bottom[0]: any shape; top[0]: the same
/// shape. Backward reads both bottom and top: not in place.
template <typename Dtype>
class ELULayer : public NeuronLayer<Dtype> {
 public:
  using NeuronLayer<Dtype>::NeuronLayer;
  const char* type() const override { return "ELU"; }
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

  Dtype alpha_ = 1;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_ELU_LAYER_HPP_
