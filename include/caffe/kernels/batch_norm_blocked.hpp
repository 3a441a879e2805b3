// BatchNorm's work on the CPU shared by its plain passes (batch_norm_layer.cpp) and its passes on
// channel-blocked values (memory/channel_layout.hpp: channel c of image n at position s is at
// ((n * C/B + c / B) * S + s) * B + c % B), which oneDNN's convolutions hand on: the followers
// that run in its passes (the in-place Scale and ReLU after it) and what its backward reads and
// writes. The blocked passes run the per-channel work across SIMD lanes, a block of 8 or 16.
// N batch, C channels, S spatial positions, B block.
#ifndef CAFFE_KERNELS_BATCH_NORM_BLOCKED_HPP_
#define CAFFE_KERNELS_BATCH_NORM_BLOCKED_HPP_

#include "caffe/kernels/relu_math.hpp"

namespace caffe {

// The element-wise work of the layers that run in BatchNorm's passes on the CPU: the Scale's
// (scale not null; bias where it has one), then the ReLU's (relu). Default: none. The same
// expressions as ScaleLayer's and ReLULayer's, so that the group and the layers apart agree.
template <typename Dtype>
struct BatchNormFollowers {
  const Dtype* scale = nullptr;
  const Dtype* bias = nullptr;
  bool relu = false;
  Dtype negative_slope = 0;

  // values = the group's output from the normalized values of channel c, in place.
  void Apply(Dtype* values, int size, int c) const {
    if (scale == nullptr) return;
    const Dtype factor = scale[c];
    const Dtype shift = bias != nullptr ? bias[c] : Dtype(0);
    const Dtype slope = negative_slope;
    if (bias != nullptr && relu) {
#pragma omp simd
      for (int s = 0; s < size; ++s) values[s] = ReLUOf(values[s] * factor + shift, slope);
    } else if (bias != nullptr) {
#pragma omp simd
      for (int s = 0; s < size; ++s) values[s] = values[s] * factor + shift;
    } else if (relu) {
#pragma omp simd
      for (int s = 0; s < size; ++s) values[s] = ReLUOf(values[s] * factor, slope);
    } else {
#pragma omp simd
      for (int s = 0; s < size; ++s) values[s] = values[s] * factor;
    }
  }
};

// What the group's backward on the CPU reads and writes (null where not wanted).
template <typename Dtype>
struct BatchNormGroupBackward {
  BatchNormFollowers<Dtype> followers;
  const Dtype* dy = nullptr;
  const Dtype* x_norm = nullptr;
  const Dtype* inv_std = nullptr;
  // dx subtracts the means of dz and dz * x_norm (batch statistics); else dx = dz * inv_std
  // (stored statistics are constants).
  bool means = true;
  bool sums = false;  // the Scale's gradients and, where `means`, this layer's means (dx)
  Dtype* scale_diff = nullptr;
  Dtype* bias_diff = nullptr;
  Dtype* dx = nullptr;
  Dtype* dz = nullptr;  // the Scale's bottom diff, kept in the top's diff
  Dtype* dv = nullptr;  // the ReLU's bottom diff, kept there where the Scale passes none
};

/// Forward on blocked values (B = `block`, 8 or 16): x_norm = (x - mean) * inv_std, kept in
/// `x_norm` (streamed) where that is not null, and y = the followers' output of it (y may be x).
/// Batch statistics (mean, var and inv_std written; var biased) unless `global` (mean and inv_std
/// given).
template <typename Dtype>
void BatchNormForwardBlocked(int block, const Dtype* x, int num, int channels, int spatial,
                             bool global, Dtype eps, const BatchNormFollowers<Dtype>& followers,
                             Dtype* mean, Dtype* var, Dtype* inv_std, Dtype* y, Dtype* x_norm);

/// The group's backward on blocked values, as the plain one in batch_norm_layer.cpp; kReLU: the
/// ReLU's gradient recomputed from x_norm and the Scale's parameters.
template <bool kReLU, typename Dtype>
void BatchNormBackwardBlocked(const BatchNormGroupBackward<Dtype>& group, int num, int channels,
                              int spatial, int block);

}  // namespace caffe

#endif  // CAFFE_KERNELS_BATCH_NORM_BLOCKED_HPP_
