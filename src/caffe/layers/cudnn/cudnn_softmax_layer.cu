// Forward and backward passes of CuDNNSoftmaxLayer: one cuDNN call each, on the default stream.
// Empty in builds without cuDNN.
#ifdef USE_CUDNN

#include "caffe/layers/cudnn/cudnn_softmax_layer.hpp"

namespace caffe {

template <typename Dtype>
void CuDNNSoftmaxLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  if (!use_cudnn_) {
    SoftmaxLayer<Dtype>::Forward_gpu(bottom, top);
    return;
  }
  CUDNN_CHECK(cudnnSoftmaxForward(CuDNNHandle(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL,
                                  CuDNNOne<Dtype>(), tensor_desc_.get(), bottom[0]->gpu_data(),
                                  CuDNNZero<Dtype>(), tensor_desc_.get(),
                                  top[0]->mutable_gpu_data()));
}

template <typename Dtype>
void CuDNNSoftmaxLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top,
                                            const vector<bool>& propagate_down,
                                            const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  if (!use_cudnn_) {
    SoftmaxLayer<Dtype>::Backward_gpu(top, propagate_down, bottom);
    return;
  }
  // bottom_diff = (top_diff - sum over C of top_diff * top) * top.
  CUDNN_CHECK(cudnnSoftmaxBackward(
      CuDNNHandle(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, CuDNNOne<Dtype>(),
      tensor_desc_.get(), top[0]->gpu_data(), tensor_desc_.get(), top[0]->gpu_diff(),
      CuDNNZero<Dtype>(), tensor_desc_.get(), bottom[0]->mutable_gpu_diff()));
}

INSTANTIATE_LAYER_GPU_FUNCS(CuDNNSoftmaxLayer);

}  // namespace caffe

#endif  // USE_CUDNN
