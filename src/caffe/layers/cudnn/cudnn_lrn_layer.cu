// Forward and backward passes of CuDNNLRNLayer: one cuDNN call each, on the default stream.
// Empty in builds without cuDNN.
#ifdef USE_CUDNN

#include "caffe/layers/cudnn/cudnn_lrn_layer.hpp"

namespace caffe {

template <typename Dtype>
void CuDNNLRNLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  if (!use_cudnn_) {
    LRNLayer<Dtype>::Forward_gpu(bottom, top);
    return;
  }
  CUDNN_CHECK(cudnnLRNCrossChannelForward(
      CuDNNHandle(), lrn_desc_.get(), CUDNN_LRN_CROSS_CHANNEL_DIM1, CuDNNOne<Dtype>(),
      tensor_desc_.get(), bottom[0]->gpu_data(), CuDNNZero<Dtype>(), tensor_desc_.get(),
      top[0]->mutable_gpu_data()));
}

template <typename Dtype>
void CuDNNLRNLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                        const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  if (!use_cudnn_) {
    LRNLayer<Dtype>::Backward_gpu(top, propagate_down, bottom);
    return;
  }
  CUDNN_CHECK(cudnnLRNCrossChannelBackward(
      CuDNNHandle(), lrn_desc_.get(), CUDNN_LRN_CROSS_CHANNEL_DIM1, CuDNNOne<Dtype>(),
      tensor_desc_.get(), top[0]->gpu_data(), tensor_desc_.get(), top[0]->gpu_diff(),
      tensor_desc_.get(), bottom[0]->gpu_data(), CuDNNZero<Dtype>(), tensor_desc_.get(),
      bottom[0]->mutable_gpu_diff()));
}

INSTANTIATE_LAYER_GPU_FUNCS(CuDNNLRNLayer);

}  // namespace caffe

#endif  // USE_CUDNN
