// BatchNorm on the GPU. Per-channel statistics are summed in double, as on the CPU, by
// ChannelSumsKernel (blocks over slices of each channel, so that few channels still fill the
// GPU), then one thread per channel finishes them and updates that channel's running sums, so
// the stored statistics never leave the device. Normalization and the backward
// map are one thread per value, and read each value before writing it, so top may be bottom.
// Legend as in batch_norm_layer.hpp: N batch, C channels, S spatial; m = N * S.
#include "caffe/layers/batch_norm_layer.hpp"
#include "caffe/util/gpu_channel_sums.cuh"

namespace caffe {

namespace {

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

template <typename Dtype>
struct BatchNormGradientTerm {
  const Dtype* dy;
  const Dtype* y;
  __device__ void operator()(size_t j, int, double (&sums)[2]) const {
    sums[0] += dy[j];
    sums[1] += static_cast<double>(dy[j]) * y[j];
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

template <typename Dtype>
__global__ void BatchNormNormalizeKernel(int count, int channels, int spatial, const Dtype* x,
                                         const Dtype* mean, const Dtype* inv_std, Dtype* y,
                                         Dtype* x_norm) {
  CUDA_KERNEL_LOOP(j, count) {
    const int c = (j / spatial) % channels;
    const Dtype value = (x[j] - mean[c]) * inv_std[c];
    y[j] = value;
    if (x_norm != nullptr) x_norm[j] = value;
  }
}

// dx = (dy - mean_dy - mean_dy_y * y) * inv_std; with global statistics mean_dy and y are null
// and dx = dy * inv_std.
template <typename Dtype>
__global__ void BatchNormBackwardKernel(int count, int channels, int spatial, const Dtype* dy,
                                        const Dtype* y, const Dtype* mean_dy,
                                        const Dtype* mean_dy_y, const Dtype* inv_std,
                                        Dtype* dx) {
  CUDA_KERNEL_LOOP(j, count) {
    const int c = (j / spatial) % channels;
    if (y == nullptr) {
      dx[j] = dy[j] * inv_std[c];
    } else {
      dx[j] = (dy[j] - mean_dy[c] - mean_dy_y[c] * y[j]) * inv_std[c];
    }
  }
}

}  // namespace

template <typename Dtype>
void BatchNormLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int channels = channels_;
  if (channels == 0) return;
  Dtype* mean = mean_.mutable_gpu_data();
  Dtype* inv_std = inv_std_.mutable_gpu_data();
  if (use_global_stats_) {
    BatchNormGlobalStatsKernel<Dtype><<<CAFFE_GET_BLOCKS(channels), CAFFE_CUDA_NUM_THREADS>>>(
        channels, eps_, this->blobs_[0]->gpu_data(), this->blobs_[1]->gpu_data(),
        this->blobs_[2]->gpu_data(), mean, inv_std);
    CUDA_POST_KERNEL_CHECK;
  } else {
    const long long m = static_cast<long long>(num_) * spatial_;
    // The stored variance is unbiased (m / (m - 1)); the batch normalization itself is not.
    const Dtype correction = m > 1 ? Dtype(m) / Dtype(m - 1) : Dtype(1);
    const ChannelSumsGrid grid(num_, channels, spatial_);
    double* partials = partials_.mutable_gpu_data();
    ChannelSumsKernel<2><<<grid.blocks, grid.threads>>>(
        grid, BatchNormMomentsTerm<Dtype>{bottom[0]->gpu_data(), spatial_}, partials);
    CUDA_POST_KERNEL_CHECK;
    BatchNormBatchStatsKernel<Dtype><<<CAFFE_GET_BLOCKS(channels), CAFFE_CUDA_NUM_THREADS>>>(
        channels, spatial_, grid.slices, m, eps_, moving_average_fraction_,
        correction, partials, bottom[0]->gpu_data(), mean, sums_.mutable_gpu_data(), inv_std,
        this->blobs_[0]->mutable_gpu_data(), this->blobs_[1]->mutable_gpu_data(),
        this->blobs_[2]->mutable_gpu_data());
    CUDA_POST_KERNEL_CHECK;
  }
  const int count = top[0]->count();
  if (count == 0) return;
  // Backward with batch statistics needs the normalized values; a later in-place layer may
  // overwrite the top, so keep a copy.
  Dtype* x_norm = use_global_stats_ ? nullptr : x_norm_.mutable_gpu_data();
  BatchNormNormalizeKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, channels, spatial_, bottom[0]->gpu_data(), mean, inv_std,
      top[0]->mutable_gpu_data(), x_norm);
  CUDA_POST_KERNEL_CHECK;
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
  const Dtype* inv_std = inv_std_.gpu_data();
  const Dtype* y = nullptr;
  const Dtype* mean_dy = nullptr;
  const Dtype* mean_dy_y = nullptr;
  if (!use_global_stats_) {
    y = x_norm_.gpu_data();
    const ChannelSumsGrid grid(num_, channels, spatial_);
    double* partials = partials_.mutable_gpu_data();
    ChannelSumsKernel<2><<<grid.blocks, grid.threads>>>(
        grid, BatchNormGradientTerm<Dtype>{dy, y}, partials);
    CUDA_POST_KERNEL_CHECK;
    // mean(dy) and mean(dy * y) over N and S.
    const long long m = static_cast<long long>(num_) * spatial_;
    const double inv_m = m > 0 ? 1.0 / m : 0.0;
    Dtype* sums = sums_.mutable_gpu_data();
    for (int which = 0; which < 2; ++which) {
      StoreChannelSumKernel<2><<<CAFFE_GET_BLOCKS(channels), CAFFE_CUDA_NUM_THREADS>>>(
          channels, grid.slices, partials, which, inv_m, false, sums + which * channels);
      CUDA_POST_KERNEL_CHECK;
    }
    mean_dy = sums;
    mean_dy_y = sums + channels;
  }
  // With top == bottom the diffs alias; each thread reads dy[j] before writing dx[j], and the
  // statistics above were complete before this launch.
  BatchNormBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, channels, spatial_, dy, y, mean_dy, mean_dy_y, inv_std,
      bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(BatchNormLayer);

}  // namespace caffe
