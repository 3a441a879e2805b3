// Softmax on cuDNN (builds with USE_CUDNN; chosen in GPU mode by GetSoftmaxLayer for engine
// DEFAULT or CUDNN). Any softmax_param.axis: the bottom is seen as (outer, C, inner, 1) and cuDNN
// normalizes over C at every (outer, inner) position, subtracting the maximum first
// (CUDNN_SOFTMAX_ACCURATE), as SoftmaxLayer does. In-place use and empty blobs run on
// SoftmaxLayer's GPU path.
// Legend: outer = product of the dims before `axis`, C = dim of `axis`, inner = product after it.
#ifndef CAFFE_LAYERS_CUDNN_CUDNN_SOFTMAX_LAYER_HPP_
#define CAFFE_LAYERS_CUDNN_CUDNN_SOFTMAX_LAYER_HPP_

#ifdef USE_CUDNN

#include "caffe/layers/cudnn/cudnn.hpp"
#include "caffe/layers/softmax_layer.hpp"

namespace caffe {

/// SoftmaxLayer through cudnnSoftmaxForward / Backward (CHANNEL mode over (outer, C, inner, 1)).
template <typename Dtype>
class CuDNNSoftmaxLayer : public SoftmaxLayer<Dtype> {
 public:
  using SoftmaxLayer<Dtype>::SoftmaxLayer;
  /// SoftmaxLayer's checks and shapes, then (in GPU mode) cuDNN's descriptor for them.
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

 protected:
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;

 private:
  bool use_cudnn_ = false;  // false: CPU mode, an empty blob, or in place
  CuDNNTensorDescriptor tensor_desc_;
};

}  // namespace caffe

#endif  // USE_CUDNN
#endif  // CAFFE_LAYERS_CUDNN_CUDNN_SOFTMAX_LAYER_HPP_
