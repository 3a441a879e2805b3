// Sigmoid on cuDNN (builds with USE_CUDNN; chosen in GPU mode by GetSigmoidLayer for engine
// DEFAULT or CUDNN). Same results as SigmoidLayer: top = 1 / (1 + exp(-bottom)); bottom_diff =
// top_diff * top * (1 - top). Runs in place too.
#ifndef CAFFE_LAYERS_CUDNN_CUDNN_SIGMOID_LAYER_HPP_
#define CAFFE_LAYERS_CUDNN_CUDNN_SIGMOID_LAYER_HPP_

#ifdef USE_CUDNN

#include "caffe/layers/cudnn/cudnn.hpp"
#include "caffe/layers/sigmoid_layer.hpp"

namespace caffe {

/// SigmoidLayer through cudnnActivationForward / Backward (CUDNN_ACTIVATION_SIGMOID).
/// bottom[0]: any shape; top[0]: the same shape (may be bottom[0] itself).
template <typename Dtype>
class CuDNNSigmoidLayer : public SigmoidLayer<Dtype> {
 public:
  using SigmoidLayer<Dtype>::SigmoidLayer;
  /// SigmoidLayer's shapes, then (in GPU mode) cuDNN's descriptors for them.
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

 protected:
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;

 private:
  CuDNNActivation activation_;
  bool use_cudnn_ = false;  // false: an empty or huge blob, or CPU mode (SigmoidLayer's path)
};

}  // namespace caffe

#endif  // USE_CUDNN
#endif  // CAFFE_LAYERS_CUDNN_CUDNN_SIGMOID_LAYER_HPP_
