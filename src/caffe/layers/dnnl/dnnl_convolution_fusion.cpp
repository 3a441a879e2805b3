// DnnlConvolutionLayer's fused group (its LayerFusion side): a BatchNorm with stored statistics,
// and the Scale and ReLU after it, folded into the convolution's weights, bias and post-op.
#include <glog/logging.h>

#include <vector>

#include "caffe/layers/dnnl/dnnl_convolution_layer.hpp"

namespace caffe {

bool DnnlConvolutionLayer::FuseWithNext(Layer<float>* next, const Blobs<float>& bottom,
                                        const Blobs<float>& top, const Blobs<float>& next_bottom,
                                        const Blobs<float>& next_top) {
  // oneDNN runs on the CPU: in GPU mode the layer is Caffe's convolution, and so apart.
  const bool in_place = next_bottom.size() == 1 && next_top.size() == 1 &&
                        next_bottom[0] == top[0] && next_top[0] == top[0];
  if (Caffe::mode() != Caffe::CPU || !in_place || bottom.size() != 1 || top.size() != 1 ||
      !runs_on_dnnl()) {
    return false;
  }
  if (batch_norm_ == nullptr) {
    auto* batch_norm = dynamic_cast<BatchNormLayer<float>*>(next);
    if (batch_norm == nullptr || !batch_norm->uses_global_stats()) return false;
    batch_norm_ = batch_norm;
  } else if (relu_ != nullptr) {
    return false;
  } else if (auto* scale = dynamic_cast<ScaleLayer<float>*>(next)) {
    if (scale_ != nullptr || !scale->ScalesChannels(num_output_)) return false;
    scale_ = scale;
    // The BatchNorm's own group with them, for the passes that run the layers again.
    batch_norm_group_ = batch_norm_->FuseWithNext(next, top, top, next_bottom, next_top);
  } else {
    relu_ = ReLULayer<float>::FusableInPlaceOn(top[0], next, next_bottom, next_top);
    if (relu_ == nullptr) return false;
    if (batch_norm_group_) {
      CHECK(batch_norm_->FuseWithNext(next, top, top, next_bottom, next_top))
          << this->error_prefix() << "the BatchNorm's group takes no ReLU";
    }
  }
  followers_.push_back(next);
  return true;
}

void DnnlConvolutionLayer::ForwardFused_cpu(const Blobs<float>& bottom, const Blobs<float>& top) {
  CHECK(batch_norm_ != nullptr) << this->error_prefix() << "runs with no BatchNorm";
  // a = scale / sqrt(var + eps) and b = shift - mean * a per output, from the layers' blobs as
  // they are now (a user may have changed them since the last pass).
  const int outputs = num_output_;
  mean_.resize(outputs);
  scales_.resize(outputs);
  folded_bias_.resize(outputs);
  batch_norm_->SetGlobalStatistics(mean_.data(), scales_.data());
  const float* scale = scale_ ? scale_->blobs()[0]->cpu_data() : nullptr;
  const int bias_id = scale_ ? scale_->bias_param_id() : -1;
  const float* shift = bias_id >= 0 ? scale_->blobs()[bias_id]->cpu_data() : nullptr;
  const float* bias = bias_term_ ? blobs_[1]->cpu_data() : nullptr;
  for (int o = 0; o < outputs; ++o) {
    if (scale) scales_[o] *= scale[o];
    // The BatchNorm subtracts the mean from the convolution's output, bias included.
    folded_bias_[o] = ((bias ? bias[o] : 0.f) - mean_[o]) * scales_[o] + (shift ? shift[o] : 0.f);
  }
  const float slope = relu_ ? relu_->negative_slope() : 0.f;
  if (ForwardFolded(bottom, top, scales_, folded_bias_.data(), relu_ != nullptr, slope)) return;
  Forward_cpu(bottom, top);
  FollowersForward(top);
}

void DnnlConvolutionLayer::FollowersForward(const Blobs<float>& top) {
  // The BatchNorm group's passes keep the activations in the channel blocks the convolution left
  // them in (the Scale apart would hand them on plain, and the convolution would then go on
  // writing plain outputs).
  if (batch_norm_group_) {
    batch_norm_->ForwardFused(top, top);
    return;
  }
  for (Layer<float>* follower : followers_) follower->Forward(top, top);
}

void DnnlConvolutionLayer::BackwardFused_cpu(const Blobs<float>& top,
                                             const vector<bool>& propagate_down,
                                             const Blobs<float>& bottom,
                                             const vector<vector<bool>>& followers_propagate_down) {
  // The folded forward kept none of the values the layers' backward passes read (the
  // convolution's own output, the BatchNorm's and the Scale's): they are made again, apart.
  Forward_cpu(bottom, top);
  FollowersForward(top);
  if (batch_norm_group_) {
    const vector<vector<bool>> scale_and_relu(followers_propagate_down.begin() + 1,
                                              followers_propagate_down.end());
    batch_norm_->BackwardFused(top, followers_propagate_down[0], top, scale_and_relu);
  } else {
    for (int i = static_cast<int>(followers_.size()) - 1; i >= 0; --i) {
      followers_[i]->Backward(top, followers_propagate_down[i], top);
    }
  }
  Backward_cpu(top, propagate_down, bottom);
}

bool DnnlConvolutionLayer::DeclareMemoryUseFused(
    Pass pass, const Blobs<float>& bottom, const Blobs<float>& top,
    const vector<bool>& propagate_down, const vector<vector<bool>>& followers_propagate_down,
    MemoryUses* uses) const {
  // Backward runs every layer's forward and backward; forward reads what they would.
  const vector<vector<bool>> scale_and_relu(followers_propagate_down.begin() + 1,
                                            followers_propagate_down.end());
  vector<Pass> passes{Pass::kForward};
  if (pass == Pass::kBackward) passes.push_back(Pass::kBackward);
  for (Pass each : passes) {
    DeclareMemoryUse(each, bottom, top, propagate_down, uses);
    if (batch_norm_group_) {
      batch_norm_->DeclareMemoryUseFused(each, top, top, followers_propagate_down[0],
                                         scale_and_relu, uses);
      continue;
    }
    for (size_t i = 0; i < followers_.size(); ++i) {
      followers_[i]->DeclareMemoryUse(each, top, top, followers_propagate_down[i], uses);
    }
  }
  return true;
}

}  // namespace caffe
