// Setup of CuDNNLRNLayer (include/caffe/layers/cudnn/cudnn_lrn_layer.hpp); its passes are in
// cudnn_lrn_layer.cu. Empty in builds without cuDNN.
#ifdef USE_CUDNN

#include "caffe/layers/cudnn/cudnn_lrn_layer.hpp"

namespace caffe {

template <typename Dtype>
void CuDNNLRNLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LRNLayer<Dtype>::LayerSetUp(bottom, top);
  const LRNParameter& param = this->layer_param_.lrn_param();
  const unsigned size = param.local_size();
  parameters_fit_ = param.norm_region() == LRNParameter_NormRegion_ACROSS_CHANNELS &&
                    size >= CUDNN_LRN_MIN_N && size <= CUDNN_LRN_MAX_N &&
                    param.k() >= CUDNN_LRN_MIN_K && param.beta() >= CUDNN_LRN_MIN_BETA;
}

template <typename Dtype>
void CuDNNLRNLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LRNLayer<Dtype>::Reshape(bottom, top);
  use_cudnn_ = false;
  if (!parameters_fit_ || Caffe::mode() != Caffe::GPU || !CuDNNCanHold(bottom[0]->count())) {
    return;
  }
  // cuDNN divides alpha by n itself, as Caffe's formula does.
  const LRNParameter& param = this->layer_param_.lrn_param();
  CUDNN_CHECK(cudnnSetLRNDescriptor(lrn_desc_.get(), param.local_size(), param.alpha(),
                                    param.beta(), param.k()));
  SetCuDNNTensor(tensor_desc_.get(), CuDNNDataType<Dtype>(), bottom[0]->shape());
  use_cudnn_ = true;
}

template <typename Dtype>
bool CuDNNLRNLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                            const Blobs<Dtype>& top,
                                            const vector<bool>& propagate_down,
                                            MemoryUses* uses) const {
  // On cuDNN, LRNLayer's saved buffers stay unused.
  return use_cudnn_ ? Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses)
                    : LRNLayer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
}

INSTANTIATE_CLASS(CuDNNLRNLayer);

// The cuDNN engine of LRN layers (layer_engine.hpp chooses). cuDNN's within-channel normalization
// is not Caffe's WITHIN_CHANNEL.
REGISTER_LAYER_ENGINE(LRN, kCuDNN, CuDNNLRNLayer, [](const ::caffe::LayerParameter& param) {
  return param.lrn_param().norm_region() == LRNParameter_NormRegion_ACROSS_CHANNELS;
});

}  // namespace caffe

#endif  // USE_CUDNN
