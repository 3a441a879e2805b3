// Setup of CuDNNSigmoidLayer (include/caffe/layers/cudnn/cudnn_sigmoid_layer.hpp); its passes are
// in cudnn_sigmoid_layer.cu. Empty in builds without cuDNN.
#ifdef USE_CUDNN

#include "caffe/layers/cudnn/cudnn_sigmoid_layer.hpp"

namespace caffe {

template <typename Dtype>
void CuDNNSigmoidLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  SigmoidLayer<Dtype>::Reshape(bottom, top);
  use_cudnn_ =
      Caffe::mode() == Caffe::GPU &&
      activation_.Configure(CUDNN_ACTIVATION_SIGMOID, CuDNNDataType<Dtype>(), bottom[0]->shape());
}

INSTANTIATE_CLASS(CuDNNSigmoidLayer);

// The cuDNN engine of Sigmoid layers (layer_engine.hpp chooses).
REGISTER_LAYER_ENGINE(Sigmoid, kCuDNN, CuDNNSigmoidLayer,
                      [](const ::caffe::LayerParameter&) { return true; });

}  // namespace caffe

#endif  // USE_CUDNN
