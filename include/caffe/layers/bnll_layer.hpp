// BNLL: the binomial normal log likelihood (softplus), element-wise.
#ifndef CAFFE_LAYERS_BNLL_LAYER_HPP_
#define CAFFE_LAYERS_BNLL_LAYER_HPP_

#include "caffe/layers/neuron_layer.hpp"

namespace caffe {

/// top = log(1 + exp(bottom)), computed as x + log(1 + exp(-x)) for x > 0 so it cannot overflow;
/// bottom_diff = top_diff * e / (1 + e) with e = exp(min(bottom, 50)) (BVLC's threshold).
/// bottom[0]: any shape; top[0]: the same shape. Backward reads the bottom: not in place.
template <typename Dtype>
class BNLLLayer : public NeuronLayer<Dtype> {
 public:
  using NeuronLayer<Dtype>::NeuronLayer;
  const char* type() const override { return "BNLL"; }
  /// Backward needs the input, which in place would be the output.
  bool AllowsInPlace(int, int) const override { return false; }

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_BNLL_LAYER_HPP_
