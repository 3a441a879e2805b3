// Softmax: normalizes exponentials over one axis into probabilities. The maximum along the axis is
// subtracted first so exp never overflows (the result is unchanged).
// Legend: outer = product of the dims before `axis`, C = dim of `axis`, inner = product after it.
#ifndef CAFFE_LAYERS_SOFTMAX_LAYER_HPP_
#define CAFFE_LAYERS_SOFTMAX_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// top[o, c, i] = exp(bottom[o, c, i] - m) / sum_c' exp(bottom[o, c', i] - m), m the max over c.
/// bottom[0]: (outer, C, inner) seen through softmax_param.axis (default 1); top[0]: same shape.
template <typename Dtype>
class SoftmaxLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "Softmax"; }
  // Forward writes all of each top, Backward all of each propagated bottom diff (LMS).
  bool WritesWholeOutputs() const override { return true; }
  /// Backward (Caffe's and cuDNN's) reads the top's data and diff, not the bottom's data.
  bool BackwardReadsBottomData(int) const override { return false; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool AllowsInPlace(int, int) const override { return true; }
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// bottom_diff = (top_diff - sum_c top_diff * top) * top; reads only the top, so in place works.
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

  int outer_num_ = 0;
  int channels_ = 0;  // C
  int inner_num_ = 0;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_SOFTMAX_LAYER_HPP_
