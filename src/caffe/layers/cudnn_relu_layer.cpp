// Setup of CuDNNReLULayer (include/caffe/layers/cudnn_relu_layer.hpp); its passes are in
// cudnn_relu_layer.cu. Empty in builds without cuDNN.
#ifdef USE_CUDNN

#include "caffe/layers/cudnn_relu_layer.hpp"

namespace caffe {

template <typename Dtype>
void CuDNNReLULayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  ReLULayer<Dtype>::Reshape(bottom, top);
  use_cudnn_ =
      Caffe::mode() == Caffe::GPU &&
      activation_.Configure(CUDNN_ACTIVATION_RELU, CudnnDataType<Dtype>(), bottom[0]->shape());
}

INSTANTIATE_CLASS(CuDNNReLULayer);

}  // namespace caffe

#endif  // USE_CUDNN
