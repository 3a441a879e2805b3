#include "caffe/layers/tanh_layer.hpp"

#include "caffe/layers/cudnn_tanh_layer.hpp"
#include "caffe/util/cudnn.hpp"
#include "caffe/util/parallel.hpp"
#include "caffe/util/vector_math.hpp"

namespace caffe {

template <typename Dtype>
void TanHLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  caffe_tanh(bottom[0]->count(), bottom[0]->cpu_data(), top[0]->mutable_cpu_data());
}

template <typename Dtype>
void TanHLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                    const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_data = top[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  caffe_parallel_for(bottom[0]->count(), [=](int i) {
    const Dtype tanh_x = top_data[i];
    bottom_diff[i] = top_diff[i] * (Dtype(1) - tanh_x * tanh_x);
  });
}

INSTANTIATE_CLASS(TanHLayer);

// cuDNN's engine in GPU mode where this build has it and the engine asked allows it
// (include/caffe/util/cudnn.hpp); Caffe's otherwise.
template <typename Dtype>
shared_ptr<Layer<Dtype>> GetTanHLayer(const LayerParameter& param) {
  const bool cudnn =
      UseCudnnEngine(param, TanHParameter::Engine_Name(param.tanh_param().engine()));
#ifdef USE_CUDNN
  if (cudnn) return std::make_shared<CuDNNTanHLayer<Dtype>>(param);
#endif
  (void)cudnn;
  return std::make_shared<TanHLayer<Dtype>>(param);
}

REGISTER_LAYER_CREATOR(TanH, GetTanHLayer);

}  // namespace caffe
