// Input: the entry point of a deployed net; its tops are filled by the caller (pycaffe, tools).
#ifndef CAFFE_LAYERS_INPUT_LAYER_HPP_
#define CAFFE_LAYERS_INPUT_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// No bottoms; top[k] is shaped by input_param.shape (given once for all tops, once per top, or
/// not at all, leaving the tops as they are). Forward and Backward do nothing.
template <typename Dtype>
class InputLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "Input"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int MinTopBlobs() const override { return 1; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  // The caller may reshape the inputs between passes; the layer keeps whatever shape they have.
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {}

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {}
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override {}
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_INPUT_LAYER_HPP_
