// BatchNorm on the GPU. Per-channel statistics are summed in double, as on the CPU, by
// ChannelSumsKernel (blocks over slices of each channel, so that few channels still fill the
// GPU), then one thread per channel finishes them and updates that channel's running sums, so
// the stored statistics never leave the device. Normalization and the backward
// map are one thread per value, and read each value before writing it, so top may be bottom.
// Run with the Scale and ReLU after it (ForwardFused, BackwardFused: see batch_norm_layer.hpp),
// the same kernels also apply the scale, bias and ReLU, and give the Scale's gradients.
// Legend as in batch_norm_layer.hpp: N batch, C channels, S spatial; m = N * S.
#include "caffe/kernels/gpu_channel_sums.cuh"
#include "caffe/kernels/gpu_relu.cuh"
#include "caffe/layers/batch_norm_layer.hpp"

namespace caffe {

namespace {

// The element-wise work of the layers that run in BatchNorm's passes: the Scale's (scale not
// null; bias where it has one), then the ReLU's (relu). Default: none.
template <typename Dtype>
struct Followers {
  const Dtype* scale = nullptr;
  const Dtype* bias = nullptr;
  bool relu = false;
  Dtype negative_slope = 0;

  // The Scale's output (the ReLU's input) from a normalized value, as ScaleLayer computes it.
  __device__ Dtype Scaled(Dtype x_norm, int c) const {
    return bias != nullptr ? x_norm * scale[c] + bias[c] : x_norm * scale[c];
  }
  // The group's output from a normalized value.
  __device__ Dtype Output(Dtype x_norm, int c) const {
    if (scale == nullptr) return x_norm;
    return relu ? ReLUOf(Scaled(x_norm, c), negative_slope) : Scaled(x_norm, c);
  }
  // dv, the gradient at the Scale's output, from dy at the group's top: through the ReLU, whose
  // input is recomputed from x_norm[j] (read only then).
  __device__ Dtype ScaledGradient(Dtype dy, const Dtype* x_norm, size_t j, int c) const {
    return relu ? dy * ReLUGradientFactor(Scaled(x_norm[j], c), negative_slope) : dy;
  }
  // dz, the gradient at the Scale's bottom (BatchNorm's top), from dv.
  __device__ Dtype NormalizedGradient(Dtype dv, int c) const {
    return scale == nullptr ? dv : dv * scale[c];
  }
};

// mean and inv_std of every channel from the stored sums (use_global_stats).
template <typename Dtype>
__global__ void BatchNormGlobalStatsKernel(int channels, Dtype eps, const Dtype* mean_sum,
                                           const Dtype* var_sum, const Dtype* stored_scale,
                                           Dtype* mean, Dtype* inv_std) {
  CUDA_KERNEL_LOOP(c, channels) {
    const Dtype factor = stored_scale[0] == 0 ? Dtype(0) : Dtype(1) / stored_scale[0];
    mean[c] = factor * mean_sum[c];
    inv_std[c] = Dtype(1) / sqrt(factor * var_sum[c] + eps);
  }
}

// Terms of ChannelSumsKernel. The batch statistics sum x - shift and its square, shift being
// the channel's first value: close enough to the mean that the variance, E[(x - shift)^2] -
// E[x - shift]^2, keeps its digits in one pass, even for channels far from zero.
template <typename Dtype>
struct BatchNormMomentsTerm {
  const Dtype* x;
  int spatial;
  __device__ void operator()(size_t j, int c, double (&sums)[2]) const {
    const double value = static_cast<double>(x[j]) - x[static_cast<size_t>(c) * spatial];
    sums[0] += value;
    sums[1] += value * value;
  }
};

// Sums dv and dv * x_norm (dv = dy without followers).
template <typename Dtype>
struct BatchNormGradientTerm {
  const Dtype* dy;
  const Dtype* x_norm;
  Followers<Dtype> followers;
  __device__ void operator()(size_t j, int c, double (&sums)[2]) const {
    const Dtype dv = followers.ScaledGradient(dy[j], x_norm, j, c);
    sums[0] += dv;
    sums[1] += static_cast<double>(dv) * x_norm[j];
  }
};

// One thread per channel: the batch mean and (biased) variance from the moments' partial sums,
// then inv_std and the running sums; thread 0 also advances the running normaliser.
template <typename Dtype>
__global__ void BatchNormBatchStatsKernel(int channels, int spatial, int slices, long long m,
                                          Dtype eps, Dtype maf, Dtype correction,
                                          const double* partials, const Dtype* x, Dtype* mean,
                                          Dtype* var, Dtype* inv_std, Dtype* mean_sum,
                                          Dtype* var_sum, Dtype* stored_scale) {
  CUDA_KERNEL_LOOP(c, channels) {
    double sums[2];
    SumChannelSlices(partials, slices, channels, c, sums);
    const double inv_m = m > 0 ? 1.0 / m : 0.0;
    const double shift = m > 0 ? static_cast<double>(x[static_cast<size_t>(c) * spatial]) : 0.0;
    const double shifted_mean = sums[0] * inv_m;
    const double variance = sums[1] * inv_m - shifted_mean * shifted_mean;
    const Dtype mean_c = static_cast<Dtype>(shift + shifted_mean);
    const Dtype var_c = static_cast<Dtype>(variance > 0 ? variance : 0);
    mean[c] = mean_c;
    var[c] = var_c;
    inv_std[c] = Dtype(1) / sqrt(var_c + eps);
    mean_sum[c] = mean_c + maf * mean_sum[c];
    var_sum[c] = correction * var_c + maf * var_sum[c];
    if (c == 0) stored_scale[0] = stored_scale[0] * maf + 1;
  }
}

// y = the followers' output from x_norm (x_norm itself without them); x_norm kept where not null.
template <typename Dtype>
__global__ void BatchNormNormalizeKernel(int count, int channels, int spatial, const Dtype* x,
                                         const Dtype* mean, const Dtype* inv_std,
                                         Followers<Dtype> followers, Dtype* y, Dtype* x_norm) {
  CUDA_KERNEL_LOOP(j, count) {
    const int c = (j / spatial) % channels;
    const Dtype value = (x[j] - mean[c]) * inv_std[c];
    if (x_norm != nullptr) x_norm[j] = value;
    y[j] = followers.Output(value, c);
  }
}

// From dy at the group's top: dv (the ReLU's bottom diff; dy without one), dz (the Scale's;
// dv without one), dx = (dz - mean_dz - mean_dz_x_norm * x_norm) * inv_std, or with global
// statistics (mean_dz null) dz * inv_std. dv and dz are stored where dv_out and dz_out are not
// null; dx may be null.
template <typename Dtype>
__global__ void BatchNormBackwardKernel(int count, int channels, int spatial, const Dtype* dy,
                                        const Dtype* x_norm, const Dtype* mean_dz,
                                        const Dtype* mean_dz_x_norm, const Dtype* inv_std,
                                        Followers<Dtype> followers, Dtype* dx, Dtype* dz_out,
                                        Dtype* dv_out) {
  CUDA_KERNEL_LOOP(j, count) {
    const int c = (j / spatial) % channels;
    const Dtype dv = followers.ScaledGradient(dy[j], x_norm, j, c);
    if (dv_out != nullptr) dv_out[j] = dv;
    const Dtype dz = followers.NormalizedGradient(dv, c);
    if (dz_out != nullptr) dz_out[j] = dz;
    if (dx == nullptr) continue;
    if (mean_dz == nullptr) {
      dx[j] = dz * inv_std[c];
    } else {
      dx[j] = (dz - mean_dz[c] - mean_dz_x_norm[c] * x_norm[j]) * inv_std[c];
    }
  }
}

// One thread per channel, after ChannelSumsKernel summed dv and dv * x_norm: the fused Scale's
// gradients (accumulated, as a learned param's are; null where not wanted) and, where means is
// not null, this layer's means of dz = scale * dv and of dz * x_norm (channels values each).
template <typename Dtype>
__global__ void BatchNormScaleGradientsKernel(int channels, int slices, const double* partials,
                                              double inv_m, const Dtype* scale, Dtype* scale_diff,
                                              Dtype* bias_diff, Dtype* means) {
  CUDA_KERNEL_LOOP(c, channels) {
    double sums[2];
    SumChannelSlices(partials, slices, channels, c, sums);
    if (bias_diff != nullptr) bias_diff[c] = static_cast<Dtype>(sums[0]) + bias_diff[c];
    if (scale_diff != nullptr) scale_diff[c] = static_cast<Dtype>(sums[1]) + scale_diff[c];
    if (means != nullptr) {
      const double factor = scale[c] * inv_m;
      means[c] = static_cast<Dtype>(sums[0] * factor);
      means[channels + c] = static_cast<Dtype>(sums[1] * factor);
    }
  }
}

// The followers' work as the fused kernels take it; the bias (where the Scale has one) only
// `with_bias`: backward reads it only for the ReLU's cut, and declares it only then.
template <typename Dtype>
Followers<Dtype> FollowersOf(ScaleLayer<Dtype>& scale, const ReLULayer<Dtype>* relu,
                             bool with_bias = true) {
  Followers<Dtype> followers;
  followers.scale = scale.blobs()[0]->gpu_data();
  const int bias_id = scale.bias_param_id();
  if (bias_id >= 0 && with_bias) followers.bias = scale.blobs()[bias_id]->gpu_data();
  followers.relu = relu != nullptr;
  if (relu != nullptr) followers.negative_slope = relu->negative_slope();
  return followers;
}

}  // namespace

template <typename Dtype>
void BatchNormLayer<Dtype>::BatchStats_gpu(const Blob<Dtype>& bottom) {
  const int channels = channels_;
  const long long m = static_cast<long long>(num_) * spatial_;
  // The stored variance is unbiased (m / (m - 1)); the batch normalization itself is not.
  const Dtype correction = m > 1 ? Dtype(m) / Dtype(m - 1) : Dtype(1);
  const ChannelSumsGrid grid(num_, channels, spatial_);
  double* partials = partials_.mutable_gpu_data();
  ChannelSumsKernel<2><<<grid.blocks, grid.threads>>>(
      grid, BatchNormMomentsTerm<Dtype>{bottom.gpu_data(), spatial_}, partials);
  CUDA_POST_KERNEL_CHECK;
  BatchNormBatchStatsKernel<Dtype><<<CAFFE_GET_BLOCKS(channels), CAFFE_CUDA_NUM_THREADS>>>(
      channels, spatial_, grid.slices, m, eps_, moving_average_fraction_, correction, partials,
      bottom.gpu_data(), mean_.mutable_gpu_data(), sums_.mutable_gpu_data(),
      inv_std_.mutable_gpu_data(), this->blobs_[0]->mutable_gpu_data(),
      this->blobs_[1]->mutable_gpu_data(), this->blobs_[2]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void BatchNormLayer<Dtype>::Normalize_gpu(const Blob<Dtype>& bottom, Blob<Dtype>* top,
                                          bool followers) {
  const int count = top->count();
  if (count == 0) return;
  // Backward with batch statistics, or the group's, needs the normalized values; a later
  // in-place layer may overwrite the top, so keep a copy.
  Dtype* x_norm = use_global_stats_ && !followers ? nullptr : x_norm_.mutable_gpu_data();
  BatchNormNormalizeKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, channels_, spatial_, bottom.gpu_data(), mean_.gpu_data(), inv_std_.gpu_data(),
      followers ? FollowersOf(*scale_, relu_) : Followers<Dtype>(), top->mutable_gpu_data(),
      x_norm);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void BatchNormLayer<Dtype>::Statistics_gpu(const Blob<Dtype>& bottom) {
  const int channels = channels_;
  if (!use_global_stats_) {
    BatchStats_gpu(bottom);
    return;
  }
  BatchNormGlobalStatsKernel<Dtype><<<CAFFE_GET_BLOCKS(channels), CAFFE_CUDA_NUM_THREADS>>>(
      channels, eps_, this->blobs_[0]->gpu_data(), this->blobs_[1]->gpu_data(),
      this->blobs_[2]->gpu_data(), mean_.mutable_gpu_data(), inv_std_.mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void BatchNormLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  if (channels_ == 0) return;
  Statistics_gpu(*bottom[0]);
  Normalize_gpu(*bottom[0], top[0], /*followers=*/false);
}

template <typename Dtype>
void BatchNormLayer<Dtype>::ForwardFused_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  CHECK(scale_ != nullptr) << this->error_prefix() << "runs with no Scale";
  if (channels_ == 0) return;
  Statistics_gpu(*bottom[0]);
  Normalize_gpu(*bottom[0], top[0], /*followers=*/true);
  scale_->set_saved_bottom(&x_norm_);  // the Scale's bottom, should it run backward alone
}

template <typename Dtype>
void BatchNormLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top,
                                         const vector<bool>& propagate_down,
                                         const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  const int channels = channels_;
  if (count == 0 || channels == 0) return;
  const Dtype* dy = top[0]->gpu_diff();
  const Dtype* x_norm = nullptr;
  const Dtype* mean_dy = nullptr;
  const Dtype* mean_dy_x_norm = nullptr;
  if (!use_global_stats_) {
    x_norm = x_norm_.gpu_data();
    const ChannelSumsGrid grid(num_, channels, spatial_);
    double* partials = partials_.mutable_gpu_data();
    ChannelSumsKernel<2><<<grid.blocks, grid.threads>>>(
        grid, BatchNormGradientTerm<Dtype>{dy, x_norm, {}}, partials);
    CUDA_POST_KERNEL_CHECK;
    // mean(dy) and mean(dy * x_norm) over N and S.
    const long long m = static_cast<long long>(num_) * spatial_;
    const double inv_m = m > 0 ? 1.0 / m : 0.0;
    Dtype* sums = sums_.mutable_gpu_data();
    for (int which = 0; which < 2; ++which) {
      StoreChannelSumKernel<2><<<CAFFE_GET_BLOCKS(channels), CAFFE_CUDA_NUM_THREADS>>>(
          channels, grid.slices, partials, which, inv_m, false, sums + which * channels);
      CUDA_POST_KERNEL_CHECK;
    }
    mean_dy = sums;
    mean_dy_x_norm = sums + channels;
  }
  // With top == bottom the diffs alias; each thread reads dy[j] before writing dx[j], and the
  // statistics above were complete before this launch.
  BatchNormBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, channels, spatial_, dy, x_norm, mean_dy, mean_dy_x_norm, inv_std_.gpu_data(),
      Followers<Dtype>(), bottom[0]->mutable_gpu_diff(), nullptr, nullptr);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void BatchNormLayer<Dtype>::BackwardFused_gpu(
    const Blobs<Dtype>& top, const vector<bool>& propagate_down, const Blobs<Dtype>& bottom,
    const vector<vector<bool>>& followers_propagate_down) {
  CHECK(scale_ != nullptr) << this->error_prefix() << "runs with no Scale";
  const int count = top[0]->count();
  const int channels = channels_;
  if (count == 0 || channels == 0) return;
  const FusedBackward work =
      FusedBackwardWork(bottom, top, propagate_down, followers_propagate_down);
  const Followers<Dtype> followers = FollowersOf(*scale_, relu_, /*with_bias=*/relu_ != nullptr);
  Blob<Dtype>& scale = *scale_->blobs()[0];
  Dtype* scale_diff = work.scale_diff ? scale.mutable_gpu_diff() : nullptr;
  Dtype* bias_diff =
      work.bias_diff ? scale_->blobs()[scale_->bias_param_id()]->mutable_gpu_diff() : nullptr;
  const Dtype* dy = top[0]->gpu_diff();
  // Read by the sums and the ReLU's cut only (as DeclareMemoryUseFused says).
  const Dtype* x_norm = work.sums() || relu_ != nullptr ? x_norm_.gpu_data() : nullptr;
  Dtype* means = nullptr;
  if (work.sums()) {
    // One pass sums dv and dv * x_norm per channel: the Scale's gradients, and (times the
    // scale) this layer's means of dz and dz * x_norm.
    const ChannelSumsGrid grid(num_, channels, spatial_);
    double* partials = partials_.mutable_gpu_data();
    ChannelSumsKernel<2><<<grid.blocks, grid.threads>>>(
        grid, BatchNormGradientTerm<Dtype>{dy, x_norm, followers}, partials);
    CUDA_POST_KERNEL_CHECK;
    const long long m = static_cast<long long>(num_) * spatial_;
    means = work.means ? sums_.mutable_gpu_data() : nullptr;
    BatchNormScaleGradientsKernel<Dtype><<<CAFFE_GET_BLOCKS(channels), CAFFE_CUDA_NUM_THREADS>>>(
        channels, grid.slices, partials, m > 0 ? 1.0 / m : 0.0, scale.gpu_data(), scale_diff,
        bias_diff, means);
    CUDA_POST_KERNEL_CHECK;
  }
  if (!work.map()) return;
  Dtype* top_diff = work.dz || work.dv ? top[0]->mutable_gpu_diff() : nullptr;
  BatchNormBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, channels, spatial_, dy, x_norm, means, means != nullptr ? means + channels : nullptr,
      work.dx ? inv_std_.gpu_data() : nullptr, followers,
      work.dx ? bottom[0]->mutable_gpu_diff() : nullptr, work.dz ? top_diff : nullptr,
      work.dv ? top_diff : nullptr);
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(BatchNormLayer);
INSTANTIATE_LAYER_GPU_FUSED_FUNCS(BatchNormLayer);

}  // namespace caffe
