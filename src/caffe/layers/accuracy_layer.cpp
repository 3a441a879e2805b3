#include "caffe/layers/accuracy_layer.hpp"

namespace caffe {

template <typename Dtype>
void AccuracyLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const AccuracyParameter& param = this->layer_param_.accuracy_param();
  LAYER_CHECK_GE(param.top_k(), 1u)
      << "accuracy_param.top_k is " << param.top_k() << "; must be >= 1";
  top_k_ = static_cast<int>(param.top_k());
  has_ignore_label_ = param.has_ignore_label();
  if (has_ignore_label_) ignore_label_ = param.ignore_label();
}

template <typename Dtype>
void AccuracyLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int axis = this->layer_param_.accuracy_param().axis();
  const int num_axes = bottom[0]->num_axes();
  LAYER_CHECK(axis >= -num_axes && axis < num_axes)
      << "accuracy_param.axis is " << axis << ", but bottom[0] " << bottom[0]->shape_string()
      << " has " << num_axes << " axes; must be in [" << -num_axes << ", " << num_axes << ")";
  label_axis_ = bottom[0]->CanonicalAxisIndex(axis);
  outer_num_ = bottom[0]->count(0, label_axis_);
  channels_ = bottom[0]->shape(label_axis_);
  inner_num_ = bottom[0]->count(label_axis_ + 1);
  LAYER_CHECK_LE(top_k_, channels_)
      << "top_k is " << top_k_ << ", but bottom[0] " << bottom[0]->shape_string() << " has only "
      << channels_ << " classes along axis " << label_axis_;
  LAYER_CHECK_EQ(outer_num_ * inner_num_, bottom[1]->count())
      << "needs one label per prediction: bottom[0] " << bottom[0]->shape_string()
      << " with class axis " << label_axis_ << " makes " << outer_num_ * inner_num_
      << " predictions, but bottom[1] " << bottom[1]->shape_string() << " holds "
      << bottom[1]->count() << " labels";
  top[0]->Reshape(vector<int>{});  // a scalar: 0 axes
  if (top.size() > 1) {
    top[1]->Reshape(vector<int>{channels_});
    class_count_.assign(channels_, 0);
  }
#ifndef CPU_ONLY
  counters_.Reshape(vector<int>{kClassCounters + 2 * channels_});
#endif
}

template <typename Dtype>
void AccuracyLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* scores = bottom[0]->cpu_data();
  const Dtype* label = bottom[1]->cpu_data();
  const int channels = channels_;
  const int inner = inner_num_;
  const int dim = channels * inner;
  const bool per_class = top.size() > 1;
  Dtype* class_correct = nullptr;
  if (per_class) {
    class_count_.assign(channels, 0);
    class_correct = top[1]->mutable_cpu_data();
    caffe_set(channels, Dtype(0), class_correct);
  }
  int correct = 0;
  int counted = 0;
  for (int o = 0; o < outer_num_; ++o) {
    for (int i = 0; i < inner; ++i) {
      const int position = o * inner + i;
      const int label_value = static_cast<int>(label[position]);
      if (has_ignore_label_ && label_value == ignore_label_) continue;
      LAYER_CHECK(label_value >= 0 && label_value < channels)
          << "label " << label_value << " at position " << position
          << " of bottom[1] is out of range; labels must be in [0, " << channels << ") for "
          << channels << " classes"
          << (has_ignore_label_ ? "" : " (or set accuracy_param.ignore_label)");
      const Dtype* column = scores + o * dim + i;
      const Dtype true_score = column[label_value * inner];
      // The true class itself scores >= its own score, hence the start at -1. Stop counting
      // once the answer is known.
      int num_better = -1;
      for (int c = 0; c < channels && num_better < top_k_; ++c) {
        num_better += column[c * inner] >= true_score;
      }
      if (num_better < top_k_) {
        ++correct;
        if (per_class) ++class_correct[label_value];
      }
      if (per_class) ++class_count_[label_value];
      ++counted;
    }
  }
  top[0]->mutable_cpu_data()[0] = counted == 0 ? Dtype(0) : Dtype(correct) / Dtype(counted);
  if (per_class) {
    for (int c = 0; c < channels; ++c) {
      class_correct[c] =
          class_count_[c] == 0 ? Dtype(0) : class_correct[c] / Dtype(class_count_[c]);
    }
  }
}

template <typename Dtype>
void AccuracyLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                        const Blobs<Dtype>& bottom) {
  for (size_t i = 0; i < propagate_down.size(); ++i) {
    LAYER_CHECK(!propagate_down[i])
        << "has no gradient, but bottom[" << i << "] was asked for one; Accuracy is a metric, "
        << "not a loss (set propagate_down: false or remove force_backward)";
  }
}

template <typename Dtype>
bool AccuracyLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                            const Blobs<Dtype>& top,
                                            const vector<bool>& propagate_down,
                                            MemoryUses* uses) const {
  Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
#ifndef CPU_ONLY
  if (Caffe::mode() == Caffe::GPU && pass == Pass::kForward) {
    uses->AddData(counters_, kScratch);
  }
#endif
  return true;
}

INSTANTIATE_CLASS(AccuracyLayer);
REGISTER_LAYER_CLASS(Accuracy);

}  // namespace caffe
