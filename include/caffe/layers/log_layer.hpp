// Log: a logarithm of an affine function of the input, element-wise.
#ifndef CAFFE_LAYERS_LOG_LAYER_HPP_
#define CAFFE_LAYERS_LOG_LAYER_HPP_

#include "caffe/layers/neuron_layer.hpp"

namespace caffe {

/// top = log_base(shift + scale * bottom), base -1 meaning e;
/// bottom_diff = top_diff * scale / ((shift + scale * bottom) * ln(base)).
/// bottom[0]: any shape; top[0]: the same shape. Backward reads the bottom: not in place.
template <typename Dtype>
class LogLayer : public NeuronLayer<Dtype> {
 public:
  using NeuronLayer<Dtype>::NeuronLayer;
  const char* type() const override { return "Log"; }
  /// Backward needs the input, which in place would be the output.
  bool AllowsInPlace(int, int) const override { return false; }
  /// Reads log_param; base must be -1 or > 0 and not 1.
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

  Dtype base_scale_ = 1;          // 1 / ln(base)
  Dtype input_scale_ = 1;         // scale
  Dtype input_shift_ = 0;         // shift
  Dtype backward_num_scale_ = 1;  // scale / ln(base)
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_LOG_LAYER_HPP_
