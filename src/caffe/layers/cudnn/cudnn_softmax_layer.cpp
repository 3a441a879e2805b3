// Setup of CuDNNSoftmaxLayer (include/caffe/layers/cudnn/cudnn_softmax_layer.hpp); its passes are
// in cudnn_softmax_layer.cu. Empty in builds without cuDNN.
#ifdef USE_CUDNN

#include "caffe/layers/cudnn/cudnn_softmax_layer.hpp"

namespace caffe {

template <typename Dtype>
void CuDNNSoftmaxLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  SoftmaxLayer<Dtype>::Reshape(bottom, top);
  // cuDNN's softmax is not documented to allow its output over its input: in place runs on
  // SoftmaxLayer's path, which allows it.
  use_cudnn_ = Caffe::mode() == Caffe::GPU && bottom[0] != top[0] && this->outer_num_ > 0 &&
               this->channels_ > 0 && this->inner_num_ > 0 && CuDNNCanHold(bottom[0]->count());
  if (!use_cudnn_) return;
  SetCuDNNTensor(tensor_desc_.get(), CuDNNDataType<Dtype>(),
                 {this->outer_num_, this->channels_, this->inner_num_, 1});
}

INSTANTIATE_CLASS(CuDNNSoftmaxLayer);

// The cuDNN engine of Softmax layers (layer_engine.hpp chooses).
REGISTER_LAYER_ENGINE(Softmax, kCuDNN, CuDNNSoftmaxLayer,
                      [](const ::caffe::LayerParameter&) { return true; });

}  // namespace caffe

#endif  // USE_CUDNN
