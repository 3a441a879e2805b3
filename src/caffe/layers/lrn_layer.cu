// LRN on the GPU, both regions computed directly (as the CPU path, not through internal layers).
// Legend as in lrn_layer.hpp: N images, C channels, H/W height/width, n local_size,
// p = (n - 1) / 2. One thread per value: forward sums the squares of its window into scale_ (k +
// alpha / n * sum across channels; 1 + alpha / n^2 * sum within the channel), then top = x *
// scale_^-beta (kept in scale_pow_ for backward); backward sums its window of the ratio terms
// (see lrn_layer.cpp) directly, reading each neighbour's values again instead of storing them.
#include <vector>

#include "caffe/layers/lrn_layer.hpp"

namespace caffe {

namespace {

// x^-beta with the CPU path's shortcuts for the usual exponents (PowNegBeta in lrn_layer.cpp).
template <typename Dtype>
__device__ inline Dtype PowNegBeta(Dtype x, Dtype beta) {
  if (beta == Dtype(0.75)) {
    const Dtype root = sqrt(x);
    return Dtype(1) / (root * sqrt(root));
  }
  if (beta == Dtype(0.5)) return Dtype(1) / sqrt(x);
  if (beta == Dtype(1)) return Dtype(1) / x;
  return pow(x, -beta);
}

template <typename Dtype>
__global__ void LRNAcrossScaleKernel(const int n, const Dtype* bottom, const int channels,
                                     const int plane, const int pre_pad, const Dtype k,
                                     const Dtype alpha_over_size, Dtype* scale) {
  CUDA_KERNEL_LOOP(index, n) {
    const int channel = (index / plane) % channels;
    // This position in channel 0 of its image.
    const Dtype* x = bottom + (index - channel * plane);
    Dtype sum = 0;
    const int first = max(channel - pre_pad, 0), last = min(channel + pre_pad, channels - 1);
    for (int c = first; c <= last; ++c) {
      const Dtype value = x[c * plane];
      sum += value * value;
    }
    scale[index] = k + alpha_over_size * sum;
  }
}

template <typename Dtype>
__global__ void LRNWithinScaleKernel(const int n, const Dtype* bottom, const int height,
                                     const int width, const int pre_pad, const Dtype alpha,
                                     const Dtype window, Dtype* scale) {
  CUDA_KERNEL_LOOP(index, n) {
    const int w = index % width;
    const int h = (index / width) % height;
    const Dtype* x = bottom + (index - h * width - w);  // the start of this plane
    Dtype sum = 0;
    const int h_last = min(h + pre_pad, height - 1), w_last = min(w + pre_pad, width - 1);
    for (int hh = max(h - pre_pad, 0); hh <= h_last; ++hh) {
      for (int ww = max(w - pre_pad, 0); ww <= w_last; ++ww) {
        const Dtype value = x[hh * width + ww];
        sum += value * value;
      }
    }
    scale[index] = Dtype(1) + alpha * (sum / window);
  }
}

template <typename Dtype>
__global__ void LRNOutputKernel(const int n, const Dtype* bottom, const Dtype* scale,
                                const Dtype beta, Dtype* scale_pow, Dtype* top) {
  CUDA_KERNEL_LOOP(index, n) {
    const Dtype power = PowNegBeta(scale[index], beta);
    scale_pow[index] = power;
    top[index] = bottom[index] * power;
  }
}

// bottom_diff = top_diff * scale^-beta - ratio_scale * x * (sum over the channel window of
// top_diff * top / scale).
template <typename Dtype>
__global__ void LRNAcrossBackwardKernel(const int n, const Dtype* top_data, const Dtype* top_diff,
                                        const Dtype* bottom_data, const Dtype* scale,
                                        const Dtype* scale_pow, const int channels, const int plane,
                                        const int pre_pad, const Dtype ratio_scale,
                                        Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    const int channel = (index / plane) % channels;
    const int origin = index - channel * plane;
    Dtype sum = 0;
    const int first = max(channel - pre_pad, 0), last = min(channel + pre_pad, channels - 1);
    for (int c = first; c <= last; ++c) {
      const int at = origin + c * plane;
      sum += top_diff[at] * top_data[at] / scale[at];
    }
    bottom_diff[index] =
        top_diff[index] * scale_pow[index] - ratio_scale * bottom_data[index] * sum;
  }
}

// The same within the channel: the sum runs over the n x n window of
// top_diff * x * scale^-beta / scale.
template <typename Dtype>
__global__ void LRNWithinBackwardKernel(const int n, const Dtype* top_diff,
                                        const Dtype* bottom_data, const Dtype* scale,
                                        const Dtype* scale_pow, const int height, const int width,
                                        const int pre_pad, const Dtype ratio_scale,
                                        Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    const int w = index % width;
    const int h = (index / width) % height;
    const int plane_start = index - h * width - w;
    Dtype sum = 0;
    const int h_last = min(h + pre_pad, height - 1), w_last = min(w + pre_pad, width - 1);
    for (int hh = max(h - pre_pad, 0); hh <= h_last; ++hh) {
      for (int ww = max(w - pre_pad, 0); ww <= w_last; ++ww) {
        const int at = plane_start + hh * width + ww;
        sum += top_diff[at] * bottom_data[at] * scale_pow[at] / scale[at];
      }
    }
    bottom_diff[index] =
        top_diff[index] * scale_pow[index] - ratio_scale * bottom_data[index] * sum;
  }
}

}  // namespace

template <typename Dtype>
void LRNLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int n = bottom[0]->count();
  if (n <= 0) return;
  const Dtype* bottom_data = bottom[0]->gpu_data();
  Dtype* scale = scale_.mutable_gpu_data();
  if (across_channels_) {
    LRNAcrossScaleKernel<Dtype><<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(
        n, bottom_data, channels_, height_ * width_, pre_pad_, k_, alpha_ / size_, scale);
  } else {
    // As on the CPU: every n x n window padded by p lies in the padded input, so the divisor
    // is always n^2.
    LRNWithinScaleKernel<Dtype><<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(
        n, bottom_data, height_, width_, pre_pad_, alpha_, static_cast<Dtype>(size_ * size_),
        scale);
  }
  CUDA_POST_KERNEL_CHECK;
  LRNOutputKernel<Dtype><<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(
      n, bottom_data, scale, beta_, scale_pow_.mutable_gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void LRNLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                   const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const int n = bottom[0]->count();
  if (n <= 0) return;
  if (across_channels_) {
    const Dtype ratio_scale = Dtype(2) * alpha_ * beta_ / size_;
    LRNAcrossBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(
        n, top[0]->gpu_data(), top[0]->gpu_diff(), bottom[0]->gpu_data(), scale_.gpu_data(),
        scale_pow_.gpu_data(), channels_, height_ * width_, pre_pad_, ratio_scale,
        bottom[0]->mutable_gpu_diff());
  } else {
    const Dtype ratio_scale = Dtype(2) * alpha_ * beta_ / static_cast<Dtype>(size_ * size_);
    LRNWithinBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(
        n, top[0]->gpu_diff(), bottom[0]->gpu_data(), scale_.gpu_data(), scale_pow_.gpu_data(),
        height_, width_, pre_pad_, ratio_scale, bottom[0]->mutable_gpu_diff());
  }
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(LRNLayer);

}  // namespace caffe
