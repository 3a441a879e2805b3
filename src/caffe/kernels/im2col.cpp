// im2col / col2im on the CPU. Instead of testing every output position against the image bounds
// (BVLC's loop), each kernel tap first works out the range of output positions whose input lies
// inside the image; inside that range rows are copied (memcpy-like for stride 1), outside they are
// zero. Legend as in im2col.hpp.
#include "caffe/kernels/im2col.hpp"

#include <algorithm>
#include <vector>

#include "caffe/common.hpp"

namespace caffe {

namespace {

// ceil(a / b) for b > 0 and any sign of a.
inline int CeilDiv(int a, int b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// The output positions [lo, hi) along one axis whose input position o * stride + offset lies in
// [0, input); offset = tap * dilation - pad.
struct ValidRange {
  int lo, hi;
};
inline ValidRange ValidOutputs(int offset, int stride, int input, int output) {
  ValidRange range;
  range.lo = std::min(std::max(CeilDiv(-offset, stride), 0), output);
  range.hi = std::max(std::min(CeilDiv(input - offset, stride), output), range.lo);
  return range;
}

// One row segment of `count` outputs: im2col copies im[src + o * stride] to col[o] (zeros outside
// [valid.lo, valid.hi)); col2im adds col[o] back into im[src + o * stride] for the valid o.
// `src` is the image index of output 0 (it may be negative; only valid outputs are dereferenced).
template <typename Dtype, bool kIm2Col>
inline void TransferSegment(Dtype* im, int src, int stride, ValidRange valid, int count,
                            Dtype* col) {
  if (kIm2Col) {
    std::fill(col, col + valid.lo, Dtype(0));
    if (stride == 1) {
      std::copy(im + src + valid.lo, im + src + valid.hi, col + valid.lo);
    } else {
      for (int o = valid.lo; o < valid.hi; ++o) col[o] = im[src + o * stride];
    }
    std::fill(col + valid.hi, col + count, Dtype(0));
  } else {
    if (stride == 1) {
      // The image and the columns never overlap; saying so lets the loop vectorize unchecked.
      Dtype* __restrict__ dst = im + src;
      const Dtype* __restrict__ from = col;
      for (int o = valid.lo; o < valid.hi; ++o) dst[o] += from[o];
    } else {
      for (int o = valid.lo; o < valid.hi; ++o) im[src + o * stride] += col[o];
    }
  }
}

template <typename Dtype, bool kIm2Col>
void Im2Col2d(Dtype* im, int channels, int height, int width, int kernel_h, int kernel_w, int pad_h,
              int pad_w, int stride_h, int stride_w, int dilation_h, int dilation_w, Dtype* col,
              int col_row_stride) {
  const int out_h = ConvOutputSize(height, kernel_h, pad_h, stride_h, dilation_h);
  const int out_w = ConvOutputSize(width, kernel_w, pad_w, stride_w, dilation_w);
  const int channel_size = height * width;
  if (!kIm2Col) std::fill(im, im + channels * channel_size, Dtype(0));
  if (out_h <= 0 || out_w <= 0) return;
  const int out_size = out_h * out_w;
  const int row_stride = col_row_stride > 0 ? col_row_stride : out_size;
  // "Same"-width stride-1 convolutions (the common 3x3 pad 1, 5x5 pad 2): see below.
  const bool same_width_stride_1 = stride_h == 1 && stride_w == 1 && out_w == width;
  Dtype* col_row = col;
  for (int c = 0; c < channels; ++c) {
    Dtype* im_channel = im + c * channel_size;
    for (int i = 0; i < kernel_h; ++i) {
      const int offset_h = i * dilation_h - pad_h;
      const ValidRange rows = ValidOutputs(offset_h, stride_h, height, out_h);
      for (int j = 0; j < kernel_w; ++j, col_row += row_stride) {
        const int offset_w = j * dilation_w - pad_w;
        const ValidRange cols = ValidOutputs(offset_w, stride_w, width, out_w);
        if (kIm2Col) {
          std::fill(col_row, col_row + rows.lo * out_w, Dtype(0));
          std::fill(col_row + rows.hi * out_w, col_row + out_size, Dtype(0));
          if (same_width_stride_1 && rows.lo < rows.hi) {
            // Output rows are image rows shifted by (offset_h, offset_w): one block copy, then
            // zeros where a row's shifted window leaves the image (it read a neighbouring row).
            const int begin = rows.lo * out_w + cols.lo;
            const int end = (rows.hi - 1) * out_w + cols.hi;
            const int shift = offset_h * width + offset_w;
            std::copy(im_channel + begin + shift, im_channel + end + shift, col_row + begin);
            for (int oh = rows.lo; oh < rows.hi; ++oh) {
              Dtype* line = col_row + oh * out_w;
              std::fill(line, line + cols.lo, Dtype(0));
              std::fill(line + cols.hi, line + out_w, Dtype(0));
            }
            continue;
          }
        }
        for (int oh = rows.lo; oh < rows.hi; ++oh) {
          const int src = (oh * stride_h + offset_h) * width + offset_w;
          TransferSegment<Dtype, kIm2Col>(im_channel, src, stride_w, cols, out_w,
                                          col_row + oh * out_w);
        }
      }
    }
  }
}

// Output lines [line_begin, line_end) only (a line: the last output axis); line_end < 0 means all.
// The col2im direction zeroes the image first unless `accumulate`.
template <typename Dtype, bool kIm2Col>
void Im2ColNd(Dtype* im, int num_axes, const int* im_shape, const int* col_shape,
              const int* kernel_shape, const int* pad, const int* stride, const int* dilation,
              Dtype* col, int col_row_stride, int line_begin = 0, int line_end = -1,
              bool accumulate = false) {
  int out_size = 1, kernel_size = 1, im_spatial = 1;
  for (int i = 0; i < num_axes; ++i) {
    out_size *= col_shape[i + 1];
    kernel_size *= kernel_shape[i];
    im_spatial *= im_shape[i + 1];
  }
  if (!kIm2Col && !accumulate) std::fill(im, im + im_shape[0] * im_spatial, Dtype(0));
  if (out_size <= 0) return;
  const int line_width = num_axes > 0 ? col_shape[num_axes] : 1;
  if (line_end < 0) line_end = out_size / line_width;
  const int tile_size = (line_end - line_begin) * line_width;
  const int row_stride = col_row_stride > 0 ? col_row_stride : tile_size;
  const int rows = col_shape[0];
  if (num_axes == 0) {  // no spatial axes: one column, one entry per channel
    for (int r = 0; r < rows; ++r) {
      if (kIm2Col) {
        col[r * row_stride] = im[r];
      } else {
        im[r] += col[r * row_stride];
      }
    }
    return;
  }
  const int last = num_axes - 1;
  const int out_w = col_shape[num_axes];
  const int in_w = im_shape[num_axes];
  std::vector<int> offset(num_axes), position(num_axes), first_position(num_axes, 0);
  // The output position of line_begin's first element, axis by axis.
  for (int i = last - 1, rest = line_begin; i >= 0; --i) {
    first_position[i] = rest % col_shape[i + 1];
    rest /= col_shape[i + 1];
  }
  for (int r = 0; r < rows; ++r) {
    int tap = r % kernel_size;
    const int channel = r / kernel_size;
    for (int i = last; i >= 0; --i) {
      offset[i] = (tap % kernel_shape[i]) * dilation[i] - pad[i];
      tap /= kernel_shape[i];
    }
    const ValidRange cols = ValidOutputs(offset[last], stride[last], in_w, out_w);
    Dtype* im_channel = im + channel * im_spatial;
    Dtype* col_row = col + static_cast<long>(r) * row_stride;
    position = first_position;
    for (int t = 0; t < line_end - line_begin; ++t) {
      // The image offset of this output line's first element, unless it lies in the padding.
      bool inside = true;
      int src = 0;
      for (int i = 0; i < last; ++i) {
        const int in = position[i] * stride[i] + offset[i];
        if (in < 0 || in >= im_shape[i + 1]) {
          inside = false;
          break;
        }
        src = src * im_shape[i + 1] + in;
      }
      Dtype* col_line = col_row + t * out_w;
      if (inside) {
        TransferSegment<Dtype, kIm2Col>(im_channel, src * in_w + offset[last], stride[last], cols,
                                        out_w, col_line);
      } else if (kIm2Col) {
        std::fill(col_line, col_line + out_w, Dtype(0));
      }
      for (int i = last - 1; i >= 0; --i) {  // next output line, row-major
        if (++position[i] < col_shape[i + 1]) break;
        position[i] = 0;
      }
    }
  }
}

}  // namespace

template <typename Dtype>
void im2col_cpu(const Dtype* data_im, int channels, int height, int width, int kernel_h,
                int kernel_w, int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h,
                int dilation_w, Dtype* data_col, int col_row_stride) {
  Im2Col2d<Dtype, true>(const_cast<Dtype*>(data_im), channels, height, width, kernel_h, kernel_w,
                        pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w, data_col,
                        col_row_stride);
}

template <typename Dtype>
void col2im_cpu(const Dtype* data_col, int channels, int height, int width, int kernel_h,
                int kernel_w, int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h,
                int dilation_w, Dtype* data_im, int col_row_stride) {
  Im2Col2d<Dtype, false>(data_im, channels, height, width, kernel_h, kernel_w, pad_h, pad_w,
                         stride_h, stride_w, dilation_h, dilation_w, const_cast<Dtype*>(data_col),
                         col_row_stride);
}

template <typename Dtype>
void im2col_nd_cpu(const Dtype* data_im, int num_spatial_axes, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_col, int col_row_stride) {
  Im2ColNd<Dtype, true>(const_cast<Dtype*>(data_im), num_spatial_axes, im_shape, col_shape,
                        kernel_shape, pad, stride, dilation, data_col, col_row_stride);
}

template <typename Dtype>
void col2im_nd_cpu(const Dtype* data_col, int num_spatial_axes, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_im, int col_row_stride) {
  Im2ColNd<Dtype, false>(data_im, num_spatial_axes, im_shape, col_shape, kernel_shape, pad, stride,
                         dilation, const_cast<Dtype*>(data_col), col_row_stride);
}

template <typename Dtype>
void im2col_nd_lines_cpu(const Dtype* data_im, int num_spatial_axes, const int* im_shape,
                         const int* col_shape, const int* kernel_shape, const int* pad,
                         const int* stride, const int* dilation, int line_begin, int line_end,
                         Dtype* data_col) {
  Im2ColNd<Dtype, true>(const_cast<Dtype*>(data_im), num_spatial_axes, im_shape, col_shape,
                        kernel_shape, pad, stride, dilation, data_col, 0, line_begin, line_end);
}

template <typename Dtype>
void col2im_nd_lines_add_cpu(const Dtype* data_col, int num_spatial_axes, const int* im_shape,
                             const int* col_shape, const int* kernel_shape, const int* pad,
                             const int* stride, const int* dilation, int line_begin, int line_end,
                             Dtype* data_im) {
  Im2ColNd<Dtype, false>(data_im, num_spatial_axes, im_shape, col_shape, kernel_shape, pad, stride,
                         dilation, const_cast<Dtype*>(data_col), 0, line_begin, line_end, true);
}

#define INSTANTIATE_IM2COL(Dtype)                                                                 \
  template void im2col_cpu<Dtype>(const Dtype*, int, int, int, int, int, int, int, int, int, int, \
                                  int, Dtype*, int);                                              \
  template void col2im_cpu<Dtype>(const Dtype*, int, int, int, int, int, int, int, int, int, int, \
                                  int, Dtype*, int);                                              \
  template void im2col_nd_cpu<Dtype>(const Dtype*, int, const int*, const int*, const int*,       \
                                     const int*, const int*, const int*, Dtype*, int);            \
  template void col2im_nd_cpu<Dtype>(const Dtype*, int, const int*, const int*, const int*,       \
                                     const int*, const int*, const int*, Dtype*, int);            \
  template void im2col_nd_lines_cpu<Dtype>(const Dtype*, int, const int*, const int*, const int*, \
                                           const int*, const int*, const int*, int, int, Dtype*); \
  template void col2im_nd_lines_add_cpu<Dtype>(const Dtype*, int, const int*, const int*,         \
                                               const int*, const int*, const int*, const int*,    \
                                               int, int, Dtype*)
INSTANTIATE_IM2COL(float);
INSTANTIATE_IM2COL(double);

}  // namespace caffe
