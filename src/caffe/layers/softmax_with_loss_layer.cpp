#include "caffe/layers/softmax_with_loss_layer.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace caffe {

template <typename Dtype>
void SoftmaxWithLossLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LossLayer<Dtype>::LayerSetUp(bottom, top);
  // The inner layer reads softmax_param from a copy of our parameters; it must not inherit our
  // loss weights (it has one top, and its output is not a loss).
  LayerParameter softmax_param(this->layer_param_);
  softmax_param.set_type("Softmax");
  softmax_param.clear_loss_weight();
  softmax_layer_ = LayerRegistry<Dtype>::CreateLayer(softmax_param);
  softmax_bottom_vec_ = {bottom[0]};
  softmax_top_vec_ = {&prob_};
  softmax_layer_->SetUp(softmax_bottom_vec_, softmax_top_vec_);

  const LossParameter& loss_param = this->layer_param_.loss_param();
  has_ignore_label_ = loss_param.has_ignore_label();
  if (has_ignore_label_) ignore_label_ = loss_param.ignore_label();
  normalization_ = LossLayer<Dtype>::NormalizationMode(loss_param);
}

template <typename Dtype>
void SoftmaxWithLossLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LossLayer<Dtype>::Reshape(bottom, top);
  // Follow bottom[0] even when a caller passes a different blob than it gave SetUp.
  softmax_bottom_vec_[0] = bottom[0];
  softmax_layer_->Reshape(softmax_bottom_vec_, softmax_top_vec_);
  softmax_axis_ = bottom[0]->CanonicalAxisIndex(this->layer_param_.softmax_param().axis());
  outer_num_ = bottom[0]->count(0, softmax_axis_);
  channels_ = bottom[0]->shape(softmax_axis_);
  inner_num_ = bottom[0]->count(softmax_axis_ + 1);
  LAYER_CHECK_EQ(outer_num_ * inner_num_, bottom[1]->count())
      << "needs one label per prediction: bottom[0] " << bottom[0]->shape_string()
      << " with softmax axis " << softmax_axis_ << " makes " << outer_num_ * inner_num_
      << " predictions, but bottom[1] " << bottom[1]->shape_string() << " holds "
      << bottom[1]->count() << " labels";
  if (top.size() >= 2) top[1]->ReshapeLike(*bottom[0]);
#ifndef CPU_ONLY
  // The GPU passes' scratch, shaped here so that LMS plans it.
  position_loss_.Reshape(vector<int>{outer_num_ * inner_num_});
  position_counted_.Reshape(vector<int>{outer_num_ * inner_num_});
  first_bad_label_.Reshape(vector<int>{1});
#endif
}

template <typename Dtype>
void SoftmaxWithLossLayer<Dtype>::CheckLabel(int label_value, int position) const {
  LAYER_CHECK(label_value >= 0 && label_value < channels_)
      << "label " << label_value << " at position " << position << " of bottom[1] is out of range; "
      << "labels must be in [0, " << channels_ << ") for " << channels_ << " classes"
      << (has_ignore_label_ ? "" : " (or set loss_param.ignore_label)");
}

template <typename Dtype>
void SoftmaxWithLossLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  softmax_layer_->Forward(softmax_bottom_vec_, softmax_top_vec_);
  const Dtype* prob_data = prob_.cpu_data();
  const Dtype* label = bottom[1]->cpu_data();
  const int dim = channels_ * inner_num_;
  int valid_count = 0;
  Dtype loss = 0;
  for (int o = 0; o < outer_num_; ++o) {
    for (int i = 0; i < inner_num_; ++i) {
      const int position = o * inner_num_ + i;
      const int label_value = static_cast<int>(label[position]);
      if (has_ignore_label_ && label_value == ignore_label_) continue;
      CheckLabel(label_value, position);
      loss -= std::log(std::max(prob_data[o * dim + label_value * inner_num_ + i], Dtype(FLT_MIN)));
      ++valid_count;
    }
  }
  top[0]->mutable_cpu_data()[0] =
      loss / LossLayer<Dtype>::GetNormalizer(normalization_, outer_num_, inner_num_, valid_count);
  if (top.size() == 2) top[1]->ShareData(prob_);
}

template <typename Dtype>
void SoftmaxWithLossLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top,
                                               const vector<bool>& propagate_down,
                                               const Blobs<Dtype>& bottom) {
  LAYER_CHECK(!propagate_down[1]) << "cannot backpropagate to the labels (bottom[1])";
  if (!propagate_down[0]) return;
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const Dtype* label = bottom[1]->cpu_data();
  const int dim = channels_ * inner_num_;
  caffe_copy(prob_.count(), prob_.cpu_data(), bottom_diff);
  int valid_count = 0;
  for (int o = 0; o < outer_num_; ++o) {
    for (int i = 0; i < inner_num_; ++i) {
      const int position = o * inner_num_ + i;
      const int label_value = static_cast<int>(label[position]);
      if (has_ignore_label_ && label_value == ignore_label_) {
        for (int c = 0; c < channels_; ++c) bottom_diff[o * dim + c * inner_num_ + i] = 0;
        continue;
      }
      CheckLabel(label_value, position);
      bottom_diff[o * dim + label_value * inner_num_ + i] -= 1;
      ++valid_count;
    }
  }
  const Dtype scale =
      top[0]->cpu_diff()[0] /
      LossLayer<Dtype>::GetNormalizer(normalization_, outer_num_, inner_num_, valid_count);
  caffe_scal(prob_.count(), scale, bottom_diff);
}

template <typename Dtype>
bool SoftmaxWithLossLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                                   const Blobs<Dtype>& top,
                                                   const vector<bool>& propagate_down,
                                                   MemoryUses* uses) const {
  Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  if (pass == Pass::kForward) {
    // Forward runs the inner Softmax layer into prob_.
    if (!softmax_layer_->DeclareMemoryUse(pass, softmax_bottom_vec_, softmax_top_vec_, {}, uses)) {
      return false;
    }
  } else {
    uses->AddData(prob_, kRead);
  }
#ifndef CPU_ONLY
  if (Caffe::mode() == Caffe::GPU) {
    if (pass == Pass::kForward) uses->AddData(position_loss_, kScratch);
    uses->AddData(position_counted_, kScratch);
    uses->AddData(first_bad_label_, kScratch);
  }
#endif
  return true;
}

INSTANTIATE_CLASS(SoftmaxWithLossLayer);
REGISTER_LAYER_CLASS(SoftmaxWithLoss);

}  // namespace caffe
