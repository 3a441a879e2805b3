#include "caffe/layers/scale_layer.hpp"

#include "caffe/filler.hpp"

namespace caffe {

template <typename Dtype>
void ScaleLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const ScaleParameter& param = this->layer_param_.scale_param();
  const bool learned_scale = bottom.size() == 1;
  if (learned_scale && this->blobs_.empty()) {
    const int bottom_axes = bottom[0]->num_axes();
    LAYER_CHECK(param.axis() >= -bottom_axes && param.axis() < bottom_axes)
        << "scale_param.axis is " << param.axis() << ", but bottom[0] " << bottom[0]->shape_string()
        << " has " << bottom_axes << " axes; must be in [" << -bottom_axes << ", " << bottom_axes
        << ")";
    const int axis = bottom[0]->CanonicalAxisIndex(param.axis());
    const int num_axes = param.num_axes();
    LAYER_CHECK_GE(num_axes, -1)
        << "scale_param.num_axes must be >= 0, or -1 to extend to the end of bottom[0]";
    LAYER_CHECK(num_axes == -1 || axis + num_axes <= bottom_axes)
        << "scale_param axis " << param.axis() << " with num_axes " << num_axes
        << " extends past the " << bottom_axes << " axes of bottom[0] "
        << bottom[0]->shape_string();
    const auto shape_begin = bottom[0]->shape().begin() + axis;
    const auto shape_end = num_axes == -1 ? bottom[0]->shape().end() : shape_begin + num_axes;
    this->blobs_.push_back(std::make_shared<Blob<Dtype>>(vector<int>(shape_begin, shape_end)));
    FillerParameter filler_param = param.filler();
    if (!param.has_filler()) {
      // The identity until trained.
      filler_param.set_type("constant");
      filler_param.set_value(1);
    }
    GetFiller<Dtype>(filler_param)->Fill(this->blobs_[0].get());
  }
  bias_param_id_ = -1;
  if (param.bias_term()) {
    // Blobs loaded from a model already hold the bias last: (scale, bias) or (bias).
    const size_t blobs_with_bias = learned_scale ? 2 : 1;
    if (this->blobs_.size() < blobs_with_bias) {
      const vector<int>& shape = learned_scale ? this->blobs_[0]->shape() : bottom[1]->shape();
      auto bias = std::make_shared<Blob<Dtype>>(shape);
      GetFiller<Dtype>(param.bias_filler())->Fill(bias.get());
      this->blobs_.push_back(bias);
    }
    bias_param_id_ = static_cast<int>(blobs_with_bias) - 1;
  }
  this->param_propagate_down_.resize(this->blobs_.size(), true);
}

template <typename Dtype>
void ScaleLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const ScaleParameter& param = this->layer_param_.scale_param();
  const Blob<Dtype>* scale = bottom.size() > 1 ? bottom[1] : this->blobs_[0].get();
  const char* scale_name = bottom.size() > 1 ? "bottom[1] (the scale)" : "the learned scale";
  const int bottom_axes = bottom[0]->num_axes();
  // A scalar scale broadcasts over everything; any axis would do, and 0 is always valid.
  if (scale->num_axes() == 0) {
    axis_ = 0;
  } else {
    LAYER_CHECK(param.axis() >= -bottom_axes && param.axis() < bottom_axes)
        << "scale_param.axis is " << param.axis() << ", but bottom[0] " << bottom[0]->shape_string()
        << " has " << bottom_axes << " axes; must be in [" << -bottom_axes << ", " << bottom_axes
        << ")";
    axis_ = bottom[0]->CanonicalAxisIndex(param.axis());
  }
  bool matches = axis_ + scale->num_axes() <= bottom_axes;
  for (int i = 0; matches && i < scale->num_axes(); ++i) {
    matches = bottom[0]->shape(axis_ + i) == scale->shape(i);
  }
  LAYER_CHECK(matches) << scale_name << " " << scale->shape_string()
                       << " does not match the dims of bottom[0] " << bottom[0]->shape_string()
                       << " starting at axis " << axis_;
  outer_ = bottom[0]->count(0, axis_);
  scale_dim_ = scale->count();
  inner_ = bottom[0]->count(axis_ + scale->num_axes());
  if (bias_param_id_ >= 0) {
    const Blob<Dtype>& bias = *this->blobs_[bias_param_id_];
    LAYER_CHECK(bias.shape() == scale->shape())
        << "the bias " << bias.shape_string() << " must have the shape of " << scale_name << " "
        << scale->shape_string();
  }
  if (bottom[0] == top[0]) {
    bottom_copy_.ReshapeLike(*bottom[0]);
  } else {
    top[0]->ReshapeLike(*bottom[0]);
  }
}

template <typename Dtype>
void ScaleLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* x = bottom[0]->cpu_data();
  if (bottom[0] == top[0]) {
    // Backward needs the input, which the output is about to overwrite.
    caffe_copy(bottom[0]->count(), x, bottom_copy_.mutable_cpu_data());
  }
  const Dtype* scale = (bottom.size() > 1 ? bottom[1] : this->blobs_[0].get())->cpu_data();
  Dtype* y = top[0]->mutable_cpu_data();
  const int inner = inner_;
  if (bias_param_id_ >= 0) {
    const Dtype* bias = this->blobs_[bias_param_id_]->cpu_data();
    for (int o = 0; o < outer_; ++o) {
      for (int d = 0; d < scale_dim_; ++d) {
        const Dtype factor = scale[d];
        const Dtype shift = bias[d];
        for (int i = 0; i < inner; ++i) y[i] = x[i] * factor + shift;
        x += inner;
        y += inner;
      }
    }
  } else {
    for (int o = 0; o < outer_; ++o) {
      for (int d = 0; d < scale_dim_; ++d) {
        const Dtype factor = scale[d];
        for (int i = 0; i < inner; ++i) y[i] = x[i] * factor;
        x += inner;
        y += inner;
      }
    }
  }
}

template <typename Dtype>
void ScaleLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                     const Blobs<Dtype>& bottom) {
  const Dtype* top_diff = top[0]->cpu_diff();
  const int inner = inner_;
  // Param diffs first: in place, bottom[0]'s diff is the top's and is overwritten last.
  if (bias_param_id_ >= 0 && this->param_propagate_down(bias_param_id_)) {
    Dtype* bias_diff = this->blobs_[bias_param_id_]->mutable_cpu_diff();
    const Dtype* dy = top_diff;
    for (int o = 0; o < outer_; ++o) {
      for (int d = 0; d < scale_dim_; ++d) {
        Dtype sum = 0;
        for (int i = 0; i < inner; ++i) sum += dy[i];
        bias_diff[d] += sum;
        dy += inner;
      }
    }
  }
  const bool learned_scale = bottom.size() == 1;
  Blob<Dtype>* scale = learned_scale ? this->blobs_[0].get() : bottom[1];
  if (learned_scale ? this->param_propagate_down(0) : propagate_down[1]) {
    const Dtype* x = (bottom[0] == top[0] ? &bottom_copy_ : bottom[0])->cpu_data();
    Dtype* scale_diff = scale->mutable_cpu_diff();
    // A learned param accumulates its diff (shared params, iter_size); a bottom's is set.
    if (!learned_scale) caffe_set(scale_dim_, Dtype(0), scale_diff);
    const Dtype* dy = top_diff;
    for (int o = 0; o < outer_; ++o) {
      for (int d = 0; d < scale_dim_; ++d) {
        Dtype sum = 0;
        for (int i = 0; i < inner; ++i) sum += dy[i] * x[i];
        scale_diff[d] += sum;
        dy += inner;
        x += inner;
      }
    }
  }
  if (propagate_down[0]) {
    const Dtype* scale_data = scale->cpu_data();
    const Dtype* dy = top_diff;
    Dtype* dx = bottom[0]->mutable_cpu_diff();
    for (int o = 0; o < outer_; ++o) {
      for (int d = 0; d < scale_dim_; ++d) {
        const Dtype factor = scale_data[d];
        for (int i = 0; i < inner; ++i) dx[i] = dy[i] * factor;
        dy += inner;
        dx += inner;
      }
    }
  }
}

INSTANTIATE_CLASS(ScaleLayer);
REGISTER_LAYER_CLASS(Scale);

}  // namespace caffe
