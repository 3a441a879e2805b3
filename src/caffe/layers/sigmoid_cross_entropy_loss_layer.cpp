#include "caffe/layers/sigmoid_cross_entropy_loss_layer.hpp"

#include <cmath>

namespace caffe {

template <typename Dtype>
void SigmoidCrossEntropyLossLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom,
                                                     const Blobs<Dtype>& top) {
  LossLayer<Dtype>::LayerSetUp(bottom, top);
  // The inner layer gets none of our parameters: its one top is not a loss.
  LayerParameter sigmoid_param;
  sigmoid_param.set_name(this->layer_param_.name());
  sigmoid_param.set_type("Sigmoid");
  sigmoid_param.set_phase(this->layer_param_.phase());
  sigmoid_layer_ = std::make_unique<SigmoidLayer<Dtype>>(sigmoid_param);
  sigmoid_bottom_vec_ = {bottom[0]};
  sigmoid_top_vec_ = {&sigmoid_output_};
  sigmoid_layer_->SetUp(sigmoid_bottom_vec_, sigmoid_top_vec_);

  const LossParameter& loss_param = this->layer_param_.loss_param();
  has_ignore_label_ = loss_param.has_ignore_label();
  if (has_ignore_label_) ignore_label_ = loss_param.ignore_label();
  // Unlike the other losses, BVLC documents BATCH_SIZE as this layer's default.
  if (loss_param.has_normalization() || loss_param.has_normalize()) {
    normalization_ = LossLayer<Dtype>::NormalizationMode(loss_param);
  } else {
    normalization_ = LossParameter::BATCH_SIZE;
  }
}

template <typename Dtype>
void SigmoidCrossEntropyLossLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom,
                                                  const Blobs<Dtype>& top) {
  LossLayer<Dtype>::Reshape(bottom, top);
  outer_num_ = bottom[0]->shape(0);
  inner_num_ = bottom[0]->count(1);
  LAYER_CHECK_EQ(bottom[0]->count(), bottom[1]->count())
      << "needs one target per score: bottom[0] " << bottom[0]->shape_string() << ", bottom[1] "
      << bottom[1]->shape_string();
  // Follow bottom[0] even when a caller passes a different blob than it gave SetUp.
  sigmoid_bottom_vec_[0] = bottom[0];
  sigmoid_layer_->Reshape(sigmoid_bottom_vec_, sigmoid_top_vec_);
#ifndef CPU_ONLY
  // The GPU forward's scratch, shaped here so that LMS plans it.
  value_loss_.Reshape(vector<int>{bottom[0]->count()});
  value_counted_.Reshape(vector<int>{bottom[0]->count()});
#endif
}

template <typename Dtype>
void SigmoidCrossEntropyLossLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom,
                                                      const Blobs<Dtype>& top) {
  sigmoid_layer_->Forward(sigmoid_bottom_vec_, sigmoid_top_vec_);
  const Dtype* input = bottom[0]->cpu_data();
  const Dtype* target = bottom[1]->cpu_data();
  const int count = bottom[0]->count();
  int valid_count = 0;
  Dtype loss = 0;
  for (int i = 0; i < count; ++i) {
    if (has_ignore_label_ && static_cast<int>(target[i]) == ignore_label_) continue;
    // exp() only ever sees -|x|, so large scores of either sign cannot overflow.
    const Dtype positive = input[i] >= 0;
    loss -= input[i] * (target[i] - positive) -
            std::log(1 + std::exp(input[i] - 2 * input[i] * positive));
    ++valid_count;
  }
  normalizer_ =
      LossLayer<Dtype>::GetNormalizer(normalization_, outer_num_, inner_num_, valid_count);
  top[0]->mutable_cpu_data()[0] = loss / normalizer_;
}

template <typename Dtype>
void SigmoidCrossEntropyLossLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top,
                                                       const vector<bool>& propagate_down,
                                                       const Blobs<Dtype>& bottom) {
  LAYER_CHECK(!propagate_down[1]) << "cannot backpropagate to the targets (bottom[1])";
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  const Dtype* target = bottom[1]->cpu_data();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  caffe_sub(count, sigmoid_output_.cpu_data(), target, bottom_diff);
  if (has_ignore_label_) {
    for (int i = 0; i < count; ++i) {
      if (static_cast<int>(target[i]) == ignore_label_) bottom_diff[i] = 0;
    }
  }
  caffe_scal(count, top[0]->cpu_diff()[0] / normalizer_, bottom_diff);
}

template <typename Dtype>
bool SigmoidCrossEntropyLossLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                                           const Blobs<Dtype>& top,
                                                           const vector<bool>& propagate_down,
                                                           MemoryUses* uses) const {
  Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  if (pass == Pass::kBackward) {
    uses->AddData(sigmoid_output_, kRead);
    return true;
  }
  // Forward runs the inner Sigmoid into sigmoid_output_.
  sigmoid_layer_->DeclareMemoryUse(pass, sigmoid_bottom_vec_, sigmoid_top_vec_, {}, uses);
#ifndef CPU_ONLY
  if (Caffe::mode() == Caffe::GPU) {
    uses->AddData(value_loss_, kScratch);
    uses->AddData(value_counted_, kScratch);
  }
#endif
  return true;
}

INSTANTIATE_CLASS(SigmoidCrossEntropyLossLayer);
REGISTER_LAYER_CLASS(SigmoidCrossEntropyLoss);

}  // namespace caffe
