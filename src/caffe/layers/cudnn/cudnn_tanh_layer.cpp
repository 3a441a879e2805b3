// Setup of CuDNNTanHLayer (include/caffe/layers/cudnn/cudnn_tanh_layer.hpp); its passes are in
// cudnn_tanh_layer.cu. Empty in builds without cuDNN.
#ifdef USE_CUDNN

#include "caffe/layers/cudnn/cudnn_tanh_layer.hpp"

namespace caffe {

template <typename Dtype>
void CuDNNTanHLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  TanHLayer<Dtype>::Reshape(bottom, top);
  use_cudnn_ =
      Caffe::mode() == Caffe::GPU &&
      activation_.Configure(CUDNN_ACTIVATION_TANH, CuDNNDataType<Dtype>(), bottom[0]->shape());
}

INSTANTIATE_CLASS(CuDNNTanHLayer);

// The cuDNN engine of TanH layers (layer_engine.hpp chooses).
REGISTER_LAYER_ENGINE(TanH, kCuDNN, CuDNNTanHLayer,
                      [](const ::caffe::LayerParameter&) { return true; });

}  // namespace caffe

#endif  // USE_CUDNN
