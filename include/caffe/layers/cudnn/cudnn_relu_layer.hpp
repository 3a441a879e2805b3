// ReLU on cuDNN (builds with USE_CUDNN; chosen in GPU mode by GetReLULayer for engine DEFAULT or
// CUDNN, and only when negative_slope is 0: cuDNN has no leaky ReLU). Same results as ReLULayer:
// top = max(bottom, 0); bottom_diff = top_diff where bottom > 0, else 0. Runs in place too.
#ifndef CAFFE_LAYERS_CUDNN_CUDNN_RELU_LAYER_HPP_
#define CAFFE_LAYERS_CUDNN_CUDNN_RELU_LAYER_HPP_

#ifdef USE_CUDNN

#include "caffe/layers/cudnn/cudnn.hpp"
#include "caffe/layers/relu_layer.hpp"

namespace caffe {

/// ReLULayer through cudnnActivationForward / Backward (CUDNN_ACTIVATION_RELU).
/// bottom[0]: any shape; top[0]: the same shape (may be bottom[0] itself).
template <typename Dtype>
class CuDNNReLULayer : public ReLULayer<Dtype> {
 public:
  using ReLULayer<Dtype>::ReLULayer;
  /// ReLULayer's shapes, then (in GPU mode) cuDNN's descriptors for them.
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

 protected:
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;

 private:
  CuDNNActivation activation_;
  bool use_cudnn_ = false;  // false: an empty or huge blob, or CPU mode (ReLULayer's path)
};

}  // namespace caffe

#endif  // USE_CUDNN
#endif  // CAFFE_LAYERS_CUDNN_CUDNN_RELU_LAYER_HPP_
