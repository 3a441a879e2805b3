#include "caffe/layers/batch_norm_layer.hpp"

#include <cmath>

#include "caffe/kernels/batch_norm_blocked.hpp"
#include "caffe/kernels/gpu_channel_sums.hpp"
#include "caffe/kernels/relu_math.hpp"
#include "caffe/kernels/stream_copy.hpp"
#include "caffe/util/cpu_threads.hpp"

namespace caffe {

namespace {

template <typename Dtype>
BatchNormFollowers<Dtype> BatchNormFollowersOf(ScaleLayer<Dtype>& scale,
                                               const ReLULayer<Dtype>* relu) {
  BatchNormFollowers<Dtype> followers;
  followers.scale = scale.blobs()[0]->cpu_data();
  const int bias_id = scale.bias_param_id();
  if (bias_id >= 0) followers.bias = scale.blobs()[bias_id]->cpu_data();
  followers.relu = relu != nullptr;
  if (relu != nullptr) followers.negative_slope = relu->negative_slope();
  return followers;
}

// One plane (N = n, C = c) of `spatial` values: y = x_norm = (x - mean) * inv_std, kept in
// `x_norm` (streamed) where that is not null, then the followers' output from it while the plane
// is in cache. Reads of x precede writes of y at the same index, so y may be x.
template <typename Dtype>
void NormalizePlane(const Dtype* x, int spatial, Dtype mean, Dtype inv_std,
                    const BatchNormFollowers<Dtype>& followers, int c, Dtype* y, Dtype* x_norm) {
#pragma omp simd
  for (int s = 0; s < spatial; ++s) y[s] = (x[s] - mean) * inv_std;
  if (x_norm != nullptr) caffe_stream_copy(y, spatial, x_norm);
  followers.Apply(y, spatial, c);
}

// One channel per iteration, as in forward: the sums of dv and dv * x_norm (the Scale's
// gradients and, times the scale, this layer's means of dz and dz * x_norm), then the
// element-wise pass while the channel is in cache. kReLU: dv is dy through the ReLU, whose input
// is recomputed from x_norm as forward computed it (x_norm * scale + 0 without a bias: the sign,
// which is all the gradient's factor reads, is the same). Without followers (scale null) dv and
// dz are dy: BatchNorm's own backward.
template <bool kReLU, typename Dtype>
void GroupBackward_cpu(const BatchNormGroupBackward<Dtype>& group, int num, int channels,
                       int spatial) {
  const long image_size = static_cast<long>(channels) * spatial;
  const bool parallel = num * image_size >= kParallelMinElements;
  const long long m = static_cast<long long>(num) * spatial;
  const double inv_m = m > 0 ? 1.0 / m : 0.0;
  const Dtype slope = group.followers.negative_slope;
  const Dtype* dy = group.dy;
  const Dtype* x_norm = group.x_norm;
  // In place, dy, dx and the kept dz or dv are one array; each value of dy is read before any
  // of them is written at its index.
  Dtype* dx = group.dx;
  Dtype* dz_out = group.dz;
  Dtype* dv_out = group.dv;
#pragma omp parallel for schedule(static) if (parallel)
  for (int c = 0; c < channels; ++c) {
    const Dtype scale_c = group.followers.scale != nullptr ? group.followers.scale[c] : Dtype(1);
    const Dtype shift_c = group.followers.bias != nullptr ? group.followers.bias[c] : Dtype(0);
    const auto dv_of = [=](Dtype dy_value, Dtype x_norm_value) {
      if constexpr (kReLU) {
        return dy_value * ReLUGradientFactor(x_norm_value * scale_c + shift_c, slope);
      } else {
        return dy_value;
      }
    };
    const long channel_offset = static_cast<long>(c) * spatial;
    Dtype mean_dz_c = 0, mean_dz_x_norm_c = 0;
    if (group.sums) {
      double sum_dv = 0, sum_dv_x_norm = 0;
      for (int n = 0; n < num; ++n) {
        const long offset = n * image_size + channel_offset;
        const Dtype* dy_nc = dy + offset;
        const Dtype* x_norm_nc = x_norm + offset;
#pragma omp simd reduction(+ : sum_dv, sum_dv_x_norm)
        for (int s = 0; s < spatial; ++s) {
          const Dtype dv = dv_of(dy_nc[s], x_norm_nc[s]);
          sum_dv += dv;
          sum_dv_x_norm += dv * x_norm_nc[s];
        }
      }
      if (group.bias_diff != nullptr) {
        group.bias_diff[c] = static_cast<Dtype>(group.bias_diff[c] + sum_dv);
      }
      if (group.scale_diff != nullptr) {
        group.scale_diff[c] = static_cast<Dtype>(group.scale_diff[c] + sum_dv_x_norm);
      }
      const double factor = scale_c * inv_m;
      if (group.means) {
        mean_dz_c = static_cast<Dtype>(sum_dv * factor);
        mean_dz_x_norm_c = static_cast<Dtype>(sum_dv_x_norm * factor);
      }
    }
    if (dx == nullptr && dz_out == nullptr && dv_out == nullptr) continue;
    const Dtype inv_std_c = group.inv_std != nullptr ? group.inv_std[c] : Dtype(0);
    for (int n = 0; n < num; ++n) {
      const long offset = n * image_size + channel_offset;
      const Dtype* dy_nc = dy + offset;
      const Dtype* x_norm_nc = x_norm + offset;
      if (dx != nullptr && dz_out == nullptr && dv_out == nullptr) {
        // The usual case (in place, a gradient wanted below): dx alone.
        Dtype* dx_nc = dx + offset;
        if (!group.means) {
#pragma omp simd
          for (int s = 0; s < spatial; ++s) {
            dx_nc[s] = dv_of(dy_nc[s], x_norm_nc[s]) * scale_c * inv_std_c;
          }
          continue;
        }
#pragma omp simd
        for (int s = 0; s < spatial; ++s) {
          const Dtype dz = dv_of(dy_nc[s], x_norm_nc[s]) * scale_c;
          dx_nc[s] = (dz - mean_dz_c - mean_dz_x_norm_c * x_norm_nc[s]) * inv_std_c;
        }
        continue;
      }
      for (int s = 0; s < spatial; ++s) {
        const Dtype dv = dv_of(dy_nc[s], x_norm_nc[s]);
        const Dtype dz = dv * scale_c;
        if (dv_out != nullptr) dv_out[offset + s] = dv;
        if (dz_out != nullptr) dz_out[offset + s] = dz;
        if (dx == nullptr) continue;
        dx[offset + s] = group.means
                             ? (dz - mean_dz_c - mean_dz_x_norm_c * x_norm_nc[s]) * inv_std_c
                             : dz * inv_std_c;
      }
    }
  }
}

}  // namespace

template <typename Dtype>
void BatchNormLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const BatchNormParameter& param = this->layer_param_.batch_norm_param();
  moving_average_fraction_ = param.moving_average_fraction();
  use_global_stats_ =
      param.has_use_global_stats() ? param.use_global_stats() : this->phase_ == TEST;
  eps_ = param.eps();
  LAYER_CHECK_GE(bottom[0]->num_axes(), 1)
      << "bottom[0] " << bottom[0]->shape_string() << " has no axes; need (N, C, ...)";
  channels_ = bottom[0]->num_axes() == 1 ? 1 : bottom[0]->shape(1);
  if (this->blobs_.empty()) {
    this->blobs_.resize(3);
    this->blobs_[0] = std::make_shared<Blob<Dtype>>(vector<int>{channels_});
    this->blobs_[1] = std::make_shared<Blob<Dtype>>(vector<int>{channels_});
    this->blobs_[2] = std::make_shared<Blob<Dtype>>(vector<int>{1});
    for (auto& blob : this->blobs_) caffe_set(blob->count(), Dtype(0), blob->mutable_cpu_data());
  } else {
    LAYER_CHECK_EQ(static_cast<int>(this->blobs_.size()), 3)
        << "got " << this->blobs_.size() << " stored blobs; need mean, variance and scale";
    LAYER_CHECK(this->blobs_[0]->count() == channels_ && this->blobs_[1]->count() == channels_ &&
                this->blobs_[2]->count() == 1)
        << "stored blobs have shapes " << this->blobs_[0]->shape_string() << ", "
        << this->blobs_[1]->shape_string() << ", " << this->blobs_[2]->shape_string()
        << "; bottom[0] " << bottom[0]->shape_string() << " needs (" << channels_ << "), ("
        << channels_ << "), (1)";
  }
  // The blobs are running statistics, not learned parameters: the solver must leave them alone.
  // The Net registers params from this (modified) layer_param, so lr_mult 0 here masks them.
  for (int i = 0; i < static_cast<int>(this->blobs_.size()); ++i) {
    if (this->layer_param_.param_size() == i) {
      this->layer_param_.add_param()->set_lr_mult(0.f);
    } else {
      LAYER_CHECK_EQ(this->layer_param_.param(i).lr_mult(), 0.f)
          << "param " << i << " has lr_mult " << this->layer_param_.param(i).lr_mult()
          << "; the batch statistics cannot be learned, lr_mult must be 0";
    }
  }
}

template <typename Dtype>
void BatchNormLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LAYER_CHECK_GE(bottom[0]->num_axes(), 1)
      << "bottom[0] " << bottom[0]->shape_string() << " has no axes; need (N, C, ...)";
  const int channels = bottom[0]->num_axes() == 1 ? 1 : bottom[0]->shape(1);
  LAYER_CHECK_EQ(channels, channels_)
      << "bottom[0] " << bottom[0]->shape_string() << " has " << channels
      << " channels, but the layer was set up for " << channels_;
  num_ = bottom[0]->shape(0);
  spatial_ = bottom[0]->num_axes() <= 2 ? 1 : bottom[0]->count(2);
  top[0]->ReshapeLike(*bottom[0]);
  x_norm_.ReshapeLike(*bottom[0]);
  mean_.Reshape(vector<int>{channels_});
  inv_std_.Reshape(vector<int>{channels_});
  sums_.Reshape(vector<int>{2 * channels_});
  partials_.Reshape(vector<int>{ChannelSumPartials(num_, channels_, spatial_, 2)});
}

template <typename Dtype>
void BatchNormLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  Normalize_cpu(*bottom[0], top[0], /*followers=*/false);
}

template <typename Dtype>
void BatchNormLayer<Dtype>::Normalize_cpu(const Blob<Dtype>& bottom, Blob<Dtype>* top,
                                          bool followers) {
  const BatchNormFollowers<Dtype> group =
      followers ? BatchNormFollowersOf(*scale_, relu_) : BatchNormFollowers<Dtype>();
  // In the channel block the input came in (a oneDNN layer leaves 16 or 8; double is plain).
  const int block = bottom.cpu_data_block();
  const Dtype* x = bottom.cpu_data_in(block);
  Dtype* y = top->mutable_cpu_data_in(block, /*keep_values=*/false);
  Dtype* mean = mean_.mutable_cpu_data();
  Dtype* inv_std = inv_std_.mutable_cpu_data();
  const int channels = channels_;
  const int spatial = spatial_;
  const int num = num_;
  const long image_size = static_cast<long>(channels) * spatial;
  const bool parallel = num * image_size >= kParallelMinElements;
  if (block > 1) {
    if (use_global_stats_) SetGlobalStatistics(mean, inv_std);
    Dtype* x_norm = !use_global_stats_ || followers
                        ? x_norm_.mutable_cpu_data_in(block, /*keep_values=*/false)
                        : nullptr;
    BatchNormForwardBlocked(block, x, num, channels, spatial, use_global_stats_, eps_, group, mean,
                            sums_.mutable_cpu_data(), inv_std, y, x_norm);
    if (!use_global_stats_) UpdateStoredStatistics(mean, sums_.cpu_data());
    return;
  }
  if (use_global_stats_) {
    SetGlobalStatistics(mean, inv_std);
    // Planes (n, c) are independent. With followers the group keeps x_norm for its backward
    // (the Scale's gradients, the ReLU's cut), as the Scale apart keeps a copy of its bottom.
    const int planes = num * channels;
    Dtype* x_norm = followers ? x_norm_.mutable_cpu_data_in(1, /*keep_values=*/false) : nullptr;
#pragma omp parallel if (parallel)
    {
#pragma omp for schedule(static)
      for (int plane = 0; plane < planes; ++plane) {
        const int c = plane % channels;
        const long offset = static_cast<long>(plane) * spatial;
        NormalizePlane(x + offset, spatial, mean[c], inv_std[c], group, c, y + offset,
                       x_norm != nullptr ? x_norm + offset : nullptr);
      }
      caffe_stream_fence();
    }
    return;
  }
  // Batch statistics per channel over N and S; variance as E((x - E x)^2), like BVLC. One
  // channel per iteration: its N planes are read from memory once and stay in cache for the
  // variance and the normalization. Sums in double, per plane in SIMD lanes.
  const int m = num * spatial;
  const double inv_m = m > 0 ? 1.0 / m : 0.0;
  Dtype* var = sums_.mutable_cpu_data();
  // Backward with batch statistics needs the normalized values; a later in-place layer may
  // overwrite the top, so keep a copy.
  Dtype* x_norm = x_norm_.mutable_cpu_data_in(1, /*keep_values=*/false);
#pragma omp parallel if (parallel)
  {
#pragma omp for schedule(static)
    for (int c = 0; c < channels; ++c) {
      const long channel_offset = static_cast<long>(c) * spatial;
      double sum = 0;
      for (int n = 0; n < num; ++n) {
        const Dtype* x_nc = x + n * image_size + channel_offset;
#pragma omp simd reduction(+ : sum)
        for (int s = 0; s < spatial; ++s) sum += x_nc[s];
      }
      const Dtype mean_c = static_cast<Dtype>(sum * inv_m);
      double sum_sq = 0;
      for (int n = 0; n < num; ++n) {
        const Dtype* x_nc = x + n * image_size + channel_offset;
#pragma omp simd reduction(+ : sum_sq)
        for (int s = 0; s < spatial; ++s) {
          const Dtype centered = x_nc[s] - mean_c;
          sum_sq += centered * centered;
        }
      }
      const Dtype var_c = static_cast<Dtype>(sum_sq * inv_m);
      const Dtype inv_std_c = Dtype(1) / std::sqrt(var_c + eps_);
      mean[c] = mean_c;
      var[c] = var_c;
      inv_std[c] = inv_std_c;
      for (int n = 0; n < num; ++n) {
        const long offset = n * image_size + channel_offset;
        NormalizePlane(x + offset, spatial, mean_c, inv_std_c, group, c, y + offset,
                       x_norm + offset);
      }
    }
    caffe_stream_fence();
  }
  UpdateStoredStatistics(mean, var);
}

template <typename Dtype>
void BatchNormLayer<Dtype>::SetGlobalStatistics(Dtype* mean, Dtype* inv_std) const {
  const Dtype stored_scale = this->blobs_[2]->cpu_data()[0];
  const Dtype factor = stored_scale == 0 ? Dtype(0) : Dtype(1) / stored_scale;
  const Dtype* mean_sum = this->blobs_[0]->cpu_data();
  const Dtype* var_sum = this->blobs_[1]->cpu_data();
  for (int c = 0; c < channels_; ++c) {
    mean[c] = factor * mean_sum[c];
    inv_std[c] = Dtype(1) / std::sqrt(factor * var_sum[c] + eps_);
  }
}

template <typename Dtype>
void BatchNormLayer<Dtype>::UpdateStoredStatistics(const Dtype* mean, const Dtype* var) {
  // Running sums: scale = maf * scale + 1, so that sum / scale is a normalized moving average.
  const Dtype maf = moving_average_fraction_;
  Dtype* stored_scale = this->blobs_[2]->mutable_cpu_data();
  stored_scale[0] = stored_scale[0] * maf + 1;
  caffe_cpu_axpby(channels_, Dtype(1), mean, maf, this->blobs_[0]->mutable_cpu_data());
  // The stored variance is unbiased (m / (m - 1)); the batch normalization itself is not.
  const int m = num_ * spatial_;
  const Dtype correction = m > 1 ? Dtype(m) / Dtype(m - 1) : Dtype(1);
  caffe_cpu_axpby(channels_, correction, var, maf, this->blobs_[1]->mutable_cpu_data());
}

template <typename Dtype>
void BatchNormLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top,
                                         const vector<bool>& propagate_down,
                                         const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  // With top == bottom the diffs alias; every pass reads dy[j] before writing dx[j]. The
  // gradients go in the block the values went (the normalized ones kept, or the bottom's).
  const int block = use_global_stats_ ? bottom[0]->cpu_data_block() : x_norm_.cpu_data_block();
  const Dtype* dy = top[0]->cpu_diff_in(block);
  Dtype* dx = bottom[0]->mutable_cpu_diff_in(block, /*keep_values=*/false);
  const Dtype* inv_std = inv_std_.cpu_data();
  const int channels = channels_;
  const int spatial = spatial_;
  const int num = num_;
  const long image_size = static_cast<long>(channels) * spatial;
  const bool parallel = num * image_size >= kParallelMinElements;
  if (block > 1) {
    BatchNormGroupBackward<Dtype> group;  // no followers
    group.dy = dy;
    group.x_norm = use_global_stats_ ? dy : x_norm_.cpu_data_in(block);  // unread when global
    group.inv_std = inv_std;
    group.means = !use_global_stats_;
    group.sums = !use_global_stats_;
    group.dx = dx;
    BatchNormBackwardBlocked<false>(group, num, channels, spatial, block);
    return;
  }
  if (use_global_stats_) {
    // The statistics are constants here, so the normalization is an affine map per channel.
    const int planes = num * channels;
#pragma omp parallel for schedule(static) if (parallel)
    for (int plane = 0; plane < planes; ++plane) {
      const long offset = static_cast<long>(plane) * spatial;
      const Dtype inv_std_c = inv_std[plane % channels];
#pragma omp simd
      for (int s = 0; s < spatial; ++s) dx[offset + s] = dy[offset + s] * inv_std_c;
    }
    return;
  }
  BatchNormGroupBackward<Dtype> group;  // no followers
  group.dy = dy;
  group.x_norm = x_norm_.cpu_data();
  group.inv_std = inv_std;
  group.sums = true;
  group.dx = dx;
  GroupBackward_cpu<false>(group, num, channels, spatial);
}

template <typename Dtype>
bool BatchNormLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                             const Blobs<Dtype>& top,
                                             const vector<bool>& propagate_down,
                                             MemoryUses* uses) const {
  const bool batch_stats = !use_global_stats_;
  if (pass == Pass::kForward) {
    Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
    // Batch statistics update the stored sums.
    for (const auto& param : this->blobs_) {
      uses->AddData(*param, batch_stats ? kReadWrite : kRead);
    }
    uses->AddData(mean_, kOverwrite);
    uses->AddData(inv_std_, kOverwrite);
    if (batch_stats) {
      uses->AddData(sums_, kScratch);
      uses->AddData(x_norm_, kOverwrite);
      if (Caffe::mode() == Caffe::GPU) uses->AddData(partials_, kScratch);
    }
    return true;
  }
  // dx from dy, inv_std and (batch statistics) the normalized values kept forward.
  uses->AddDiff(*top[0], kRead);
  if (!propagate_down[0]) return true;
  uses->AddData(inv_std_, kRead);
  if (batch_stats) {
    uses->AddData(x_norm_, kRead);
    uses->AddData(sums_, kScratch);
    if (Caffe::mode() == Caffe::GPU) uses->AddData(partials_, kScratch);
  }
  uses->AddDiff(*bottom[0], kOverwrite);
  return true;
}

template <typename Dtype>
bool BatchNormLayer<Dtype>::FuseWithNext(Layer<Dtype>* next, const Blobs<Dtype>& bottom,
                                         const Blobs<Dtype>& top, const Blobs<Dtype>& next_bottom,
                                         const Blobs<Dtype>& next_top) {
  if (scale_ == nullptr) {
    // The Scale must work in place on this layer's top with one learned scale per channel.
    auto* scale = dynamic_cast<ScaleLayer<Dtype>*>(next);
    if (scale == nullptr || bottom[0]->num_axes() < 2 || !scale->ScalesChannels(channels_) ||
        next_bottom.size() != 1 || next_top.size() != 1 || next_bottom[0] != top[0] ||
        next_top[0] != top[0]) {
      return false;
    }
    scale_ = scale;
    return true;
  }
  // The ReLU's gradient is recomputed from the Scale's output, not read off the ReLU's.
  if (relu_ != nullptr) return false;
  relu_ = ReLULayer<Dtype>::FusableInPlaceOn(top[0], next, next_bottom, next_top);
  return relu_ != nullptr;
}

template <typename Dtype>
void BatchNormLayer<Dtype>::ForwardFused_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  CHECK(scale_ != nullptr) << this->error_prefix() << "runs with no Scale";
  Normalize_cpu(*bottom[0], top[0], /*followers=*/true);
  scale_->set_saved_bottom(&x_norm_);  // the Scale's bottom, should it run backward alone
}

template <typename Dtype>
void BatchNormLayer<Dtype>::BackwardFused_cpu(
    const Blobs<Dtype>& top, const vector<bool>& propagate_down, const Blobs<Dtype>& bottom,
    const vector<vector<bool>>& followers_propagate_down) {
  CHECK(scale_ != nullptr) << this->error_prefix() << "runs with no Scale";
  const FusedBackward work =
      FusedBackwardWork(bottom, top, propagate_down, followers_propagate_down);
  if (!work.sums() && !work.map()) return;
  const int block = x_norm_.cpu_data_block();  // where forward worked
  BatchNormGroupBackward<Dtype> group;
  group.followers = BatchNormFollowersOf(*scale_, relu_);
  group.dy = top[0]->cpu_diff_in(block);
  group.x_norm = x_norm_.cpu_data_in(block);
  group.means = work.means;
  group.sums = work.sums();
  if (work.scale_diff) group.scale_diff = scale_->blobs()[0]->mutable_cpu_diff();
  if (work.bias_diff) {
    group.bias_diff = scale_->blobs()[scale_->bias_param_id()]->mutable_cpu_diff();
  }
  if (work.dx) {
    group.inv_std = inv_std_.cpu_data();
    group.dx = bottom[0]->mutable_cpu_diff_in(block, /*keep_values=*/false);
  }
  if (work.dz) group.dz = top[0]->mutable_cpu_diff_in(block, /*keep_values=*/true);
  if (work.dv) group.dv = top[0]->mutable_cpu_diff_in(block, /*keep_values=*/true);
  if (block > 1 && relu_ != nullptr) {
    BatchNormBackwardBlocked<true>(group, num_, channels_, spatial_, block);
  } else if (block > 1) {
    BatchNormBackwardBlocked<false>(group, num_, channels_, spatial_, block);
  } else if (relu_ != nullptr) {
    GroupBackward_cpu<true>(group, num_, channels_, spatial_);
  } else {
    GroupBackward_cpu<false>(group, num_, channels_, spatial_);
  }
}

template <typename Dtype>
typename BatchNormLayer<Dtype>::FusedBackward BatchNormLayer<Dtype>::FusedBackwardWork(
    const Blobs<Dtype>& bottom, const Blobs<Dtype>& top, const vector<bool>& propagate_down,
    const vector<vector<bool>>& followers_propagate_down) const {
  FusedBackward work;
  const bool scale_down = followers_propagate_down[0][0];
  // No gradient comes through the ReLU: nothing below it wants one.
  if (relu_ != nullptr && !followers_propagate_down[1][0]) return work;
  work.dx = propagate_down[0];
  work.means = work.dx && !use_global_stats_;
  // The top's diff keeps the followers' last bottom diff where dx does not overwrite it: a top
  // apart from the bottom, or no dx (in place, dx takes its place, as apart). That is the
  // Scale's, dz, or the ReLU's, dv, where the Scale passes none down (nothing below wants one).
  const bool top_kept = bottom[0] != top[0] || !work.dx;
  work.dz = scale_down && top_kept;
  work.dv = relu_ != nullptr && !scale_down && top_kept;
  work.scale_diff = scale_->param_propagate_down(0);
  const int bias_id = scale_->bias_param_id();
  work.bias_diff = bias_id >= 0 && scale_->param_propagate_down(bias_id);
  return work;
}

template <typename Dtype>
bool BatchNormLayer<Dtype>::DeclareMemoryUseFused(
    Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
    const vector<bool>& propagate_down, const vector<vector<bool>>& followers_propagate_down,
    MemoryUses* uses) const {
  CHECK(scale_ != nullptr) << this->error_prefix() << "runs with no Scale";
  if (pass == Pass::kForward) {
    DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
    for (const auto& param : scale_->blobs()) uses->AddData(*param, kRead);
    if (use_global_stats_) uses->AddData(x_norm_, kOverwrite);  // kept for the group
    return true;
  }
  const FusedBackward work =
      FusedBackwardWork(bottom, top, propagate_down, followers_propagate_down);
  if (!work.sums() && !work.map()) return true;
  uses->AddDiff(*top[0], work.dz || work.dv ? kReadWrite : kRead);
  uses->AddData(*scale_->blobs()[0], kRead);  // dz = scale * dv
  // The ReLU's gradient recomputes the Scale's output from x_norm, scale and bias.
  const int bias_id = scale_->bias_param_id();
  if (relu_ != nullptr && bias_id >= 0) uses->AddData(*scale_->blobs()[bias_id], kRead);
  if (work.scale_diff) uses->AddDiff(*scale_->blobs()[0], kReadWrite);
  if (work.bias_diff) uses->AddDiff(*scale_->blobs()[bias_id], kReadWrite);
  if (work.sums() || relu_ != nullptr) uses->AddData(x_norm_, kRead);
  if (work.sums()) uses->AddData(partials_, kScratch);
  if (work.dx) {
    uses->AddData(inv_std_, kRead);
    if (work.means) uses->AddData(sums_, kScratch);
    uses->AddDiff(*bottom[0], kOverwrite);
  }
  return true;
}

INSTANTIATE_CLASS(BatchNormLayer);
REGISTER_LAYER_CLASS(BatchNorm);

}  // namespace caffe
