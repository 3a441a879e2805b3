#include "caffe/layers/contrastive_loss_layer.hpp"

#include <algorithm>
#include <cmath>

namespace caffe {

template <typename Dtype>
void ContrastiveLossLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LossLayer<Dtype>::Reshape(bottom, top);
  // BVLC reads the features through the legacy 4-D accessors: (N, C, 1, 1).
  for (int i = 0; i < 2; ++i) {
    LAYER_CHECK(bottom[i]->num_axes() <= 4 &&
                bottom[i]->count(std::min(2, bottom[i]->num_axes())) == 1)
        << "bottom[" << i << "] must be (N, C) or (N, C, 1, 1); got " << bottom[i]->shape_string();
  }
  LAYER_CHECK_EQ(bottom[0]->count(1), bottom[1]->count(1))
      << "the two feature bottoms must have the same dimension C: bottom[0] "
      << bottom[0]->shape_string() << ", bottom[1] " << bottom[1]->shape_string();
  const int num = bottom[0]->shape(0);
  LAYER_CHECK(bottom[2]->num_axes() >= 1 && bottom[2]->num_axes() <= 4 &&
              bottom[2]->count() == num && bottom[2]->shape(0) == num)
      << "bottom[2] must hold one similarity label per pair, (N) or (N, 1, 1, 1) with N = " << num
      << "; got " << bottom[2]->shape_string();
  diff_.Reshape(vector<int>{num, bottom[0]->count(1)});
  dist_sq_.Reshape(vector<int>{num});
}

template <typename Dtype>
void ContrastiveLossLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int num = bottom[0]->shape(0);
  const int channels = bottom[0]->count(1);
  caffe_sub(bottom[0]->count(), bottom[0]->cpu_data(), bottom[1]->cpu_data(),
            diff_.mutable_cpu_data());
  const ContrastiveLossParameter& param = this->layer_param_.contrastive_loss_param();
  const Dtype margin = param.margin();
  const Dtype* diff = diff_.cpu_data();
  const Dtype* similar = bottom[2]->cpu_data();
  Dtype* dist_sq = dist_sq_.mutable_cpu_data();
  Dtype loss = 0;
  for (int n = 0; n < num; ++n) {
    dist_sq[n] = caffe_cpu_dot(channels, diff + n * channels, diff + n * channels);
    if (static_cast<int>(similar[n])) {
      loss += dist_sq[n];
    } else if (param.legacy_version()) {
      loss += std::max(margin - dist_sq[n], Dtype(0));
    } else {
      const Dtype shortfall = std::max(margin - std::sqrt(dist_sq[n]), Dtype(0));
      loss += shortfall * shortfall;
    }
  }
  top[0]->mutable_cpu_data()[0] = loss / Dtype(num) / Dtype(2);
}

template <typename Dtype>
void ContrastiveLossLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top,
                                               const vector<bool>& propagate_down,
                                               const Blobs<Dtype>& bottom) {
  const ContrastiveLossParameter& param = this->layer_param_.contrastive_loss_param();
  const Dtype margin = param.margin();
  const int num = bottom[0]->shape(0);
  const int channels = bottom[0]->count(1);
  const Dtype* diff = diff_.cpu_data();
  const Dtype* dist_sq = dist_sq_.cpu_data();
  const Dtype* similar = bottom[2]->cpu_data();
  for (int i = 0; i < 2; ++i) {
    if (!propagate_down[i]) continue;
    const Dtype sign = i == 0 ? 1 : -1;
    const Dtype alpha = sign * top[0]->cpu_diff()[0] / Dtype(num);
    Dtype* bottom_diff = bottom[i]->mutable_cpu_diff();
    for (int n = 0; n < num; ++n) {
      Dtype* item_diff = bottom_diff + n * channels;
      if (static_cast<int>(similar[n])) {
        caffe_cpu_scale(channels, alpha, diff + n * channels, item_diff);
        continue;
      }
      Dtype shortfall, beta;
      if (param.legacy_version()) {
        shortfall = margin - dist_sq[n];
        beta = -alpha;
      } else {
        const Dtype dist = std::sqrt(dist_sq[n]);
        shortfall = margin - dist;
        // BVLC's epsilon keeps coincident pairs finite; it is part of its gradient.
        beta = -alpha * shortfall / (dist + Dtype(1e-4));
      }
      if (shortfall > Dtype(0)) {
        caffe_cpu_scale(channels, beta, diff + n * channels, item_diff);
      } else {
        caffe_set(channels, Dtype(0), item_diff);
      }
    }
  }
}

INSTANTIATE_CLASS(ContrastiveLossLayer);
REGISTER_LAYER_CLASS(ContrastiveLoss);

}  // namespace caffe
