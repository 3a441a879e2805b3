// Reshape: gives the bottom's values a new shape (a view; data and diff are shared, nothing is
// copied). reshape_param.shape describes the new dims of the replaced axis range; in it 0 copies
// the bottom's dim at that position and a single -1 is inferred from the total count.
#ifndef CAFFE_LAYERS_RESHAPE_LAYER_HPP_
#define CAFFE_LAYERS_RESHAPE_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// top = bottom with bottom axes [axis, axis + num_axes) (defaults 0 and -1 = to the end; a
/// negative axis counts from the end, -1 meaning "after the last axis") replaced by
/// reshape_param.shape. bottom[0]: any shape; top[0]: same count. Not in place.
template <typename Dtype>
class ReshapeLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "Reshape"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

 protected:
  // Reshape already made the top a view of the bottom; there is nothing left to do.
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {}
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override {}

  vector<int> copy_axes_;   // positions in shape that hold 0 (copy the bottom's dim)
  int inferred_axis_ = -1;  // position in shape that holds -1, or -1 if none
  int constant_count_ = 1;  // product of the positive dims in shape
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_RESHAPE_LAYER_HPP_
