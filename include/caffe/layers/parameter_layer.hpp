// Parameter: exposes a learned blob as a top, so other layers can use it as an input.
#ifndef CAFFE_LAYERS_PARAMETER_LAYER_HPP_
#define CAFFE_LAYERS_PARAMETER_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// No bottoms; top[0] = blobs_[0] of parameter_param.shape (zero-initialised, as BVLC: no
/// filler). The top shares the blob's data and diff, so the gradient the consumers write into
/// the top is the parameter's gradient.
template <typename Dtype>
class ParameterLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "Parameter"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int ExactNumTopBlobs() const override { return 1; }
  /// Creates the blob (or checks the one given) and shapes the top.
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {}

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Nothing to do: the top's diff is the parameter's diff.
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override {}
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_PARAMETER_LAYER_HPP_
