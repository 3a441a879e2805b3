// Setup of CuDNNSigmoidLayer (include/caffe/layers/cudnn_sigmoid_layer.hpp); its passes are in
// cudnn_sigmoid_layer.cu. Empty in builds without cuDNN.
#ifdef USE_CUDNN

#include "caffe/layers/cudnn_sigmoid_layer.hpp"

namespace caffe {

template <typename Dtype>
void CuDNNSigmoidLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  SigmoidLayer<Dtype>::Reshape(bottom, top);
  use_cudnn_ =
      Caffe::mode() == Caffe::GPU &&
      activation_.Configure(CUDNN_ACTIVATION_SIGMOID, CudnnDataType<Dtype>(), bottom[0]->shape());
}

INSTANTIATE_CLASS(CuDNNSigmoidLayer);

}  // namespace caffe

#endif  // USE_CUDNN
