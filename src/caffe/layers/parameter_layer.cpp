#include "caffe/layers/parameter_layer.hpp"

#include <memory>

namespace caffe {

template <typename Dtype>
void ParameterLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const ParameterParameter& param = this->layer_param_.parameter_param();
  const vector<int> shape(param.shape().dim().begin(), param.shape().dim().end());
  if (!this->blobs_.empty()) {
    LAYER_CHECK_EQ(static_cast<int>(this->blobs_.size()), 1)
        << "expected one parameter blob, got " << this->blobs_.size();
    LAYER_CHECK(this->blobs_[0]->shape() == shape)
        << "the parameter blob has shape " << this->blobs_[0]->shape_string()
        << "; parameter_param.shape is " << ShapeString(shape);
    VLOG(1) << "Skipping parameter initialization";
  } else {
    this->blobs_.push_back(std::make_shared<Blob<Dtype>>(shape));
  }
  this->param_propagate_down_.resize(1, true);
  top[0]->Reshape(shape);
}

template <typename Dtype>
void ParameterLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  top[0]->ShareData(*this->blobs_[0]);
  top[0]->ShareDiff(*this->blobs_[0]);
}

INSTANTIATE_CLASS(ParameterLayer);
REGISTER_LAYER_CLASS(Parameter);

}  // namespace caffe
