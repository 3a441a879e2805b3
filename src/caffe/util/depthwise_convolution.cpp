#include "caffe/util/depthwise_convolution.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace caffe {

namespace {

// One column tap of the kernel: input column = output column x stride + offset, inside the input
// for the outputs [first, last).
struct ColumnTap {
  int offset, first, last;
};

// The kernel's column taps, computed once per call, so that the loops below touch only values
// inside the input and need no bounds test per value.
std::vector<ColumnTap> ColumnTaps(const DepthwiseGeometry& g) {
  std::vector<ColumnTap> taps;
  for (int kx = 0; kx < g.kernel_w; ++kx) {
    ColumnTap tap;
    tap.offset = kx * g.dilation_w - g.pad_w;
    tap.first = tap.offset >= 0 ? 0 : (-tap.offset + g.stride_w - 1) / g.stride_w;
    const int reach = g.width - 1 - tap.offset;  // the largest output x stride inside the input
    tap.last = reach < 0 ? 0 : std::min(g.out_width, reach / g.stride_w + 1);
    tap.first = std::min(tap.first, tap.last);
    taps.push_back(tap);
  }
  return taps;
}

// What every pass needs: the planes' sizes and the kernel's column taps.
struct Planes {
  explicit Planes(const DepthwiseGeometry& g)
      : outputs(g.channels * g.multiplier),
        taps(g.kernel_h * g.kernel_w),
        in(static_cast<size_t>(g.height) * g.width),
        out(static_cast<size_t>(g.out_height) * g.out_width),
        columns(ColumnTaps(g)) {}
  int outputs, taps;
  size_t in, out;  // values per input and output plane
  std::vector<ColumnTap> columns;
};

// Calls visit(output row offset, input row offset, tap, column tap) for every tap of the kernel
// and output row where the tap's input row is inside the input.
template <typename Visit>
void ForEachTap(const DepthwiseGeometry& g, const Planes& planes, Visit visit) {
  for (int oy = 0; oy < g.out_height; ++oy) {
    for (int ky = 0; ky < g.kernel_h; ++ky) {
      const int iy = oy * g.stride_h - g.pad_h + ky * g.dilation_h;
      if (iy < 0 || iy >= g.height) continue;
      for (int kx = 0; kx < g.kernel_w; ++kx) {
        visit(static_cast<size_t>(oy) * g.out_width, static_cast<size_t>(iy) * g.width,
              ky * g.kernel_w + kx, planes.columns[kx]);
      }
    }
  }
}

// y[i] += a * x[i * stride] for i in [first, last); stride 1 apart, so that it vectorizes.
template <typename Dtype>
inline void AddScaledRow(int first, int last, int stride, Dtype a, const Dtype* x, Dtype* y) {
  if (stride == 1) {
    for (int i = first; i < last; ++i) y[i] += a * x[i];
  } else {
    for (int i = first; i < last; ++i) y[i] += a * x[i * stride];
  }
}

// x[i * stride] += a * y[i] for i in [first, last).
template <typename Dtype>
inline void ScatterScaledRow(int first, int last, int stride, Dtype a, const Dtype* y, Dtype* x) {
  if (stride == 1) {
    for (int i = first; i < last; ++i) x[i] += a * y[i];
  } else {
    for (int i = first; i < last; ++i) x[i * stride] += a * y[i];
  }
}

// The sum of y[i] * x[i * stride] for i in [first, last).
template <typename Dtype>
inline Dtype DotRow(int first, int last, int stride, const Dtype* y, const Dtype* x) {
  Dtype sum = 0;
  if (stride == 1) {
    for (int i = first; i < last; ++i) sum += y[i] * x[i];
  } else {
    for (int i = first; i < last; ++i) sum += y[i] * x[i * stride];
  }
  return sum;
}

}  // namespace

template <typename Dtype>
void DepthwiseForward(const DepthwiseGeometry& g, const Dtype* x, const Dtype* w,
                      const Dtype* bias, Dtype* y) {
  const Planes planes(g);
#pragma omp parallel for collapse(2) schedule(static)
  for (int n = 0; n < g.num; ++n) {
    for (int o = 0; o < planes.outputs; ++o) {
      const Dtype* in = x + (static_cast<size_t>(n) * g.channels + o / g.multiplier) * planes.in;
      const Dtype* filter = w + static_cast<size_t>(o) * planes.taps;
      Dtype* out = y + (static_cast<size_t>(n) * planes.outputs + o) * planes.out;
      std::fill(out, out + planes.out, bias ? bias[o] : Dtype(0));
      ForEachTap(g, planes, [&](size_t out_row, size_t in_row, int tap, const ColumnTap& c) {
        AddScaledRow(c.first, c.last, g.stride_w, filter[tap], in + in_row + c.offset,
                     out + out_row);
      });
    }
  }
}

template <typename Dtype>
void DepthwiseBackwardData(const DepthwiseGeometry& g, const Dtype* dy, const Dtype* w,
                           Dtype* dx) {
  const Planes planes(g);
  // One task per input plane, with all the outputs that read it: no two tasks write one value.
#pragma omp parallel for collapse(2) schedule(static)
  for (int n = 0; n < g.num; ++n) {
    for (int c = 0; c < g.channels; ++c) {
      Dtype* in_diff = dx + (static_cast<size_t>(n) * g.channels + c) * planes.in;
      std::fill(in_diff, in_diff + planes.in, Dtype(0));
      for (int o = c * g.multiplier; o < (c + 1) * g.multiplier; ++o) {
        const Dtype* filter = w + static_cast<size_t>(o) * planes.taps;
        const Dtype* out_diff = dy + (static_cast<size_t>(n) * planes.outputs + o) * planes.out;
        ForEachTap(g, planes, [&](size_t out_row, size_t in_row, int tap, const ColumnTap& col) {
          ScatterScaledRow(col.first, col.last, g.stride_w, filter[tap], out_diff + out_row,
                           in_diff + in_row + col.offset);
        });
      }
    }
  }
}

template <typename Dtype>
void DepthwiseBackwardWeights(const DepthwiseGeometry& g, const Dtype* dy, const Dtype* x,
                              Dtype* dw) {
  const Planes planes(g);
  // One task per filter, summing over the images: no two tasks write one weight.
#pragma omp parallel for schedule(static)
  for (int o = 0; o < planes.outputs; ++o) {
    Dtype* filter_diff = dw + static_cast<size_t>(o) * planes.taps;
    for (int n = 0; n < g.num; ++n) {
      const Dtype* in = x + (static_cast<size_t>(n) * g.channels + o / g.multiplier) * planes.in;
      const Dtype* out_diff = dy + (static_cast<size_t>(n) * planes.outputs + o) * planes.out;
      ForEachTap(g, planes, [&](size_t out_row, size_t in_row, int tap, const ColumnTap& c) {
        filter_diff[tap] +=
            DotRow(c.first, c.last, g.stride_w, out_diff + out_row, in + in_row + c.offset);
      });
    }
  }
}

#define INSTANTIATE_DEPTHWISE(Dtype)                                                           \
  template void DepthwiseForward<Dtype>(const DepthwiseGeometry&, const Dtype*, const Dtype*, \
                                        const Dtype*, Dtype*);                                 \
  template void DepthwiseBackwardData<Dtype>(const DepthwiseGeometry&, const Dtype*,          \
                                             const Dtype*, Dtype*);                            \
  template void DepthwiseBackwardWeights<Dtype>(const DepthwiseGeometry&, const Dtype*,       \
                                                const Dtype*, Dtype*);
INSTANTIATE_DEPTHWISE(float)
INSTANTIATE_DEPTHWISE(double)
#undef INSTANTIATE_DEPTHWISE

}  // namespace caffe
