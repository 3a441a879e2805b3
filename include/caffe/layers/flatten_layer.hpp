// Flatten: merges a range of axes into one without touching the values (a view of the bottom).
#ifndef CAFFE_LAYERS_FLATTEN_LAYER_HPP_
#define CAFFE_LAYERS_FLATTEN_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// top = bottom with axes [axis, end_axis] (flatten_param, defaults 1 and -1) merged into one.
/// bottom[0]: (d_0, ..., d_{n-1}); top[0]: (d_0, ..., d_{axis-1}, prod d_axis..d_end_axis,
/// d_{end_axis+1}, ...). From Reshape on, the top shares the bottom's data and diff
/// top's diff. Not in place.
template <typename Dtype>
class FlattenLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "Flatten"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_FLATTEN_LAYER_HPP_
