// BatchNorm on the GPU. Per-channel statistics are reduced by one thread block per channel,
// accumulating in double as the CPU path does; the same block then updates that channel's
// running sums, so the stored statistics never leave the device. Normalization and the backward
// map are one thread per value, and read each value before writing it, so top may be bottom.
// Legend as in batch_norm_layer.hpp: N batch, C channels, S spatial; m = N * S.
#include "caffe/layers/batch_norm_layer.hpp"
#include "caffe/util/gpu_block_reduce.cuh"

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

// One block per channel: the batch mean and (biased) variance, then inv_std and the running
// sums; block 0 also advances the running normaliser.
template <typename Dtype>
__global__ void BatchNormBatchStatsKernel(int num, int channels, int spatial, double inv_m,
                                          Dtype eps, Dtype maf, Dtype correction,
                                          const Dtype* x, Dtype* mean, Dtype* var,
                                          Dtype* inv_std, Dtype* mean_sum, Dtype* var_sum,
                                          Dtype* stored_scale) {
  const int m = num * spatial;
  for (int c = blockIdx.x; c < channels; c += gridDim.x) {
    double partial = 0;
    for (int k = threadIdx.x; k < m; k += blockDim.x) {
      const int n = k / spatial;
      partial += x[(static_cast<size_t>(n) * channels + c) * spatial + k % spatial];
    }
    const Dtype mean_c = static_cast<Dtype>(BlockReduce(partial, BlockSumOp()) * inv_m);
    partial = 0;
    for (int k = threadIdx.x; k < m; k += blockDim.x) {
      const int n = k / spatial;
      const Dtype centered = x[(static_cast<size_t>(n) * channels + c) * spatial + k % spatial] -
                             mean_c;
      partial += centered * centered;
    }
    const Dtype var_c = static_cast<Dtype>(BlockReduce(partial, BlockSumOp()) * inv_m);
    if (threadIdx.x == 0) {
      mean[c] = mean_c;
      var[c] = var_c;
      inv_std[c] = Dtype(1) / sqrt(var_c + eps);
      mean_sum[c] = mean_c + maf * mean_sum[c];
      var_sum[c] = correction * var_c + maf * var_sum[c];
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) stored_scale[0] = stored_scale[0] * maf + 1;
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

// One block per channel: mean(dy) and mean(dy * y) over N and S, in double as on the CPU.
template <typename Dtype>
__global__ void BatchNormGradientStatsKernel(int num, int channels, int spatial, double inv_m,
                                             const Dtype* dy, const Dtype* y, Dtype* mean_dy,
                                             Dtype* mean_dy_y) {
  const int m = num * spatial;
  for (int c = blockIdx.x; c < channels; c += gridDim.x) {
    double partial_dy = 0;
    double partial_dy_y = 0;
    for (int k = threadIdx.x; k < m; k += blockDim.x) {
      const int n = k / spatial;
      const size_t j = (static_cast<size_t>(n) * channels + c) * spatial + k % spatial;
      partial_dy += dy[j];
      partial_dy_y += dy[j] * y[j];
    }
    const double sum_dy = BlockReduce(partial_dy, BlockSumOp());
    const double sum_dy_y = BlockReduce(partial_dy_y, BlockSumOp());
    if (threadIdx.x == 0) {
      mean_dy[c] = static_cast<Dtype>(sum_dy * inv_m);
      mean_dy_y[c] = static_cast<Dtype>(sum_dy_y * inv_m);
    }
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

// More blocks than this gain nothing; the per-channel kernels loop over the rest.
constexpr int kMaxChannelBlocks = 65535;

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
    const int m = num_ * spatial_;
    const double inv_m = m > 0 ? 1.0 / m : 0.0;
    // The stored variance is unbiased (m / (m - 1)); the batch normalization itself is not.
    const Dtype correction = m > 1 ? Dtype(m) / Dtype(m - 1) : Dtype(1);
    const int blocks = channels < kMaxChannelBlocks ? channels : kMaxChannelBlocks;
    BatchNormBatchStatsKernel<Dtype><<<blocks, kBlockReduceThreads>>>(
        num_, channels, spatial_, inv_m, eps_, moving_average_fraction_, correction,
        bottom[0]->gpu_data(), mean, sums_.mutable_gpu_data(), inv_std,
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
    const int m = num_ * spatial_;
    const double inv_m = m > 0 ? 1.0 / m : 0.0;
    Dtype* sums = sums_.mutable_gpu_data();
    const int blocks = channels < kMaxChannelBlocks ? channels : kMaxChannelBlocks;
    BatchNormGradientStatsKernel<Dtype><<<blocks, kBlockReduceThreads>>>(
        num_, channels, spatial_, inv_m, dy, y, sums, sums + channels);
    CUDA_POST_KERNEL_CHECK;
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
