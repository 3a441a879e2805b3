// Setup of CuDNNPoolingLayer (include/caffe/layers/cudnn/cudnn_pooling_layer.hpp): when cuDNN's
// pooling equals Caffe's for the current shapes, and the descriptors; the passes are in
// cudnn_pooling_layer.cu. Empty in builds without cuDNN.
#ifdef USE_CUDNN

#include "caffe/layers/cudnn/cudnn_pooling_layer.hpp"

#include <vector>

namespace caffe {

template <typename Dtype>
void CuDNNPoolingLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  PoolingLayer<Dtype>::LayerSetUp(bottom, top);
  // PoolingLayer has checked the parameters: kernel_size / pad / stride apply to every spatial
  // axis, or the *_h / *_w forms (2-D only) to the two.
  const PoolingParameter& param = this->layer_param_.pooling_param();
  const int axes = bottom[0]->num_axes() - 2;
  global_pooling_ = param.global_pooling();
  kernel_.assign(axes, static_cast<int>(param.kernel_size()));
  pad_.assign(axes, static_cast<int>(param.pad()));
  stride_.assign(axes, static_cast<int>(param.stride()));
  if (param.has_kernel_h())
    kernel_ = {static_cast<int>(param.kernel_h()), static_cast<int>(param.kernel_w())};
  if (param.has_pad_h()) pad_ = {static_cast<int>(param.pad_h()), static_cast<int>(param.pad_w())};
  if (param.has_stride_h()) {
    stride_ = {static_cast<int>(param.stride_h()), static_cast<int>(param.stride_w())};
  }
}

template <typename Dtype>
void CuDNNPoolingLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  PoolingLayer<Dtype>::Reshape(bottom, top);
  use_cudnn_ = false;
  const PoolingParameter_PoolMethod method = this->layer_param_.pooling_param().pool();
  // cuDNN gives no argmax for a second top; STOCHASTIC is Caffe's own.
  if (Caffe::mode() != Caffe::GPU || top.size() > 1 ||
      (method != PoolingParameter_PoolMethod_MAX && method != PoolingParameter_PoolMethod_AVE)) {
    return;
  }
  if (!CuDNNCanHold(bottom[0]->count()) || !CuDNNCanHold(top[0]->count())) return;
  const int axes = bottom[0]->num_axes() - 2;
  // cuDNN pools 2-D and 3-D: 1-D gets a unit axis in front.
  const int lead = axes < 2 ? 2 - axes : 0;
  std::vector<int> window(lead, 1), padding(lead, 0), strides(lead, 1);
  std::vector<int> bottom_dims{bottom[0]->shape(0), bottom[0]->shape(1)};
  std::vector<int> top_dims{top[0]->shape(0), top[0]->shape(1)};
  bottom_dims.insert(bottom_dims.end(), lead, 1);
  top_dims.insert(top_dims.end(), lead, 1);
  for (int a = 0; a < axes; ++a) {
    const int input = bottom[0]->shape(2 + a);
    const int pooled = top[0]->shape(2 + a);
    const int kernel = global_pooling_ ? input : kernel_[a];
    const int span = input + 2 * pad_[a] - kernel;
    // cuDNN's output size (floor rounding) must be Caffe's: then no window is clipped.
    if (span < 0 || pad_[a] >= kernel || span / stride_[a] + 1 != pooled) return;
    window.push_back(kernel);
    padding.push_back(pad_[a]);
    strides.push_back(stride_[a]);
    bottom_dims.push_back(input);
    top_dims.push_back(pooled);
  }
  const cudnnDataType_t type = CuDNNDataType<Dtype>();
  SetCuDNNTensor(bottom_desc_.get(), type, bottom_dims);
  SetCuDNNTensor(top_desc_.get(), type, top_dims);
  // MAX: Caffe's strict '>' never picks a NaN, as cuDNN's NOT_PROPAGATE_NAN; the deterministic
  // mode, since plain MAX's backward uses atomics and varies from run to run where windows
  // overlap. AVE: the window sum over the whole kernel, padding counting as zeros.
  const cudnnPoolingMode_t mode = method == PoolingParameter_PoolMethod_MAX
                                      ? CUDNN_POOLING_MAX_DETERMINISTIC
                                      : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
  CUDNN_CHECK(cudnnSetPoolingNdDescriptor(pooling_desc_.get(), mode, CUDNN_NOT_PROPAGATE_NAN,
                                          static_cast<int>(window.size()), window.data(),
                                          padding.data(), strides.data()));
  if (method == PoolingParameter_PoolMethod_MAX) max_top_.ReshapeLike(*top[0]);
  use_cudnn_ = true;
}

template <typename Dtype>
bool CuDNNPoolingLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                                const Blobs<Dtype>& top,
                                                const vector<bool>& propagate_down,
                                                MemoryUses* uses) const {
  PoolingLayer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  uses->AddData(max_top_, pass == Pass::kForward ? kOverwrite : kRead);
  // cuDNN's backward takes x and y whatever the method (MAX finds its maxima again from them;
  // y is the copy in max_top_ for MAX).
  if (pass == Pass::kBackward && use_cudnn_ && propagate_down[0]) {
    uses->AddData(*bottom[0], kRead);
    if (this->layer_param_.pooling_param().pool() != PoolingParameter_PoolMethod_MAX) {
      uses->AddData(*top[0], kRead);
    }
  }
  return true;
}

INSTANTIATE_CLASS(CuDNNPoolingLayer);

// The cuDNN engine of Pooling layers (layer_engine.hpp chooses). cuDNN gives no argmax top, and has
// no STOCHASTIC pooling.
REGISTER_LAYER_ENGINE(Pooling, kCuDNN, CuDNNPoolingLayer, [](const ::caffe::LayerParameter& param) {
  return param.top_size() <= 1 &&
         param.pooling_param().pool() != PoolingParameter_PoolMethod_STOCHASTIC;
});

}  // namespace caffe

#endif  // USE_CUDNN
