// Legend as in prelu_layer.hpp: N batch, C channels, S = product of the axes after the channels.
#include "caffe/layers/prelu_layer.hpp"

#include <algorithm>
#include <memory>

#include "caffe/filler.hpp"
#include "caffe/util/gpu_channel_sums.hpp"
#include "caffe/util/parallel.hpp"

namespace caffe {

template <typename Dtype>
void PReLULayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const PReLUParameter& param = this->layer_param_.prelu_param();
  LAYER_CHECK_GE(bottom[0]->num_axes(), 2)
      << "bottom[0] " << bottom[0]->shape_string() << " needs a channel axis (at least 2 axes)";
  channel_shared_ = param.channel_shared();
  channels_ = bottom[0]->shape(1);
  const int expected = channel_shared_ ? 1 : channels_;
  if (!this->blobs_.empty()) {
    LAYER_CHECK_EQ(static_cast<int>(this->blobs_.size()), 1)
        << "expected one parameter blob (the slopes), got " << this->blobs_.size();
    LAYER_CHECK_EQ(this->blobs_[0]->count(), expected)
        << "the slopes have shape " << this->blobs_[0]->shape_string() << "; expected "
        << (channel_shared_ ? "1 value (channel_shared)" : "one per channel of bottom[0] ")
        << (channel_shared_ ? "" : bottom[0]->shape_string());
    VLOG(1) << "Skipping parameter initialization";
  } else {
    const vector<int> slope_shape = channel_shared_ ? vector<int>{} : vector<int>{channels_};
    this->blobs_.push_back(std::make_shared<Blob<Dtype>>(slope_shape));
    FillerParameter filler_param;
    if (param.has_filler()) {
      filler_param = param.filler();
    } else {
      filler_param.set_type("constant");
      filler_param.set_value(0.25f);
    }
    GetFiller<Dtype>(filler_param)->Fill(this->blobs_[0].get());
  }
  this->param_propagate_down_.resize(this->blobs_.size(), true);
}

template <typename Dtype>
void PReLULayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LAYER_CHECK_GE(bottom[0]->num_axes(), 2)
      << "bottom[0] " << bottom[0]->shape_string() << " needs a channel axis (at least 2 axes)";
  if (!channel_shared_) {
    LAYER_CHECK_EQ(bottom[0]->shape(1), channels_)
        << "bottom[0] " << bottom[0]->shape_string()
        << " has a different number of channels than the slopes were made for";
  }
  top[0]->ReshapeLike(*bottom[0]);
  if (top[0] == bottom[0]) bottom_memory_.ReshapeLike(*bottom[0]);
  slope_outer_ = channel_shared_ ? 1 : bottom[0]->shape(0);
  slope_inner_ = channel_shared_ ? bottom[0]->count() : bottom[0]->count(2);
  partials_.Reshape(vector<int>{
      ChannelSumPartials(slope_outer_, channel_shared_ ? 1 : channels_, slope_inner_, 1)});
}

template <typename Dtype>
void PReLULayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = bottom[0]->count();
  const Dtype* bottom_data = bottom[0]->cpu_data();
  // In place the input is about to be overwritten; backward needs it.
  if (top[0] == bottom[0]) caffe_copy(count, bottom_data, bottom_memory_.mutable_cpu_data());
  Dtype* top_data = top[0]->mutable_cpu_data();
  const Dtype* slope = this->blobs_[0]->cpu_data();
  const int inner = bottom[0]->count(2);
  const int channels = channels_;
  const bool shared = channel_shared_;
  caffe_parallel_for(count, [=](int i) {
    const int c = shared ? 0 : (i / inner) % channels;
    top_data[i] =
        std::max(bottom_data[i], Dtype(0)) + slope[c] * std::min(bottom_data[i], Dtype(0));
  });
}

template <typename Dtype>
void PReLULayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                     const Blobs<Dtype>& bottom) {
  const int count = bottom[0]->count();
  const Dtype* bottom_data =
      top[0] == bottom[0] ? bottom_memory_.cpu_data() : bottom[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  const int inner = bottom[0]->count(2);
  const int channels = channels_;
  const bool shared = channel_shared_;
  // The slope gradient first: in place, the bottom diff below overwrites the top diff.
  if (this->param_propagate_down_[0]) {
    Dtype* slope_diff = this->blobs_[0]->mutable_cpu_diff();
    for (int i = 0; i < count; ++i) {
      const int c = shared ? 0 : (i / inner) % channels;
      slope_diff[c] += top_diff[i] * bottom_data[i] * Dtype(bottom_data[i] <= 0);
    }
  }
  if (propagate_down[0]) {
    const Dtype* slope = this->blobs_[0]->cpu_data();
    Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
    caffe_parallel_for(count, [=](int i) {
      const int c = shared ? 0 : (i / inner) % channels;
      bottom_diff[i] =
          top_diff[i] * (Dtype(bottom_data[i] > 0) + slope[c] * Dtype(bottom_data[i] <= 0));
    });
  }
}

template <typename Dtype>
bool PReLULayer<Dtype>::DeclareMemoryUse(lms::Pass pass, const Blobs<Dtype>& bottom,
                                         const Blobs<Dtype>& top,
                                         const vector<bool>& propagate_down,
                                         lms::MemoryUses* uses) const {
  Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  if (bottom[0] == top[0]) {
    uses->AddData(bottom_memory_, pass == lms::Pass::kForward ? lms::kOverwrite : lms::kRead);
  }
  if (Caffe::mode() == Caffe::GPU && pass == lms::Pass::kBackward) {
    uses->AddData(partials_, lms::kScratch);
  }
  return true;
}

INSTANTIATE_CLASS(PReLULayer);
REGISTER_LAYER_CLASS(PReLU);

}  // namespace caffe
