// Clip: clamps every value to [min, max].
#ifndef CAFFE_LAYERS_CLIP_LAYER_HPP_
#define CAFFE_LAYERS_CLIP_LAYER_HPP_

#include "caffe/layers/neuron_layer.hpp"

namespace caffe {

/// top = max(min, min(bottom, max)); bottom_diff = top_diff where min <= bottom <= max, else 0.
/// bottom[0]: any shape; top[0]: the same shape. Backward reads the bottom: not in place.
template <typename Dtype>
class ClipLayer : public NeuronLayer<Dtype> {
 public:
  using NeuronLayer<Dtype>::NeuronLayer;
  const char* type() const override { return "Clip"; }
  /// Backward needs the input (a value at min or max passes its gradient), which in place
  /// would be the output.
  bool AllowsInPlace(int, int) const override { return false; }
  /// Reads clip_param.min and max (min <= max).
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

  Dtype min_ = 0;
  Dtype max_ = 0;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_CLIP_LAYER_HPP_
