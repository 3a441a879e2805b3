#include "caffe/layers/bias_layer.hpp"

#include "caffe/filler.hpp"
#include "caffe/kernels/gpu_channel_sums.hpp"

namespace caffe {

template <typename Dtype>
void BiasLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const BiasParameter& param = this->layer_param_.bias_param();
  if (bottom.size() == 1 && this->blobs_.empty()) {
    const int bottom_axes = bottom[0]->num_axes();
    LAYER_CHECK(param.axis() >= -bottom_axes && param.axis() < bottom_axes)
        << "bias_param.axis is " << param.axis() << ", but bottom[0] " << bottom[0]->shape_string()
        << " has " << bottom_axes << " axes; must be in [" << -bottom_axes << ", " << bottom_axes
        << ")";
    const int axis = bottom[0]->CanonicalAxisIndex(param.axis());
    const int num_axes = param.num_axes();
    LAYER_CHECK_GE(num_axes, -1)
        << "bias_param.num_axes must be >= 0, or -1 to extend to the end of bottom[0]";
    LAYER_CHECK(num_axes == -1 || axis + num_axes <= bottom_axes)
        << "bias_param axis " << param.axis() << " with num_axes " << num_axes
        << " extends past the " << bottom_axes << " axes of bottom[0] "
        << bottom[0]->shape_string();
    const auto shape_begin = bottom[0]->shape().begin() + axis;
    const auto shape_end = num_axes == -1 ? bottom[0]->shape().end() : shape_begin + num_axes;
    this->blobs_.push_back(std::make_shared<Blob<Dtype>>(vector<int>(shape_begin, shape_end)));
    GetFiller<Dtype>(param.filler())->Fill(this->blobs_[0].get());
  }
  this->param_propagate_down_.resize(this->blobs_.size(), true);
}

template <typename Dtype>
void BiasLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const BiasParameter& param = this->layer_param_.bias_param();
  const Blob<Dtype>* bias = bottom.size() > 1 ? bottom[1] : this->blobs_[0].get();
  const char* bias_name = bottom.size() > 1 ? "bottom[1] (the bias)" : "the learned bias";
  const int bottom_axes = bottom[0]->num_axes();
  // A scalar bias broadcasts over everything; any axis would do, and 0 is always valid.
  int axis = 0;
  if (bias->num_axes() > 0) {
    LAYER_CHECK(param.axis() >= -bottom_axes && param.axis() < bottom_axes)
        << "bias_param.axis is " << param.axis() << ", but bottom[0] " << bottom[0]->shape_string()
        << " has " << bottom_axes << " axes; must be in [" << -bottom_axes << ", " << bottom_axes
        << ")";
    axis = bottom[0]->CanonicalAxisIndex(param.axis());
  }
  bool matches = axis + bias->num_axes() <= bottom_axes;
  for (int i = 0; matches && i < bias->num_axes(); ++i) {
    matches = bottom[0]->shape(axis + i) == bias->shape(i);
  }
  LAYER_CHECK(matches) << bias_name << " " << bias->shape_string()
                       << " does not match the dims of bottom[0] " << bottom[0]->shape_string()
                       << " starting at axis " << axis;
  outer_ = bottom[0]->count(0, axis);
  bias_dim_ = bias->count();
  inner_ = bottom[0]->count(axis + bias->num_axes());
  if (bottom[0] != top[0]) top[0]->ReshapeLike(*bottom[0]);
  partials_.Reshape(vector<int>{ChannelSumPartials(outer_, bias_dim_, inner_, 1)});
}

template <typename Dtype>
void BiasLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* bias = (bottom.size() > 1 ? bottom[1] : this->blobs_[0].get())->cpu_data();
  const Dtype* x = bottom[0]->cpu_data();
  Dtype* y = top[0]->mutable_cpu_data();
  const int inner = inner_;
  for (int o = 0; o < outer_; ++o) {
    for (int d = 0; d < bias_dim_; ++d) {
      const Dtype shift = bias[d];
      for (int i = 0; i < inner; ++i) y[i] = x[i] + shift;
      x += inner;
      y += inner;
    }
  }
}

template <typename Dtype>
void BiasLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                    const Blobs<Dtype>& bottom) {
  const Dtype* top_diff = top[0]->cpu_diff();
  // In place the bottom's diff already is the top's.
  if (propagate_down[0] && bottom[0] != top[0]) {
    caffe_copy(bottom[0]->count(), top_diff, bottom[0]->mutable_cpu_diff());
  }
  const bool learned_bias = bottom.size() == 1;
  if (learned_bias ? this->param_propagate_down(0) : propagate_down[1]) {
    Blob<Dtype>* bias = learned_bias ? this->blobs_[0].get() : bottom[1];
    Dtype* bias_diff = bias->mutable_cpu_diff();
    // A learned param accumulates its diff (shared params, iter_size); a bottom's is set.
    if (!learned_bias) caffe_set(bias_dim_, Dtype(0), bias_diff);
    const Dtype* dy = top_diff;
    const int inner = inner_;
    for (int o = 0; o < outer_; ++o) {
      for (int d = 0; d < bias_dim_; ++d) {
        Dtype sum = 0;
        for (int i = 0; i < inner; ++i) sum += dy[i];
        bias_diff[d] += sum;
        dy += inner;
      }
    }
  }
}

template <typename Dtype>
bool BiasLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                        const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                        MemoryUses* uses) const {
  Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  if (Caffe::mode() == Caffe::GPU && pass == Pass::kBackward) {
    uses->AddData(partials_, kScratch);
  }
  return true;
}

INSTANTIATE_CLASS(BiasLayer);
REGISTER_LAYER_CLASS(Bias);

}  // namespace caffe
