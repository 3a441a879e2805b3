// AbsVal: the absolute value, element-wise.
#ifndef CAFFE_LAYERS_ABSVAL_LAYER_HPP_
#define CAFFE_LAYERS_ABSVAL_LAYER_HPP_

#include "caffe/layers/neuron_layer.hpp"

namespace caffe {

/// top = |bottom|; bottom_diff = sign(bottom) * top_diff (0 at bottom == 0).
/// bottom[0]: any shape; top[0]: the same shape. Not in place (backward reads the bottom's sign).
template <typename Dtype>
class AbsValLayer : public NeuronLayer<Dtype> {
 public:
  using NeuronLayer<Dtype>::NeuronLayer;
  const char* type() const override { return "AbsVal"; }
  /// Rejects in-place use, as BVLC does.
  /// Backward needs the input's sign, which in place would be the output's.
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

#endif  // CAFFE_LAYERS_ABSVAL_LAYER_HPP_
