// Forward and backward passes of CuDNNTanHLayer: one cuDNN activation call each, on the
// default stream. Empty in builds without cuDNN.
#ifdef USE_CUDNN

#include "caffe/layers/cudnn/cudnn_tanh_layer.hpp"

namespace caffe {

template <typename Dtype>
void CuDNNTanHLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  if (!use_cudnn_) {
    TanHLayer<Dtype>::Forward_gpu(bottom, top);
    return;
  }
  activation_.Forward(bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
}

template <typename Dtype>
void CuDNNTanHLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top,
                                         const vector<bool>& propagate_down,
                                         const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  if (!use_cudnn_) {
    TanHLayer<Dtype>::Backward_gpu(top, propagate_down, bottom);
    return;
  }
  // In place, bottom's data is the output, which is fine: the tanh derivative cuDNN
  // computes reads only the output.
  activation_.Backward(top[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->gpu_data(),
                       bottom[0]->mutable_gpu_diff());
}

INSTANTIATE_LAYER_GPU_FUNCS(CuDNNTanHLayer);

}  // namespace caffe

#endif  // USE_CUDNN
