// Forward and backward passes of CuDNNPoolingLayer: one cuDNN pooling call each, on the default
// stream. Empty in builds without cuDNN.
#ifdef USE_CUDNN

#include "caffe/layers/cudnn/cudnn_pooling_layer.hpp"

namespace caffe {

template <typename Dtype>
void CuDNNPoolingLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  if (!use_cudnn_) {
    PoolingLayer<Dtype>::Forward_gpu(bottom, top);
    return;
  }
  CUDNN_CHECK(cudnnPoolingForward(CuDNNHandle(), pooling_desc_.get(), CuDNNOne<Dtype>(),
                                  bottom_desc_.get(), bottom[0]->gpu_data(), CuDNNZero<Dtype>(),
                                  top_desc_.get(), top[0]->mutable_gpu_data()));
  if (this->layer_param_.pooling_param().pool() == PoolingParameter_PoolMethod_MAX) {
    caffe_gpu_copy(top[0]->count(), top[0]->gpu_data(), max_top_.mutable_gpu_data());
  }
}

template <typename Dtype>
void CuDNNPoolingLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top,
                                            const vector<bool>& propagate_down,
                                            const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  if (!use_cudnn_) {
    PoolingLayer<Dtype>::Backward_gpu(top, propagate_down, bottom);
    return;
  }
  // MAX routes each output's gradient to its window's maximum, found again from x and y (the
  // copy forward kept: the top itself may have been changed in place since).
  const bool max = this->layer_param_.pooling_param().pool() == PoolingParameter_PoolMethod_MAX;
  const Dtype* top_data = max ? max_top_.gpu_data() : top[0]->gpu_data();
  CUDNN_CHECK(cudnnPoolingBackward(CuDNNHandle(), pooling_desc_.get(), CuDNNOne<Dtype>(),
                                   top_desc_.get(), top_data, top_desc_.get(), top[0]->gpu_diff(),
                                   bottom_desc_.get(), bottom[0]->gpu_data(), CuDNNZero<Dtype>(),
                                   bottom_desc_.get(), bottom[0]->mutable_gpu_diff()));
}

INSTANTIATE_LAYER_GPU_FUNCS(CuDNNPoolingLayer);

}  // namespace caffe

#endif  // USE_CUDNN
