#include "caffe/kernels/batch_norm_blocked.hpp"

#include <glog/logging.h>

#include <cmath>

#include "caffe/kernels/stream_copy.hpp"
#include "caffe/util/cpu_threads.hpp"

namespace caffe {

namespace {

// B, the block, is a constant of each kernel, so that its lanes are whole vectors.

// One (image, block) run of S positions, as the plain NormalizePlane: y = x_norm = (x - mean) *
// inv_std, kept in `x_norm` (streamed) where that is not null, then the followers' output.
template <int B, typename Dtype>
void NormalizeBlockedRun(const Dtype* x, int spatial, int c0, const Dtype* mean,
                         const Dtype* inv_std, const BatchNormFollowers<Dtype>& followers, Dtype* y,
                         Dtype* x_norm) {
  Dtype mean_b[B], inv_std_b[B];
  for (int lane = 0; lane < B; ++lane) {
    mean_b[lane] = mean[c0 + lane];
    inv_std_b[lane] = inv_std[c0 + lane];
  }
  for (int s = 0; s < spatial; ++s) {
#pragma omp simd
    for (int lane = 0; lane < B; ++lane) {
      y[s * B + lane] = (x[s * B + lane] - mean_b[lane]) * inv_std_b[lane];
    }
  }
  if (x_norm != nullptr) caffe_stream_copy(y, spatial * B, x_norm);
  if (followers.scale == nullptr) return;
  Dtype factor[B], shift[B];
  for (int lane = 0; lane < B; ++lane) {
    factor[lane] = followers.scale[c0 + lane];
    shift[lane] = followers.bias != nullptr ? followers.bias[c0 + lane] : Dtype(0);
  }
  const Dtype slope = followers.negative_slope;
  // The same expressions as BatchNormFollowers::Apply's four cases.
  for (int s = 0; s < spatial; ++s) {
    Dtype* values = y + s * B;
    if (followers.bias != nullptr && followers.relu) {
#pragma omp simd
      for (int lane = 0; lane < B; ++lane) {
        values[lane] = ReLUOf(values[lane] * factor[lane] + shift[lane], slope);
      }
    } else if (followers.bias != nullptr) {
#pragma omp simd
      for (int lane = 0; lane < B; ++lane) values[lane] = values[lane] * factor[lane] + shift[lane];
    } else if (followers.relu) {
#pragma omp simd
      for (int lane = 0; lane < B; ++lane)
        values[lane] = ReLUOf(values[lane] * factor[lane], slope);
    } else {
#pragma omp simd
      for (int lane = 0; lane < B; ++lane) values[lane] = values[lane] * factor[lane];
    }
  }
}

// Forward on blocked values. Batch statistics (mean, var, inv_std written) unless `global`
// (mean and inv_std given).
template <int B, typename Dtype>
void NormalizeBlocked(const Dtype* x, int num, int channels, int spatial, bool global, Dtype eps,
                      const BatchNormFollowers<Dtype>& followers, Dtype* mean, Dtype* var,
                      Dtype* inv_std, Dtype* y, Dtype* x_norm) {
  const int blocks = channels / B;
  const long run = static_cast<long>(spatial) * B;  // one image's block
  const long image_size = static_cast<long>(channels) * spatial;
  const bool parallel = num * image_size >= kParallelMinElements;
  const long long m = static_cast<long long>(num) * spatial;
  const double inv_m = m > 0 ? 1.0 / m : 0.0;
#pragma omp parallel if (parallel)
  {
    if (global) {
#pragma omp for schedule(static)
      for (int image_block = 0; image_block < num * blocks; ++image_block) {
        const long offset = image_block * run;
        NormalizeBlockedRun<B>(x + offset, spatial, (image_block % blocks) * B, mean, inv_std,
                               followers, y + offset,
                               x_norm != nullptr ? x_norm + offset : nullptr);
      }
    } else {
#pragma omp for schedule(static)
      for (int b = 0; b < blocks; ++b) {
        const int c0 = b * B;
        double sum[B] = {}, sum_sq[B] = {};
        for (int n = 0; n < num; ++n) {
          const Dtype* x_nb = x + (static_cast<long>(n) * blocks + b) * run;
          for (int s = 0; s < spatial; ++s) {
#pragma omp simd
            for (int lane = 0; lane < B; ++lane) sum[lane] += x_nb[s * B + lane];
          }
        }
        Dtype mean_b[B];
        for (int lane = 0; lane < B; ++lane) mean_b[lane] = static_cast<Dtype>(sum[lane] * inv_m);
        for (int n = 0; n < num; ++n) {
          const Dtype* x_nb = x + (static_cast<long>(n) * blocks + b) * run;
          for (int s = 0; s < spatial; ++s) {
#pragma omp simd
            for (int lane = 0; lane < B; ++lane) {
              const Dtype centered = x_nb[s * B + lane] - mean_b[lane];
              sum_sq[lane] += centered * centered;
            }
          }
        }
        for (int lane = 0; lane < B; ++lane) {
          const Dtype var_c = static_cast<Dtype>(sum_sq[lane] * inv_m);
          mean[c0 + lane] = mean_b[lane];
          var[c0 + lane] = var_c;
          inv_std[c0 + lane] = Dtype(1) / std::sqrt(var_c + eps);
        }
        for (int n = 0; n < num; ++n) {
          const long offset = (static_cast<long>(n) * blocks + b) * run;
          NormalizeBlockedRun<B>(x + offset, spatial, c0, mean, inv_std, followers, y + offset,
                                 x_norm + offset);
        }
      }
    }
    caffe_stream_fence();
  }
}

// The plain GroupBackward_cpu on blocked values, one block of channels per iteration.
template <bool kReLU, int B, typename Dtype>
void GroupBackwardBlocked(const BatchNormGroupBackward<Dtype>& group, int num, int channels,
                          int spatial) {
  const int blocks = channels / B;
  const long run = static_cast<long>(spatial) * B;  // one image's block
  const double m = static_cast<double>(num) * spatial;
  const double inv_m = m > 0 ? 1.0 / m : 0.0;
  const Dtype slope = group.followers.negative_slope;
  // In place, dy, dx and the kept dz or dv are one array; each value of dy is read before any
  // of them is written at its index.
  const Dtype *dy = group.dy, *x_norm = group.x_norm;
  Dtype *dx = group.dx, *dz_out = group.dz, *dv_out = group.dv;
#pragma omp parallel for schedule(static) if (m * channels >= kParallelMinElements)
  for (int b = 0; b < blocks; ++b) {
    const int c0 = b * B;
    Dtype scale_b[B], shift_b[B], inv_std_b[B];
    Dtype mean_dz[B] = {}, mean_dz_x_norm[B] = {};
    for (int lane = 0; lane < B; ++lane) {
      const int c = c0 + lane;
      scale_b[lane] = group.followers.scale != nullptr ? group.followers.scale[c] : Dtype(1);
      shift_b[lane] = group.followers.bias != nullptr ? group.followers.bias[c] : Dtype(0);
      inv_std_b[lane] = group.inv_std != nullptr ? group.inv_std[c] : Dtype(0);
    }
    const auto dv_of = [&](Dtype dy_value, Dtype x_norm_value, int lane) {
      if constexpr (kReLU) {
        return dy_value * ReLUGradientFactor(x_norm_value * scale_b[lane] + shift_b[lane], slope);
      } else {
        return dy_value;
      }
    };
    if (group.sums) {
      double sum_dv[B] = {}, sum_dv_x_norm[B] = {};
      for (int n = 0; n < num; ++n) {
        const long offset = (static_cast<long>(n) * blocks + b) * run;
        for (int s = 0; s < spatial; ++s) {
          const long at = offset + static_cast<long>(s) * B;
#pragma omp simd
          for (int lane = 0; lane < B; ++lane) {
            const Dtype dv = dv_of(dy[at + lane], x_norm[at + lane], lane);
            sum_dv[lane] += dv;
            sum_dv_x_norm[lane] += dv * x_norm[at + lane];
          }
        }
      }
      for (int lane = 0; lane < B; ++lane) {
        const int c = c0 + lane;
        if (group.bias_diff != nullptr) {
          group.bias_diff[c] = static_cast<Dtype>(group.bias_diff[c] + sum_dv[lane]);
        }
        if (group.scale_diff != nullptr) {
          group.scale_diff[c] = static_cast<Dtype>(group.scale_diff[c] + sum_dv_x_norm[lane]);
        }
        const double factor = scale_b[lane] * inv_m;
        if (group.means) {
          mean_dz[lane] = static_cast<Dtype>(sum_dv[lane] * factor);
          mean_dz_x_norm[lane] = static_cast<Dtype>(sum_dv_x_norm[lane] * factor);
        }
      }
    }
    if (dx == nullptr && dz_out == nullptr && dv_out == nullptr) continue;
    for (int n = 0; n < num; ++n) {
      const long offset = (static_cast<long>(n) * blocks + b) * run;
      for (int s = 0; s < spatial; ++s) {
        const long at = offset + static_cast<long>(s) * B;
        if (dx != nullptr && dz_out == nullptr && dv_out == nullptr) {
          // The usual case (in place, a gradient wanted below): dx alone.
          if (group.means) {
#pragma omp simd
            for (int lane = 0; lane < B; ++lane) {
              const Dtype dz = dv_of(dy[at + lane], x_norm[at + lane], lane) * scale_b[lane];
              dx[at + lane] =
                  (dz - mean_dz[lane] - mean_dz_x_norm[lane] * x_norm[at + lane]) * inv_std_b[lane];
            }
          } else {
#pragma omp simd
            for (int lane = 0; lane < B; ++lane) {
              dx[at + lane] =
                  dv_of(dy[at + lane], x_norm[at + lane], lane) * scale_b[lane] * inv_std_b[lane];
            }
          }
          continue;
        }
        for (int lane = 0; lane < B; ++lane) {
          const Dtype x_norm_value = x_norm[at + lane];
          const Dtype dv = dv_of(dy[at + lane], x_norm_value, lane);
          const Dtype dz = dv * scale_b[lane];
          if (dv_out != nullptr) dv_out[at + lane] = dv;
          if (dz_out != nullptr) dz_out[at + lane] = dz;
          if (dx == nullptr) continue;
          dx[at + lane] = group.means ? (dz - mean_dz[lane] - mean_dz_x_norm[lane] * x_norm_value) *
                                            inv_std_b[lane]
                                      : dz * inv_std_b[lane];
        }
      }
    }
  }
}

}  // namespace

template <typename Dtype>
void BatchNormForwardBlocked(int block, const Dtype* x, int num, int channels, int spatial,
                             bool global, Dtype eps, const BatchNormFollowers<Dtype>& followers,
                             Dtype* mean, Dtype* var, Dtype* inv_std, Dtype* y, Dtype* x_norm) {
  if (block == 16) {
    NormalizeBlocked<16>(x, num, channels, spatial, global, eps, followers, mean, var, inv_std, y,
                         x_norm);
  } else {
    CHECK_EQ(block, 8) << "no BatchNorm kernel for channel blocks of " << block;
    NormalizeBlocked<8>(x, num, channels, spatial, global, eps, followers, mean, var, inv_std, y,
                        x_norm);
  }
}

template <bool kReLU, typename Dtype>
void BatchNormBackwardBlocked(const BatchNormGroupBackward<Dtype>& group, int num, int channels,
                              int spatial, int block) {
  if (block == 16) {
    GroupBackwardBlocked<kReLU, 16>(group, num, channels, spatial);
  } else {
    CHECK_EQ(block, 8) << "no BatchNorm kernel for channel blocks of " << block;
    GroupBackwardBlocked<kReLU, 8>(group, num, channels, spatial);
  }
}

template void BatchNormForwardBlocked<float>(int, const float*, int, int, int, bool, float,
                                             const BatchNormFollowers<float>&, float*, float*,
                                             float*, float*, float*);
template void BatchNormForwardBlocked<double>(int, const double*, int, int, int, bool, double,
                                              const BatchNormFollowers<double>&, double*, double*,
                                              double*, double*, double*);
template void BatchNormBackwardBlocked<false, float>(const BatchNormGroupBackward<float>&, int, int,
                                                     int, int);
template void BatchNormBackwardBlocked<true, float>(const BatchNormGroupBackward<float>&, int, int,
                                                    int, int);
template void BatchNormBackwardBlocked<false, double>(const BatchNormGroupBackward<double>&, int,
                                                      int, int, int);
template void BatchNormBackwardBlocked<true, double>(const BatchNormGroupBackward<double>&, int,
                                                     int, int, int);

}  // namespace caffe
