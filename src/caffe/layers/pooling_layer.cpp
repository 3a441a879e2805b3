// Legend as in pooling_layer.hpp: N images, C channels, D/H/W input sizes, PD/PH/PW pooled sizes.
#include "caffe/layers/pooling_layer.hpp"

#include <algorithm>
#include <cfloat>
#include <type_traits>
#include <vector>

#include "caffe/kernels/math_functions.hpp"
#include "caffe/kernels/pooling_blocked.hpp"
#include "caffe/util/cpu_threads.hpp"

namespace caffe {

namespace {

inline int CeilDiv(int a, int b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
inline int FloorDiv(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

template <typename Dtype>
void PoolingLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const PoolingParameter& param = this->layer_param_.pooling_param();
  method_ = param.pool();
  const int num_axes = bottom[0]->num_axes();
  LAYER_CHECK(num_axes >= 3 && num_axes <= 5)
      << "bottom " << bottom[0]->shape_string()
      << " must have 4 axes (N, C, H, W), or 3 or 5 for 1-D or 3-D pooling";
  num_spatial_axes_ = num_axes - 2;
  global_pooling_ = param.global_pooling();

  if (global_pooling_) {
    LAYER_CHECK(!param.has_kernel_size() && !param.has_kernel_h() && !param.has_kernel_w())
        << "with global_pooling the kernel is the whole input; do not give kernel_size, "
           "kernel_h or kernel_w";
  } else {
    LAYER_CHECK(!(param.has_kernel_size() && (param.has_kernel_h() || param.has_kernel_w())))
        << "give either kernel_size or kernel_h and kernel_w, not both";
    LAYER_CHECK(param.has_kernel_size() || (param.has_kernel_h() && param.has_kernel_w()))
        << "kernel_size, or both kernel_h and kernel_w, must be given";
  }
  LAYER_CHECK(!(param.has_pad() && (param.has_pad_h() || param.has_pad_w())))
      << "give either pad or pad_h and pad_w, not both";
  LAYER_CHECK_EQ(param.has_pad_h(), param.has_pad_w()) << "pad_h and pad_w must be given together";
  LAYER_CHECK(!(param.has_stride() && (param.has_stride_h() || param.has_stride_w())))
      << "give either stride or stride_h and stride_w, not both";
  LAYER_CHECK_EQ(param.has_stride_h(), param.has_stride_w())
      << "stride_h and stride_w must be given together";
  const bool has_hw = param.has_kernel_h() || param.has_pad_h() || param.has_stride_h();
  LAYER_CHECK(!has_hw || num_spatial_axes_ == 2)
      << "kernel_h/kernel_w, pad_h/pad_w and stride_h/stride_w are for 2-D pooling, but bottom "
      << bottom[0]->shape_string() << " has " << num_spatial_axes_
      << " spatial axes; use kernel_size, pad and stride";

  const int first = kAxes - num_spatial_axes_;
  for (int a = 0; a < kAxes; ++a) {
    const bool spatial = a >= first;
    kernel_[a] = spatial && !global_pooling_ ? static_cast<int>(param.kernel_size()) : 1;
    pad_[a] = spatial ? static_cast<int>(param.pad()) : 0;
    stride_[a] = spatial ? static_cast<int>(param.stride()) : 1;
  }
  if (param.has_kernel_h()) {
    kernel_[1] = static_cast<int>(param.kernel_h());
    kernel_[2] = static_cast<int>(param.kernel_w());
  }
  if (param.has_pad_h()) {
    pad_[1] = static_cast<int>(param.pad_h());
    pad_[2] = static_cast<int>(param.pad_w());
  }
  if (param.has_stride_h()) {
    stride_[1] = static_cast<int>(param.stride_h());
    stride_[2] = static_cast<int>(param.stride_w());
  }
  bool padded = false;
  for (int a = first; a < kAxes; ++a) {
    if (!global_pooling_) {
      LAYER_CHECK_GE(kernel_[a], 1) << "the kernel size is 0 on a spatial axis; must be >= 1";
    }
    LAYER_CHECK_GE(stride_[a], 1) << "the stride is 0 on a spatial axis; must be >= 1";
    padded = padded || pad_[a] != 0;
  }
  if (global_pooling_) {
    LAYER_CHECK(!padded && stride_[1] == 1 && stride_[2] == 1 && stride_[0] == 1)
        << "with global_pooling, pad must be 0 and stride 1";
  }
  if (padded) {
    LAYER_CHECK(method_ == PoolingParameter_PoolMethod_MAX ||
                method_ == PoolingParameter_PoolMethod_AVE)
        << "padding is implemented only for MAX and AVE pooling";
    for (int a = first; a < kAxes; ++a) {
      LAYER_CHECK_LT(pad_[a], kernel_[a]) << "pad must be smaller than the kernel size";
    }
  }

  round_up_ = param.round_mode() == PoolingParameter_RoundMode_CEIL;
  if (param.has_ceil_mode()) {
    if (param.has_round_mode()) {
      LAYER_CHECK_EQ(param.ceil_mode(), round_up_)
          << "ceil_mode and round_mode disagree; give only one of them";
    }
    round_up_ = param.ceil_mode();
  }
}

template <typename Dtype>
void PoolingLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LAYER_CHECK_EQ(bottom[0]->num_axes(), num_spatial_axes_ + 2)
      << "bottom " << bottom[0]->shape_string()
      << " changed its number of axes since setup; it may not";
  planes_ = bottom[0]->count(0, 2);
  const int first = kAxes - num_spatial_axes_;
  bool padded = false;
  for (int a = first; a < kAxes; ++a) {
    input_[a] = bottom[0]->shape(2 + a - first);
    if (global_pooling_) kernel_[a] = input_[a];
    padded = padded || pad_[a] != 0;
  }
  std::vector<int> top_shape{bottom[0]->shape(0), bottom[0]->shape(1)};
  for (int a = 0; a < kAxes; ++a) {
    const int span = input_[a] + 2 * pad_[a] - kernel_[a];
    int pooled = (round_up_ ? CeilDiv(span, stride_[a]) : FloorDiv(span, stride_[a])) + 1;
    // BVLC: with padding, the last window must start inside the image (or its leading pad).
    if (padded && (pooled - 1) * stride_[a] >= input_[a] + pad_[a]) --pooled;
    LAYER_CHECK_GT(pooled, 0) << "the kernel (" << kernel_[a] << ") is larger than the padded "
                              << "input (" << input_[a] << " + 2 * " << pad_[a] << ") of bottom "
                              << bottom[0]->shape_string()
                              << ", leaving no output with FLOOR rounding";
    pooled_[a] = pooled;
    if (a >= first) top_shape.push_back(pooled);

    AxisWindows& windows = windows_[a];
    windows.start.resize(pooled);
    windows.end.resize(pooled);
    windows.padded_extent.resize(pooled);
    for (int o = 0; o < pooled; ++o) {
      const int start = o * stride_[a] - pad_[a];
      const int padded_end = std::min(start + kernel_[a], input_[a] + pad_[a]);
      windows.padded_extent[o] = padded_end - start;
      windows.start[o] = std::max(start, 0);
      windows.end[o] = std::max(std::min(padded_end, input_[a]), windows.start[o]);
    }
  }
  top[0]->Reshape(top_shape);
  if (top.size() > 1) top[1]->ReshapeLike(*top[0]);
  if (method_ == PoolingParameter_PoolMethod_MAX && top.size() == 1) {
    max_idx_.Reshape(top_shape);
  }
#ifndef CPU_ONLY
  // The GPU's TRAIN-phase STOCHASTIC picks, shaped here so that LMS plans them.
  if (method_ == PoolingParameter_PoolMethod_STOCHASTIC && this->phase_ == TRAIN) {
    rand_idx_.Reshape(top_shape);
  }
#endif
}

namespace {

// The window bounds of one axis as raw pointers: reading them through std::vector inside the
// loops would reload the vector's data pointer after every store to the (possibly aliasing) int
// mask.
// Output rows up to this width keep MaxPlaneByRows's running indices on the stack.
constexpr int kMaxPooledWidth = 512;

struct AxisBounds {
  const int* start;
  const int* end;
  const int* padded_extent;
};

// Raw pointers to the per-axis window bounds (the layer's windows_).
template <typename AxisWindows>
void BoundsOf(const AxisWindows* windows, int num_axes, AxisBounds* axes) {
  for (int a = 0; a < num_axes; ++a) {
    axes[a] = {windows[a].start.data(), windows[a].end.data(), windows[a].padded_extent.data()};
  }
}

// MAX over every window of one (D, H, W) plane. kDepth false: D == PD == 1 (2-D pooling), so the
// depth loop disappears.
template <bool kDepth, typename Dtype, typename Mask>
void MaxPlane(const Dtype* x, const int* pooled, int in_h, int in_w, const AxisBounds* axes,
              Dtype* y, Mask* mask) {
  const AxisBounds& wd = axes[0];
  const AxisBounds& wh = axes[1];
  const AxisBounds& ww = axes[2];
  const int out_d = kDepth ? pooled[0] : 1;
  int o = 0;
  for (int od = 0; od < out_d; ++od) {
    const int d_begin = kDepth ? wd.start[od] : 0, d_end = kDepth ? wd.end[od] : 1;
    for (int oh = 0; oh < pooled[1]; ++oh) {
      const int h_begin = wh.start[oh], h_end = wh.end[oh];
      for (int ow = 0; ow < pooled[2]; ++ow, ++o) {
        const int w_begin = ww.start[ow], w_end = ww.end[ow];
        // BVLC's initial value and strict '>': the first maximum in row-major order wins, and
        // a window of values all <= -FLT_MAX keeps index -1.
        Dtype best = -FLT_MAX;
        int best_index = -1;
        for (int d = d_begin; d < d_end; ++d) {
          for (int h = h_begin; h < h_end; ++h) {
            const int row = (d * in_h + h) * in_w;
            for (int w = w_begin; w < w_end; ++w) {
              // Branch-free: which value wins is data-dependent and mispredicts often.
              const Dtype value = x[row + w];
              const bool larger = value > best;
              best_index = larger ? row + w : best_index;
              best = larger ? value : best;
            }
          }
        }
        y[o] = best;
        mask[o] = static_cast<Mask>(best_index);
      }
    }
  }
}

// MAX over 2x2 windows at stride 2 that tile the plane exactly (LeNet's pooling): the four values
// of each window in row-major order, with no window bounds to look up. Same result and index as
// MaxPlane (BVLC's initial -FLT_MAX and strict '>').
template <typename Dtype, typename Mask>
void MaxPlaneTiled2x2(const Dtype* x, int out_h, int out_w, Dtype* y, Mask* mask) {
  const int in_w = 2 * out_w;
  for (int oh = 0; oh < out_h; ++oh) {
    const int top_row = 2 * oh * in_w;
    const Dtype* r0 = x + top_row;
    const Dtype* r1 = r0 + in_w;
    Dtype* y_row = y + oh * out_w;
    Mask* mask_row = mask + oh * out_w;
    for (int ow = 0; ow < out_w; ++ow) {
      const int w = 2 * ow;
      Dtype best = -FLT_MAX;
      int best_index = -1;
      const Dtype values[4] = {r0[w], r0[w + 1], r1[w], r1[w + 1]};
      const int indices[4] = {top_row + w, top_row + w + 1, top_row + in_w + w,
                              top_row + in_w + w + 1};
      for (int k = 0; k < 4; ++k) {
        const bool larger = values[k] > best;
        best_index = larger ? indices[k] : best_index;
        best = larger ? values[k] : best;
      }
      y_row[ow] = best;
      mask_row[ow] = static_cast<Mask>(best_index);
    }
  }
}

// The adjoint of MaxPlaneTiled2x2, writing every input of the plane (each lies in exactly one
// window): its output's diff where it was the maximum, else 0. No zeroing pass before it.
template <typename Dtype, typename Mask>
void MaxBackwardPlaneTiled2x2(const Dtype* dy, const Mask* mask, int out_h, int out_w, Dtype* dx) {
  const int in_w = 2 * out_w;
  for (int oh = 0; oh < out_h; ++oh) {
    const int top_row = 2 * oh * in_w;
    Dtype* r0 = dx + top_row;
    Dtype* r1 = r0 + in_w;
    for (int ow = 0; ow < out_w; ++ow) {
      const int o = oh * out_w + ow, w = 2 * ow;
      const int index = static_cast<int>(mask[o]);
      const Dtype diff = dy[o];
      r0[w] = index == top_row + w ? diff : Dtype(0);
      r0[w + 1] = index == top_row + w + 1 ? diff : Dtype(0);
      r1[w] = index == top_row + in_w + w ? diff : Dtype(0);
      r1[w + 1] = index == top_row + in_w + w + 1 ? diff : Dtype(0);
    }
  }
}

// The outputs [begin, end) of a row whose windows have the full kernel width (all but a few
// clipped at the edges); output ow's window starts at base + ow * stride.
struct FullWindows {
  FullWindows(const AxisBounds& ww, int out_w, int kernel_w, int stride_w) {
    begin = 0;
    while (begin < out_w && ww.end[begin] - ww.start[begin] != kernel_w) ++begin;
    end = begin;
    while (end < out_w && ww.end[end] - ww.start[end] == kernel_w) ++end;
    base = begin < out_w ? ww.start[begin] - begin * stride_w : 0;
  }
  int begin, end, base;
};

// The row pass of MaxPlaneByRows over outputs [begin, end), whose windows all have the full
// kernel width and start at base + ow * stride: one sweep per tap with the outputs innermost, so
// the results are contiguous and the loop vectorizes (kStride > 0 a compile-time stride, 0 the
// runtime `stride`). Taps in ascending order with strict '>': the row's first maximum wins.
template <int kStride, typename Dtype>
void RowMaxFullWindows(const Dtype* row, int row_offset, int base, int stride, int kernel,
                       int begin, int end, Dtype* best, int* index) {
  const int step = kStride > 0 ? kStride : stride;
  for (int ow = begin; ow < end; ++ow) {
    best[ow] = -FLT_MAX;
    index[ow] = -1;
  }
  for (int tap = 0; tap < kernel; ++tap) {
    const Dtype* values = row + base + tap;
    const int first = row_offset + base + tap;
    for (int ow = begin; ow < end; ++ow) {
      const Dtype value = values[ow * step];
      const bool larger = value > best[ow];
      index[ow] = larger ? first + ow * step : index[ow];
      best[ow] = larger ? value : best[ow];
    }
  }
}

// MAX over the 2-D windows of one plane in two passes, for overlapping windows (stride below the
// kernel, as GoogLeNet's 3x3 stride 1 and 2): first the maximum of each input row over each
// output column's window, then of those row maxima over each output row's window. Rows are
// reused by the windows that overlap them, and the second pass runs along contiguous columns,
// which vectorizes. Same result and index as MaxPlane: the first maximum in row-major order (a
// row's first maximum, then the first row that reaches the window's maximum, with strict '>').
// `row_max` and `row_index` hold in_h x pooled[2] values.
template <typename Dtype, typename Mask>
void MaxPlaneByRows(const Dtype* x, const int* pooled, int in_h, int in_w, const AxisBounds* axes,
                    int kernel_w, int stride_w, Dtype* y, Mask* mask, Dtype* row_max,
                    int* row_index) {
  const AxisBounds& wh = axes[1];
  const AxisBounds& ww = axes[2];
  const int out_w = pooled[2];
  const FullWindows full(ww, out_w, kernel_w, stride_w);
  const int full_begin = full.begin, full_end = full.end, base = full.base;
  for (int h = 0; h < in_h; ++h) {
    const Dtype* row = x + h * in_w;
    Dtype* best = row_max + h * out_w;
    int* index = row_index + h * out_w;
    if (stride_w == 1) {
      RowMaxFullWindows<1>(row, h * in_w, base, 1, kernel_w, full_begin, full_end, best, index);
    } else if (stride_w == 2) {
      RowMaxFullWindows<2>(row, h * in_w, base, 2, kernel_w, full_begin, full_end, best, index);
    } else {
      RowMaxFullWindows<0>(row, h * in_w, base, stride_w, kernel_w, full_begin, full_end, best,
                           index);
    }
    // The clipped windows before and after, one at a time.
    const auto clipped = [&](int begin, int end) {
      for (int ow = begin; ow < end; ++ow) {
        Dtype value_best = -FLT_MAX;
        int index_best = -1;
        for (int w = ww.start[ow]; w < ww.end[ow]; ++w) {
          const bool larger = row[w] > value_best;
          index_best = larger ? h * in_w + w : index_best;
          value_best = larger ? row[w] : value_best;
        }
        best[ow] = value_best;
        index[ow] = index_best;
      }
    };
    clipped(0, full_begin);
    clipped(full_end, out_w);
  }
  for (int oh = 0; oh < pooled[1]; ++oh) {
    Dtype* y_row = y + oh * out_w;
    Mask* mask_row = mask + oh * out_w;
    int first_index[kMaxPooledWidth];
    int* best_index = out_w <= kMaxPooledWidth ? first_index : nullptr;
    std::vector<int> wide;
    if (best_index == nullptr) {
      wide.resize(out_w);
      best_index = wide.data();
    }
    for (int ow = 0; ow < out_w; ++ow) {
      y_row[ow] = -FLT_MAX;
      best_index[ow] = -1;
    }
    for (int h = wh.start[oh]; h < wh.end[oh]; ++h) {
      const Dtype* candidate = row_max + h * out_w;
      const int* candidate_index = row_index + h * out_w;
      for (int ow = 0; ow < out_w; ++ow) {
        const bool larger = candidate[ow] > y_row[ow];
        best_index[ow] = larger ? candidate_index[ow] : best_index[ow];
        y_row[ow] = larger ? candidate[ow] : y_row[ow];
      }
    }
    for (int ow = 0; ow < out_w; ++ow) mask_row[ow] = static_cast<Mask>(best_index[ow]);
  }
}

// AVE over every window of one plane; the divisor is the window clipped to the padded input.
template <bool kDepth, typename Dtype>
void AvePlane(const Dtype* x, const int* pooled, int in_h, int in_w, const AxisBounds* axes,
              Dtype* y) {
  const AxisBounds& wd = axes[0];
  const AxisBounds& wh = axes[1];
  const AxisBounds& ww = axes[2];
  const int out_d = kDepth ? pooled[0] : 1;
  int o = 0;
  for (int od = 0; od < out_d; ++od) {
    const int d_begin = kDepth ? wd.start[od] : 0, d_end = kDepth ? wd.end[od] : 1;
    const int extent_d = kDepth ? wd.padded_extent[od] : 1;
    for (int oh = 0; oh < pooled[1]; ++oh) {
      const int h_begin = wh.start[oh], h_end = wh.end[oh];
      const int extent_dh = extent_d * wh.padded_extent[oh];
      for (int ow = 0; ow < pooled[2]; ++ow, ++o) {
        const int w_begin = ww.start[ow], w_end = ww.end[ow];
        Dtype sum = 0;
        for (int d = d_begin; d < d_end; ++d) {
          for (int h = h_begin; h < h_end; ++h) {
            const Dtype* row = x + (d * in_h + h) * in_w;
            for (int w = w_begin; w < w_end; ++w) sum += row[w];
          }
        }
        y[o] = sum / static_cast<Dtype>(extent_dh * ww.padded_extent[ow]);
      }
    }
  }
}

// One row of AvePlane's 2-D sums, for the outputs whose windows have the full width: tap by tap
// with the outputs innermost (contiguous results; the loop vectorizes), each output's values
// added in AvePlane's order (rows, then columns, from 0), so the sums are the same to the bit.
// kStride > 0 is a compile-time stride, 0 the runtime `stride`.
template <int kStride, typename Dtype>
void AveRowSums(const Dtype* x, int in_w, int h_begin, int h_end, int base, int stride,
                int kernel_w, int begin, int end, Dtype* sum) {
  const int step = kStride > 0 ? kStride : stride;
  for (int ow = begin; ow < end; ++ow) sum[ow] = 0;
  for (int h = h_begin; h < h_end; ++h) {
    for (int tap = 0; tap < kernel_w; ++tap) {
      const Dtype* values = x + h * in_w + base + tap;
      for (int ow = begin; ow < end; ++ow) sum[ow] += values[ow * step];
    }
  }
}

// AvePlane in 2-D with AveRowSums for the full-width windows of each output row (`sum`: a row of
// pooled[2] values) and the windows clipped at the edges one at a time.
template <typename Dtype>
void AvePlaneByRows(const Dtype* x, const int* pooled, int in_w, const AxisBounds* axes,
                    int kernel_w, int stride_w, Dtype* y, Dtype* sum) {
  const AxisBounds& wh = axes[1];
  const AxisBounds& ww = axes[2];
  const int out_w = pooled[2];
  const FullWindows full(ww, out_w, kernel_w, stride_w);
  for (int oh = 0; oh < pooled[1]; ++oh) {
    const int h_begin = wh.start[oh], h_end = wh.end[oh];
    if (stride_w == 1) {
      AveRowSums<1>(x, in_w, h_begin, h_end, full.base, 1, kernel_w, full.begin, full.end, sum);
    } else if (stride_w == 2) {
      AveRowSums<2>(x, in_w, h_begin, h_end, full.base, 2, kernel_w, full.begin, full.end, sum);
    } else {
      AveRowSums<0>(x, in_w, h_begin, h_end, full.base, stride_w, kernel_w, full.begin, full.end,
                    sum);
    }
    const auto clipped = [&](int begin, int end) {
      for (int ow = begin; ow < end; ++ow) {
        Dtype value = 0;
        for (int h = h_begin; h < h_end; ++h) {
          for (int w = ww.start[ow]; w < ww.end[ow]; ++w) value += x[h * in_w + w];
        }
        sum[ow] = value;
      }
    };
    clipped(0, full.begin);
    clipped(full.end, out_w);
    Dtype* y_row = y + oh * out_w;
    const int extent_h = wh.padded_extent[oh];
    for (int ow = 0; ow < out_w; ++ow) {
      y_row[ow] = sum[ow] / static_cast<Dtype>(extent_h * ww.padded_extent[ow]);
    }
  }
}

// The adjoint of AvePlane: each output's diff, divided by its divisor, goes to its window.
template <bool kDepth, typename Dtype>
void AveBackwardPlane(const Dtype* dy, const int* pooled, int in_h, int in_w,
                      const AxisBounds* axes, Dtype* dx) {
  const AxisBounds& wd = axes[0];
  const AxisBounds& wh = axes[1];
  const AxisBounds& ww = axes[2];
  const int out_d = kDepth ? pooled[0] : 1;
  int o = 0;
  for (int od = 0; od < out_d; ++od) {
    const int d_begin = kDepth ? wd.start[od] : 0, d_end = kDepth ? wd.end[od] : 1;
    const int extent_d = kDepth ? wd.padded_extent[od] : 1;
    for (int oh = 0; oh < pooled[1]; ++oh) {
      const int h_begin = wh.start[oh], h_end = wh.end[oh];
      const int extent_dh = extent_d * wh.padded_extent[oh];
      for (int ow = 0; ow < pooled[2]; ++ow, ++o) {
        const int w_begin = ww.start[ow], w_end = ww.end[ow];
        const Dtype share = dy[o] / static_cast<Dtype>(extent_dh * ww.padded_extent[ow]);
        for (int d = d_begin; d < d_end; ++d) {
          for (int h = h_begin; h < h_end; ++h) {
            Dtype* row = dx + (d * in_h + h) * in_w;
            for (int w = w_begin; w < w_end; ++w) row[w] += share;
          }
        }
      }
    }
  }
}

// AveBackwardPlane in 2-D for rows of outputs: each output row's clipped windows before the
// full-width ones one at a time, then the full-width ones tap by tap with the outputs innermost
// (the loop vectorizes), then the clipped ones after. Taps go from the last to the first, so
// every input receives its shares in AveBackwardPlane's order (outputs ascending) and the
// gradient is the same to the bit. `share`: a row of pooled[2] values.
template <typename Dtype>
void AveBackwardPlaneByRows(const Dtype* dy, const int* pooled, int in_w, const AxisBounds* axes,
                            int kernel_w, int stride_w, Dtype* dx, Dtype* share) {
  const AxisBounds& wh = axes[1];
  const AxisBounds& ww = axes[2];
  const int out_w = pooled[2];
  const FullWindows full(ww, out_w, kernel_w, stride_w);
  for (int oh = 0; oh < pooled[1]; ++oh) {
    const int h_begin = wh.start[oh], h_end = wh.end[oh];
    const int extent_h = wh.padded_extent[oh];
    for (int ow = 0; ow < out_w; ++ow) {
      share[ow] = dy[oh * out_w + ow] / static_cast<Dtype>(extent_h * ww.padded_extent[ow]);
    }
    const auto clipped = [&](int begin, int end) {
      for (int ow = begin; ow < end; ++ow) {
        for (int h = h_begin; h < h_end; ++h) {
          for (int w = ww.start[ow]; w < ww.end[ow]; ++w) dx[h * in_w + w] += share[ow];
        }
      }
    };
    clipped(0, full.begin);
    for (int h = h_begin; h < h_end; ++h) {
      for (int tap = kernel_w - 1; tap >= 0; --tap) {
        Dtype* row = dx + h * in_w + full.base + tap;
        if (stride_w == 1) {
          for (int ow = full.begin; ow < full.end; ++ow) row[ow] += share[ow];
        } else {
          for (int ow = full.begin; ow < full.end; ++ow) row[ow * stride_w] += share[ow];
        }
      }
    }
    clipped(full.end, out_w);
  }
}

}  // namespace

template <typename Dtype>
bool PoolingLayer<Dtype>::TiledByTwoByTwo() const {
  return input_[0] == 1 && pooled_[0] == 1 && kernel_[1] == 2 && kernel_[2] == 2 &&
         stride_[1] == 2 && stride_[2] == 2 && pad_[1] == 0 && pad_[2] == 0 &&
         input_[1] == 2 * pooled_[1] && input_[2] == 2 * pooled_[2];
}

template <typename Dtype>
template <typename Mask>
void PoolingLayer<Dtype>::ForwardMax(const Dtype* bottom_data, Dtype* top_data, Mask* mask) const {
  const int in_plane = input_[0] * input_[1] * input_[2];
  const int out_plane = pooled_[0] * pooled_[1] * pooled_[2];
  AxisBounds axes[kAxes];
  BoundsOf(windows_, kAxes, axes);
  const bool depth = input_[0] > 1 || pooled_[0] > 1;
  // Overlapping 2-D windows of 3 or more taps per axis: two passes that share the row maxima.
  const bool by_rows = !depth && kernel_[1] >= 3 && kernel_[2] >= 3 && stride_[1] < kernel_[1];
  const int row_values = input_[1] * pooled_[2];
  const bool tiled_2x2 = TiledByTwoByTwo();
  // Planes are independent: one thread per share of them.
#pragma omp parallel for schedule(static) if (static_cast <long>(planes_) * in_plane >= \
                                              kParallelMinElements)
  for (int plane = 0; plane < planes_; ++plane) {
    const Dtype* x = bottom_data + static_cast<long>(plane) * in_plane;
    const long out_offset = static_cast<long>(plane) * out_plane;
    if (tiled_2x2) {
      MaxPlaneTiled2x2(x, pooled_[1], pooled_[2], top_data + out_offset, mask + out_offset);
    } else if (by_rows) {
      thread_local std::vector<Dtype> row_max;
      thread_local std::vector<int> row_index;
      if (static_cast<int>(row_max.size()) < row_values) {
        row_max.resize(row_values);
        row_index.resize(row_values);
      }
      MaxPlaneByRows(x, pooled_, input_[1], input_[2], axes, kernel_[2], stride_[2],
                     top_data + out_offset, mask + out_offset, row_max.data(), row_index.data());
    } else if (depth) {
      MaxPlane<true>(x, pooled_, input_[1], input_[2], axes, top_data + out_offset,
                     mask + out_offset);
    } else {
      MaxPlane<false>(x, pooled_, input_[1], input_[2], axes, top_data + out_offset,
                      mask + out_offset);
    }
  }
}

template <typename Dtype>
void PoolingLayer<Dtype>::ForwardAve(const Dtype* bottom_data, Dtype* top_data) const {
  const int in_plane = input_[0] * input_[1] * input_[2];
  const int out_plane = pooled_[0] * pooled_[1] * pooled_[2];
  AxisBounds axes[kAxes];
  BoundsOf(windows_, kAxes, axes);
  const bool depth = input_[0] > 1 || pooled_[0] > 1;
  const bool by_rows = AveByRows();
  // Planes are independent: one thread per share of them.
#pragma omp parallel for schedule(static) if (static_cast <long>(planes_) * in_plane >= \
                                              kParallelMinElements)
  for (int plane = 0; plane < planes_; ++plane) {
    const Dtype* x = bottom_data + static_cast<long>(plane) * in_plane;
    Dtype* y = top_data + static_cast<long>(plane) * out_plane;
    if (depth) {
      AvePlane<true>(x, pooled_, input_[1], input_[2], axes, y);
    } else if (by_rows) {
      thread_local std::vector<Dtype> sums;
      if (static_cast<int>(sums.size()) < pooled_[2]) sums.resize(pooled_[2]);
      AvePlaneByRows(x, pooled_, input_[2], axes, kernel_[2], stride_[2], y, sums.data());
    } else {
      AvePlane<false>(x, pooled_, input_[1], input_[2], axes, y);
    }
  }
}

template <typename Dtype>
int PoolingLayer<Dtype>::BlockFor(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) const {
  const bool shape = std::is_same<Dtype, float>::value && num_spatial_axes_ == 2;
  const bool method = (method_ == PoolingParameter_PoolMethod_MAX && top.size() == 1) ||
                      method_ == PoolingParameter_PoolMethod_AVE;
  return shape && method ? bottom[0]->cpu_data_block() : 1;
}

template <typename Dtype>
void PoolingLayer<Dtype>::ForwardBlocked(const Blob<Dtype>& bottom, Blob<Dtype>* top) {
  if constexpr (std::is_same<Dtype, float>::value) {
    const PoolingAxis rows = BlockedAxis(1), columns = BlockedAxis(2);
    const float* x = bottom.cpu_data_in(block_);
    float* y = top->mutable_cpu_data_in(block_, /*keep_values=*/false);
    const int groups = planes_ / block_;
    if (method_ == PoolingParameter_PoolMethod_MAX) {
      MaxPoolBlocked(x, groups, block_, rows, columns, y, max_idx_.mutable_cpu_data());
    } else {
      AvePoolBlocked(x, groups, block_, rows, columns, y);
    }
  }
}

template <typename Dtype>
void PoolingLayer<Dtype>::BackwardBlocked(const Blob<Dtype>& top, Blob<Dtype>* bottom) {
  if constexpr (std::is_same<Dtype, float>::value) {
    const PoolingAxis rows = BlockedAxis(1), columns = BlockedAxis(2);
    const float* dy = top.cpu_diff_in(block_);
    float* dx = bottom->mutable_cpu_diff_in(block_, /*keep_values=*/false);
    const int groups = planes_ / block_;
    if (method_ == PoolingParameter_PoolMethod_MAX) {
      MaxPoolBackwardBlocked(dy, max_idx_.cpu_data(), groups, block_, rows, columns, dx);
    } else {
      AvePoolBackwardBlocked(dy, groups, block_, rows, columns, dx);
    }
  }
}

template <typename Dtype>
void PoolingLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  // Values that come in channel blocks are pooled where they are, and handed on so.
  block_ = BlockFor(bottom, top);
  if (block_ > 1) {
    ForwardBlocked(*bottom[0], top[0]);
    return;
  }
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  switch (method_) {
    case PoolingParameter_PoolMethod_MAX:
      if (top.size() > 1) {
        ForwardMax(bottom_data, top_data, top[1]->mutable_cpu_data());
      } else {
        ForwardMax(bottom_data, top_data, max_idx_.mutable_cpu_data());
      }
      break;
    case PoolingParameter_PoolMethod_AVE:
      ForwardAve(bottom_data, top_data);
      break;
    default:
      LAYER_THROW() << "STOCHASTIC pooling is implemented only on the GPU (as in BVLC Caffe); "
                       "use MAX or AVE on the CPU";
  }
}

template <typename Dtype>
template <typename Mask>
void PoolingLayer<Dtype>::BackwardMax(const Dtype* top_diff, const Mask* mask,
                                      Dtype* bottom_diff) const {
  const int in_plane = input_[0] * input_[1] * input_[2];
  const int out_plane = pooled_[0] * pooled_[1] * pooled_[2];
  const bool tiled_2x2 = TiledByTwoByTwo();
  // Planes are independent: one thread per share of them.
#pragma omp parallel for schedule(static) if (static_cast <long>(planes_) * in_plane >= \
                                              kParallelMinElements)
  for (int plane = 0; plane < planes_; ++plane) {
    const Dtype* dy = top_diff + static_cast<long>(plane) * out_plane;
    const Mask* m = mask + static_cast<long>(plane) * out_plane;
    Dtype* dx = bottom_diff + static_cast<long>(plane) * in_plane;
    if (tiled_2x2) {
      MaxBackwardPlaneTiled2x2(dy, m, pooled_[1], pooled_[2], dx);  // writes every input
      continue;
    }
    std::fill(dx, dx + in_plane, Dtype(0));  // the windows add into zeros
    for (int o = 0; o < out_plane; ++o) {
      const int index = static_cast<int>(m[o]);
      // -1: an empty window (possible without padding when stride > kernel) had no input.
      if (index >= 0) dx[index] += dy[o];
    }
  }
}

template <typename Dtype>
void PoolingLayer<Dtype>::BackwardAve(const Dtype* top_diff, Dtype* bottom_diff) const {
  const int in_plane = input_[0] * input_[1] * input_[2];
  const int out_plane = pooled_[0] * pooled_[1] * pooled_[2];
  AxisBounds axes[kAxes];
  BoundsOf(windows_, kAxes, axes);
  const bool depth = input_[0] > 1 || pooled_[0] > 1;
  const bool by_rows = AveByRows();
  // Planes are independent: one thread per share of them.
#pragma omp parallel for schedule(static) if (static_cast <long>(planes_) * in_plane >= \
                                              kParallelMinElements)
  for (int plane = 0; plane < planes_; ++plane) {
    const Dtype* dy = top_diff + static_cast<long>(plane) * out_plane;
    Dtype* dx = bottom_diff + static_cast<long>(plane) * in_plane;
    std::fill(dx, dx + in_plane, Dtype(0));  // the windows add into zeros
    if (depth) {
      AveBackwardPlane<true>(dy, pooled_, input_[1], input_[2], axes, dx);
    } else if (by_rows) {
      thread_local std::vector<Dtype> shares;
      if (static_cast<int>(shares.size()) < pooled_[2]) shares.resize(pooled_[2]);
      AveBackwardPlaneByRows(dy, pooled_, input_[2], axes, kernel_[2], stride_[2], dx,
                             shares.data());
    } else {
      AveBackwardPlane<false>(dy, pooled_, input_[1], input_[2], axes, dx);
    }
  }
}

template <typename Dtype>
void PoolingLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                       const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  if (block_ > 1) {
    BackwardBlocked(*top[0], bottom[0]);
    return;
  }
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  switch (method_) {
    case PoolingParameter_PoolMethod_MAX:
      if (top.size() > 1) {
        BackwardMax(top_diff, top[1]->cpu_data(), bottom_diff);
      } else {
        BackwardMax(top_diff, max_idx_.cpu_data(), bottom_diff);
      }
      break;
    case PoolingParameter_PoolMethod_AVE:
      BackwardAve(top_diff, bottom_diff);
      break;
    default:
      LAYER_THROW() << "STOCHASTIC pooling is implemented only on the GPU (as in BVLC Caffe); "
                       "use MAX or AVE on the CPU";
  }
}

template <typename Dtype>
bool PoolingLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                           const Blobs<Dtype>& top,
                                           const vector<bool>& propagate_down,
                                           MemoryUses* uses) const {
  // The windows' recorded choices: MAX's argmax (here when top[1] does not hold it) and
  // STOCHASTIC's sampled positions (GPU, TRAIN phase), written whole forward, read backward.
  const auto choices = pass == Pass::kForward ? kOverwrite : kRead;
  uses->AddData(max_idx_, choices);
#ifndef CPU_ONLY
  uses->AddData(rand_idx_, choices);
#endif
  if (pass == Pass::kForward) {
    Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
    return true;
  }
  // Backward routes the top's gradient through those choices (AVE through the geometry alone):
  // neither the bottom's data nor the top's is read, so LMS need not bring them back.
  uses->AddDiff(*top[0], kRead);
  if (method_ == PoolingParameter_PoolMethod_MAX && top.size() > 1) {
    uses->AddData(*top[1], kRead);
  }
  if (propagate_down[0]) uses->AddDiff(*bottom[0], kOverwrite);
  return true;
}

INSTANTIATE_CLASS(PoolingLayer);

// Its engines (layers/cudnn/, layers/dnnl/) are chosen by layer_engine.hpp.
REGISTER_LAYER_CLASS(Pooling);

}  // namespace caffe
