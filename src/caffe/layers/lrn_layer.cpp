// Legend as in lrn_layer.hpp: N images, C channels, H/W height/width, n local_size, p = (n-1)/2.
#include "caffe/layers/lrn_layer.hpp"

#include <algorithm>
#include <cmath>

#include "caffe/kernels/math_functions.hpp"
#include "caffe/util/cpu_threads.hpp"

namespace caffe {

template <typename Dtype>
void LRNLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const LRNParameter& param = this->layer_param_.lrn_param();
  size_ = static_cast<int>(param.local_size());
  LAYER_CHECK_EQ(size_ % 2, 1) << "local_size must be odd";
  pre_pad_ = (size_ - 1) / 2;
  alpha_ = param.alpha();
  beta_ = param.beta();
  k_ = param.k();
  across_channels_ = param.norm_region() == LRNParameter_NormRegion_ACROSS_CHANNELS;
}

template <typename Dtype>
void LRNLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LAYER_CHECK_EQ(bottom[0]->num_axes(), 4)
      << "bottom " << bottom[0]->shape_string() << " must have 4 axes (N, C, H, W)";
  num_ = bottom[0]->num();
  channels_ = bottom[0]->channels();
  height_ = bottom[0]->height();
  width_ = bottom[0]->width();
  top[0]->ReshapeLike(*bottom[0]);
  scale_.ReshapeLike(*bottom[0]);
  scale_pow_.ReshapeLike(*bottom[0]);  // allocated by the GPU path only
  const int plane = height_ * width_;
  // Across channels, images run in parallel, each thread with its own padded squares and one
  // plane of window sums.
  threads_ = across_channels_ ? std::max(1, std::min(caffe_max_threads(), num_)) : 1;
  scratch_.Reshape(
      {threads_, std::max(across_channels_ ? (channels_ + size_) * plane : 3 * plane, 1)});
}

template <typename Dtype>
void LRNLayer<Dtype>::PowNegBeta(int count, const Dtype* x, Dtype* y) const {
  // The usual exponents through square roots: several times faster than pow and within a few
  // ulps of it.
  const Dtype beta = beta_;
  if (beta == Dtype(0.75)) {
    caffe_parallel_for(count, [=](int i) {
      const Dtype root = std::sqrt(x[i]);
      y[i] = Dtype(1) / (root * std::sqrt(root));
    });
  } else if (beta == Dtype(0.5)) {
    caffe_parallel_for(count, [=](int i) { y[i] = Dtype(1) / std::sqrt(x[i]); });
  } else if (beta == Dtype(1)) {
    caffe_parallel_for(count, [=](int i) { y[i] = Dtype(1) / x[i]; });
  } else {
    caffe_parallel_for(count, [=](int i) { y[i] = std::pow(x[i], -beta); });
  }
}

template <typename Dtype>
void LRNLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  if (across_channels_) {
    CrossChannelForward(bottom[0]->cpu_data(), top[0]->mutable_cpu_data());
  } else {
    WithinChannelForward(bottom[0]->cpu_data(), top[0]->mutable_cpu_data());
  }
}

template <typename Dtype>
void LRNLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                   const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  if (across_channels_) {
    CrossChannelBackward(top[0]->cpu_data(), top[0]->cpu_diff(), bottom[0]->cpu_data(),
                         bottom[0]->mutable_cpu_diff());
  } else {
    WithinChannelBackward(top[0]->cpu_diff(), bottom[0]->cpu_data(), bottom[0]->mutable_cpu_diff());
  }
}

template <typename Dtype>
void LRNLayer<Dtype>::CrossChannelForward(const Dtype* bottom_data, Dtype* top_data) {
  const int plane = height_ * width_;
  const int image = channels_ * plane;
  const Dtype alpha_over_size = alpha_ / size_;
  Dtype* scratch = scratch_.mutable_cpu_data();
  Dtype* scale = scale_.mutable_cpu_data();
  const int padded_size = (channels_ + size_ - 1) * plane;
  const int thread_size = padded_size + plane;
  caffe_set(threads_ * thread_size, Dtype(0), scratch);
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1)
  for (int n = 0; n < num_; ++n) {
    Dtype* padded = scratch + caffe_thread_index() * thread_size;  // squares of channel c at c + p
    const Dtype* x = bottom_data + n * image;
    Dtype* squares = padded + pre_pad_ * plane;
    for (int i = 0; i < image; ++i) squares[i] = x[i] * x[i];
    Dtype* s = scale + n * image;
    for (int c = 0; c < channels_; ++c) {
      // The window of channel c is padded planes c .. c + n - 1.
      Dtype* out = s + c * plane;
      const Dtype* first = padded + c * plane;
      for (int i = 0; i < plane; ++i) out[i] = first[i];
      for (int j = 1; j < size_; ++j) {
        const Dtype* term = first + j * plane;
        for (int i = 0; i < plane; ++i) out[i] += term[i];
      }
      for (int i = 0; i < plane; ++i) out[i] = k_ + alpha_over_size * out[i];
    }
  }
  // top = x * scale^-beta; backward computes scale^-beta again (as BVLC) rather than keeping a
  // bottom-sized copy of it.
  const int count = num_ * image;
  PowNegBeta(count, scale, top_data);
  caffe_mul(count, bottom_data, top_data, top_data);
}

template <typename Dtype>
void LRNLayer<Dtype>::CrossChannelBackward(const Dtype* top_data, const Dtype* top_diff,
                                           const Dtype* bottom_data, Dtype* bottom_diff) {
  // d top[c] / d x[c'] = [c == c'] scale^-beta - 2 alpha beta / n * x[c'] * top[c] / scale[c]
  // for c' in the window of c, so bottom_diff = top_diff * scale^-beta - 2 alpha beta / n * x *
  // (sum over the window of top_diff * top / scale).
  const int plane = height_ * width_;
  const int image = channels_ * plane;
  const Dtype ratio_scale = Dtype(2) * alpha_ * beta_ / size_;
  Dtype* scratch = scratch_.mutable_cpu_data();
  const Dtype* scale = scale_.cpu_data();
  const int padded_size = (channels_ + size_ - 1) * plane;
  const int thread_size = padded_size + plane;
  caffe_set(threads_ * thread_size, Dtype(0), scratch);
  // bottom_diff holds scale^-beta until each plane's gradient replaces it.
  PowNegBeta(num_ * image, scale, bottom_diff);
#pragma omp parallel for schedule(static) num_threads(threads_) if (threads_ > 1)
  for (int n = 0; n < num_; ++n) {
    Dtype* padded = scratch + caffe_thread_index() * thread_size;
    Dtype* sums = padded + padded_size;
    const int offset = n * image;
    Dtype* ratio = padded + pre_pad_ * plane;
    for (int i = 0; i < image; ++i) {
      ratio[i] = top_diff[offset + i] * top_data[offset + i] / scale[offset + i];
    }
    for (int c = 0; c < channels_; ++c) {
      const int at = offset + c * plane;
      Dtype* dx = bottom_diff + at;
      const Dtype* first = padded + c * plane;
      for (int i = 0; i < plane; ++i) sums[i] = first[i];
      for (int j = 1; j < size_; ++j) {
        const Dtype* term = first + j * plane;
        for (int i = 0; i < plane; ++i) sums[i] += term[i];
      }
      for (int i = 0; i < plane; ++i) {
        dx[i] = top_diff[at + i] * dx[i] - ratio_scale * bottom_data[at + i] * sums[i];
      }
    }
  }
}

template <typename Dtype>
void LRNLayer<Dtype>::BoxSum(const Dtype* in, Dtype* rows, Dtype* out) const {
  // Separable: sums along each row into `rows`, then those sums down each column into `out`.
  for (int h = 0; h < height_; ++h) {
    const Dtype* x = in + h * width_;
    Dtype* r = rows + h * width_;
    for (int w = 0; w < width_; ++w) r[w] = x[w];
    for (int d = 1; d <= pre_pad_ && d < width_; ++d) {
      for (int w = 0; w + d < width_; ++w) r[w] += x[w + d];
      for (int w = d; w < width_; ++w) r[w] += x[w - d];
    }
  }
  for (int h = 0; h < height_; ++h) {
    Dtype* o = out + h * width_;
    const int first = std::max(h - pre_pad_, 0);
    const int last = std::min(h + pre_pad_, height_ - 1);
    const Dtype* r = rows + first * width_;
    for (int w = 0; w < width_; ++w) o[w] = r[w];
    for (int hh = first + 1; hh <= last; ++hh) {
      r = rows + hh * width_;
      for (int w = 0; w < width_; ++w) o[w] += r[w];
    }
  }
}

template <typename Dtype>
void LRNLayer<Dtype>::WithinChannelForward(const Dtype* bottom_data, Dtype* top_data) {
  const int plane = height_ * width_;
  const int planes = num_ * channels_;
  // BVLC averages the squares over the n x n window padded by p; at stride 1 every such window
  // lies inside the padded input, so the divisor is always n^2.
  const Dtype window = static_cast<Dtype>(size_ * size_);
  Dtype* squares = scratch_.mutable_cpu_data();
  Dtype* rows = squares + plane;
  Dtype* scale = scale_.mutable_cpu_data();
  for (int q = 0; q < planes; ++q) {
    const Dtype* x = bottom_data + q * plane;
    for (int i = 0; i < plane; ++i) squares[i] = x[i] * x[i];
    Dtype* s = scale + q * plane;
    BoxSum(squares, rows, s);
    for (int i = 0; i < plane; ++i) s[i] = Dtype(1) + alpha_ * (s[i] / window);
  }
  const int count = planes * plane;
  PowNegBeta(count, scale, top_data);
  caffe_mul(count, bottom_data, top_data, top_data);
}

template <typename Dtype>
void LRNLayer<Dtype>::WithinChannelBackward(const Dtype* top_diff, const Dtype* bottom_data,
                                            Dtype* bottom_diff) {
  // top = x * scale^-beta with scale = 1 + alpha / n^2 * boxsum(x^2):
  // bottom_diff = top_diff * scale^-beta
  //   - 2 alpha beta / n^2 * x * boxsum(top_diff * x * scale^-beta / scale).
  const int plane = height_ * width_;
  const int planes = num_ * channels_;
  const Dtype ratio_scale = Dtype(2) * alpha_ * beta_ / static_cast<Dtype>(size_ * size_);
  Dtype* ratio = scratch_.mutable_cpu_data();
  Dtype* rows = ratio + plane;
  Dtype* sums = rows + plane;
  const Dtype* scale = scale_.cpu_data();
  // bottom_diff holds scale^-beta until each plane's gradient replaces it.
  PowNegBeta(planes * plane, scale, bottom_diff);
  const Dtype* scale_pow = bottom_diff;
  for (int q = 0; q < planes; ++q) {
    const int offset = q * plane;
    for (int i = 0; i < plane; ++i) {
      ratio[i] = top_diff[offset + i] * bottom_data[offset + i] * scale_pow[offset + i] /
                 scale[offset + i];
    }
    BoxSum(ratio, rows, sums);
    for (int i = 0; i < plane; ++i) {
      bottom_diff[offset + i] = top_diff[offset + i] * scale_pow[offset + i] -
                                ratio_scale * bottom_data[offset + i] * sums[i];
    }
  }
}

template <typename Dtype>
bool LRNLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                       const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                       MemoryUses* uses) const {
  Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  const bool forward = pass == Pass::kForward;
  if (!forward && !propagate_down[0]) return true;
  const unsigned saved = forward ? kOverwrite : kRead;
  uses->AddData(scale_, saved);
#ifndef CPU_ONLY
  if (Caffe::mode() == Caffe::GPU) {
    uses->AddData(scale_pow_, saved);
    return true;
  }
#endif
  uses->AddData(scratch_, kScratch);
  return true;
}

INSTANTIATE_CLASS(LRNLayer);

// Its engines (layers/cudnn/, layers/dnnl/) are chosen by layer_engine.hpp.
REGISTER_LAYER_CLASS(LRN);

}  // namespace caffe
