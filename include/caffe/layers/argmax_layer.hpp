// ArgMax: the indices (and optionally the values) of the top_k largest values, per example or
// along one axis.
// Legend: without axis, N = bottom's dim 0 and D = the product of the other dims; with axis,
// D = the dim of that axis and every other position is one example.
#ifndef CAFFE_LAYERS_ARGMAX_LAYER_HPP_
#define CAFFE_LAYERS_ARGMAX_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// Ranks the D values of each example in decreasing order, equal values by decreasing index
/// (BVLC sorts (value, index) pairs with std::greater), and keeps the first top_k (default 1).
/// Without argmax_param.axis: bottom (N, ...) -> top (N, 1, top_k) holding the indices, or
/// (N, 2, top_k) holding the indices then the values with out_max_val; a top with fewer than
/// 3 axes is padded to 3, more axes get dims of 1 (as BVLC). With axis: top = bottom's shape
/// with that axis' dim replaced by top_k, holding the indices, or the values with out_max_val.
/// Not differentiable: asking for a bottom gradient is an error.
template <typename Dtype>
class ArgMaxLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "ArgMax"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Throws caffe::Error if propagate_down[0] is set; does nothing otherwise.
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;

  bool out_max_val_ = false;
  int top_k_ = 1;
  bool has_axis_ = false;
  int axis_ = 0;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_ARGMAX_LAYER_HPP_
