#include "caffe/layers/loss_layer.hpp"

#include <algorithm>

namespace caffe {

template <typename Dtype>
void LossLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  // Layer::SetUp applies these right after LayerSetUp. BVLC adds only the first weight and so
  // rejects a loss layer with a second top unless both weights are spelled out; a weight of 0 on
  // the extra tops (e.g. SoftmaxWithLoss's probabilities) is what such prototxts write anyway.
  if (this->layer_param_.loss_weight_size() == 0) {
    this->layer_param_.add_loss_weight(1);
    for (size_t i = 1; i < top.size(); ++i) this->layer_param_.add_loss_weight(0);
  }
}

template <typename Dtype>
void LossLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LAYER_CHECK(bottom[0]->num_axes() >= 1 && bottom[1]->num_axes() >= 1)
      << "bottoms must have a batch axis; got bottom[0] " << bottom[0]->shape_string()
      << " and bottom[1] " << bottom[1]->shape_string();
  LAYER_CHECK_EQ(bottom[0]->shape(0), bottom[1]->shape(0))
      << "bottom[0] " << bottom[0]->shape_string() << " and bottom[1] " << bottom[1]->shape_string()
      << " must have the same first dimension (batch size)";
  top[0]->Reshape(vector<int>{});  // the loss is a scalar: 0 axes
}

template <typename Dtype>
LossParameter::NormalizationMode LossLayer<Dtype>::NormalizationMode(const LossParameter& param) {
  if (!param.has_normalization() && param.has_normalize()) {
    return param.normalize() ? LossParameter::VALID : LossParameter::BATCH_SIZE;
  }
  return param.normalization();
}

template <typename Dtype>
Dtype LossLayer<Dtype>::GetNormalizer(LossParameter::NormalizationMode mode, int outer_num,
                                      int inner_num, int valid_count) {
  Dtype normalizer = 1;
  switch (mode) {
    case LossParameter::FULL:
      normalizer = Dtype(outer_num * inner_num);
      break;
    case LossParameter::VALID:
      normalizer = valid_count == -1 ? Dtype(outer_num * inner_num) : Dtype(valid_count);
      break;
    case LossParameter::BATCH_SIZE:
      normalizer = Dtype(outer_num);
      break;
    case LossParameter::NONE:
      normalizer = Dtype(1);
      break;
  }
  return std::max(Dtype(1), normalizer);
}

INSTANTIATE_CLASS(LossLayer);

}  // namespace caffe
