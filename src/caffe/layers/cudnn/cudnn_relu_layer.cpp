// Setup of CuDNNReLULayer (include/caffe/layers/cudnn/cudnn_relu_layer.hpp); its passes are in
// cudnn_relu_layer.cu. Empty in builds without cuDNN.
#ifdef USE_CUDNN

#include "caffe/layers/cudnn/cudnn_relu_layer.hpp"

namespace caffe {

template <typename Dtype>
void CuDNNReLULayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  ReLULayer<Dtype>::Reshape(bottom, top);
  use_cudnn_ =
      Caffe::mode() == Caffe::GPU &&
      activation_.Configure(CUDNN_ACTIVATION_RELU, CuDNNDataType<Dtype>(), bottom[0]->shape());
}

INSTANTIATE_CLASS(CuDNNReLULayer);

// The cuDNN engine of ReLU layers (layer_engine.hpp chooses). cuDNN has no leaky ReLU.
REGISTER_LAYER_ENGINE(ReLU, kCuDNN, CuDNNReLULayer, [](const ::caffe::LayerParameter& param) {
  return param.relu_param().negative_slope() == 0;
});

}  // namespace caffe

#endif  // USE_CUDNN
