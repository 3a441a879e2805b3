// im2col / col2im on the GPU (the _gpu half of im2col.hpp; legend and column layout there).
// im2col: one thread per (channel, output position) writes that position's column entries, one
// per kernel tap. col2im: one thread per image value gathers the column entries that im2col would
// have copied from it, in the CPU's order (kernel taps ascending), so no atomics are needed and
// the result is deterministic. The N-D routines get their shapes as host arrays, packed into a
// small struct passed to the kernel by value (no device copy, no synchronization).
#include <algorithm>

#include "caffe/common.hpp"
#include "caffe/kernels/im2col.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void Im2ColKernel(const int n, const Dtype* im, const int height, const int width,
                             const int kernel_h, const int kernel_w, const int pad_h,
                             const int pad_w, const int stride_h, const int stride_w,
                             const int dilation_h, const int dilation_w, const int out_h,
                             const int out_w, const int row_stride, Dtype* col) {
  CUDA_KERNEL_LOOP(index, n) {
    const int ow = index % out_w;
    const int oh = (index / out_w) % out_h;
    const int channel = index / (out_w * out_h);
    const Dtype* im_channel = im + static_cast<long>(channel) * height * width;
    Dtype* entry =
        col + static_cast<long>(channel) * kernel_h * kernel_w * row_stride + oh * out_w + ow;
    const int h_origin = oh * stride_h - pad_h;
    const int w_origin = ow * stride_w - pad_w;
    for (int i = 0; i < kernel_h; ++i) {
      const int h = h_origin + i * dilation_h;
      const bool row_inside = h >= 0 && h < height;
      for (int j = 0; j < kernel_w; ++j, entry += row_stride) {
        const int w = w_origin + j * dilation_w;
        *entry = row_inside && w >= 0 && w < width ? im_channel[h * width + w] : Dtype(0);
      }
    }
  }
}

template <typename Dtype>
__global__ void Col2ImKernel(const int n, const Dtype* col, const int height, const int width,
                             const int kernel_h, const int kernel_w, const int pad_h,
                             const int pad_w, const int stride_h, const int stride_w,
                             const int dilation_h, const int dilation_w, const int out_h,
                             const int out_w, const int row_stride, Dtype* im) {
  CUDA_KERNEL_LOOP(index, n) {
    const int w = index % width;
    const int h = (index / width) % height;
    const int channel = index / (width * height);
    const Dtype* col_channel = col + static_cast<long>(channel) * kernel_h * kernel_w * row_stride;
    Dtype sum = 0;
    for (int i = 0; i < kernel_h; ++i) {
      // Tap i reads h from output row oh when oh * stride_h - pad_h + i * dilation_h == h.
      const int h_span = h + pad_h - i * dilation_h;
      if (h_span < 0 || h_span % stride_h != 0 || h_span / stride_h >= out_h) continue;
      const int oh = h_span / stride_h;
      for (int j = 0; j < kernel_w; ++j) {
        const int w_span = w + pad_w - j * dilation_w;
        if (w_span < 0 || w_span % stride_w != 0 || w_span / stride_w >= out_w) continue;
        sum += col_channel[static_cast<long>(i * kernel_w + j) * row_stride + oh * out_w +
                           w_span / stride_w];
      }
    }
    im[index] = sum;
  }
}

// The geometry of an N-D im2col, by value. Spatial entries only: the channel entries of the
// host's im_shape / col_shape are `channels` and `rows`.
struct NdGeometry {
  int num_axes;
  int channels;     // im_shape[0]
  int rows;         // col_shape[0]: channels * kernel_size
  int kernel_size;  // product of the kernel dims
  int im_size;      // product of the image's spatial dims
  int im_shape[kMaxIm2colGpuAxes];
  int col_shape[kMaxIm2colGpuAxes];
  int kernel[kMaxIm2colGpuAxes];
  int pad[kMaxIm2colGpuAxes];
  int stride[kMaxIm2colGpuAxes];
  int dilation[kMaxIm2colGpuAxes];
  // The columns held: output positions [position_begin, position_begin + positions), row
  // stride row_stride.
  int position_begin;
  int positions;
  int row_stride;
};

NdGeometry MakeNdGeometry(int num_axes, const int* im_shape, const int* col_shape,
                          const int* kernel_shape, const int* pad, const int* stride,
                          const int* dilation) {
  CAFFE_CHECK(num_axes >= 0 && num_axes <= kMaxIm2colGpuAxes)
      << "N-D im2col on the GPU supports 0 to " << kMaxIm2colGpuAxes << " spatial axes, got "
      << num_axes;
  NdGeometry geometry;
  geometry.num_axes = num_axes;
  geometry.channels = im_shape[0];
  geometry.rows = col_shape[0];
  geometry.kernel_size = 1;
  geometry.im_size = 1;
  for (int i = 0; i < num_axes; ++i) {
    geometry.im_shape[i] = im_shape[i + 1];
    geometry.col_shape[i] = col_shape[i + 1];
    geometry.kernel[i] = kernel_shape[i];
    geometry.pad[i] = pad[i];
    geometry.stride[i] = stride[i];
    geometry.dilation[i] = dilation[i];
    geometry.kernel_size *= kernel_shape[i];
    geometry.im_size *= im_shape[i + 1];
  }
  geometry.position_begin = 0;
  geometry.positions = 0;
  geometry.row_stride = 0;
  return geometry;
}

// The number of output positions (product of the output's spatial dims).
int OutputPositions(int num_axes, const int* col_shape) {
  int positions = 1;
  for (int i = 0; i < num_axes; ++i) positions *= col_shape[i + 1];
  return positions;
}

template <typename Dtype>
__global__ void Im2ColNdKernel(const int n, const Dtype* im, const NdGeometry g, Dtype* col) {
  CUDA_KERNEL_LOOP(index, n) {
    const int local = index % g.positions;
    const int channel = index / g.positions;
    // The window origin of this output position along each axis.
    int origin[kMaxIm2colGpuAxes];
    int tap[kMaxIm2colGpuAxes];
    for (int i = g.num_axes - 1, rest = g.position_begin + local; i >= 0; --i) {
      origin[i] = (rest % g.col_shape[i]) * g.stride[i] - g.pad[i];
      rest /= g.col_shape[i];
      tap[i] = 0;
    }
    const Dtype* im_channel = im + static_cast<long>(channel) * g.im_size;
    Dtype* entry = col + static_cast<long>(channel) * g.kernel_size * g.row_stride + local;
    for (int t = 0; t < g.kernel_size; ++t, entry += g.row_stride) {
      bool inside = true;
      int offset = 0;
      for (int i = 0; i < g.num_axes && inside; ++i) {
        const int x = origin[i] + tap[i] * g.dilation[i];
        inside = x >= 0 && x < g.im_shape[i];
        offset = offset * g.im_shape[i] + x;
      }
      *entry = inside ? im_channel[offset] : Dtype(0);
      for (int i = g.num_axes - 1; i >= 0; --i) {  // next tap, row-major
        if (++tap[i] < g.kernel[i]) break;
        tap[i] = 0;
      }
    }
  }
}

// One thread per image value; `accumulate` adds to the image instead of overwriting it.
template <typename Dtype>
__global__ void Col2ImNdKernel(const int n, const Dtype* col, const NdGeometry g,
                               const bool accumulate, Dtype* im) {
  CUDA_KERNEL_LOOP(index, n) {
    const int channel = index / g.im_size;
    int position[kMaxIm2colGpuAxes];
    int tap[kMaxIm2colGpuAxes];
    for (int i = g.num_axes - 1, rest = index % g.im_size; i >= 0; --i) {
      position[i] = rest % g.im_shape[i];
      rest /= g.im_shape[i];
      tap[i] = 0;
    }
    Dtype sum = 0;
    const int position_end = g.position_begin + g.positions;
    // Channels beyond the column rows (none for a convolution) receive nothing, as on the CPU.
    const int taps = (channel + 1) * g.kernel_size <= g.rows ? g.kernel_size : 0;
    const Dtype* col_channel = col + static_cast<long>(channel) * g.kernel_size * g.row_stride;
    for (int t = 0; t < taps; ++t) {
      // Tap t reads this value from output o when o * stride - pad + tap * dilation == position
      // on every axis.
      bool hit = true;
      int output = 0;
      for (int i = 0; i < g.num_axes && hit; ++i) {
        const int span = position[i] + g.pad[i] - tap[i] * g.dilation[i];
        hit = span >= 0 && span % g.stride[i] == 0 && span / g.stride[i] < g.col_shape[i];
        output = output * g.col_shape[i] + span / g.stride[i];
      }
      if (hit && output >= g.position_begin && output < position_end) {
        sum += col_channel[static_cast<long>(t) * g.row_stride + (output - g.position_begin)];
      }
      for (int i = g.num_axes - 1; i >= 0; --i) {
        if (++tap[i] < g.kernel[i]) break;
        tap[i] = 0;
      }
    }
    im[index] = accumulate ? im[index] + sum : sum;
  }
}

template <typename Dtype>
void LaunchIm2ColNd(const Dtype* data_im, const NdGeometry& geometry, Dtype* data_col) {
  const int n = geometry.rows / geometry.kernel_size * geometry.positions;
  if (n <= 0) return;
  Im2ColNdKernel<Dtype>
      <<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(n, data_im, geometry, data_col);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void LaunchCol2ImNd(const Dtype* data_col, const NdGeometry& geometry, bool accumulate,
                    Dtype* data_im) {
  const int n = geometry.channels * geometry.im_size;
  if (n <= 0) return;
  Col2ImNdKernel<Dtype>
      <<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(n, data_col, geometry, accumulate, data_im);
  CUDA_POST_KERNEL_CHECK;
}

// The geometry of output lines [line_begin, line_end) only (a tile of the image's columns).
NdGeometry MakeLinesGeometry(int num_axes, const int* im_shape, const int* col_shape,
                             const int* kernel_shape, const int* pad, const int* stride,
                             const int* dilation, int line_begin, int line_end) {
  NdGeometry geometry =
      MakeNdGeometry(num_axes, im_shape, col_shape, kernel_shape, pad, stride, dilation);
  const int line_width = num_axes > 0 ? col_shape[num_axes] : 1;
  geometry.position_begin = line_begin * line_width;
  geometry.positions = (line_end - line_begin) * line_width;
  geometry.row_stride = geometry.positions;
  return geometry;
}

}  // namespace

template <typename Dtype>
void im2col_gpu(const Dtype* data_im, int channels, int height, int width, int kernel_h,
                int kernel_w, int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h,
                int dilation_w, Dtype* data_col, int col_row_stride) {
  const int out_h = ConvOutputSize(height, kernel_h, pad_h, stride_h, dilation_h);
  const int out_w = ConvOutputSize(width, kernel_w, pad_w, stride_w, dilation_w);
  if (out_h <= 0 || out_w <= 0 || channels <= 0) return;
  const int row_stride = col_row_stride > 0 ? col_row_stride : out_h * out_w;
  const int n = channels * out_h * out_w;
  Im2ColKernel<Dtype><<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(
      n, data_im, height, width, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w, dilation_h,
      dilation_w, out_h, out_w, row_stride, data_col);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void col2im_gpu(const Dtype* data_col, int channels, int height, int width, int kernel_h,
                int kernel_w, int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h,
                int dilation_w, Dtype* data_im, int col_row_stride) {
  const int out_h = ConvOutputSize(height, kernel_h, pad_h, stride_h, dilation_h);
  const int out_w = ConvOutputSize(width, kernel_w, pad_w, stride_w, dilation_w);
  const int n = channels * height * width;
  if (n <= 0) return;
  // No output positions: every value gathers nothing, so the image is zeroed (as on the CPU).
  const int row_stride =
      col_row_stride > 0 ? col_row_stride : std::max(out_h, 0) * std::max(out_w, 0);
  Col2ImKernel<Dtype><<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(
      n, data_col, height, width, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w, dilation_h,
      dilation_w, out_h, out_w, row_stride, data_im);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void im2col_nd_gpu(const Dtype* data_im, int num_spatial_axes, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_col, int col_row_stride) {
  NdGeometry geometry =
      MakeNdGeometry(num_spatial_axes, im_shape, col_shape, kernel_shape, pad, stride, dilation);
  geometry.positions = OutputPositions(num_spatial_axes, col_shape);
  geometry.row_stride = col_row_stride > 0 ? col_row_stride : geometry.positions;
  LaunchIm2ColNd(data_im, geometry, data_col);
}

template <typename Dtype>
void col2im_nd_gpu(const Dtype* data_col, int num_spatial_axes, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_im, int col_row_stride) {
  NdGeometry geometry =
      MakeNdGeometry(num_spatial_axes, im_shape, col_shape, kernel_shape, pad, stride, dilation);
  geometry.positions = OutputPositions(num_spatial_axes, col_shape);
  geometry.row_stride = col_row_stride > 0 ? col_row_stride : geometry.positions;
  LaunchCol2ImNd(data_col, geometry, /*accumulate=*/false, data_im);
}

template <typename Dtype>
void im2col_nd_lines_gpu(const Dtype* data_im, int num_spatial_axes, const int* im_shape,
                         const int* col_shape, const int* kernel_shape, const int* pad,
                         const int* stride, const int* dilation, int line_begin, int line_end,
                         Dtype* data_col) {
  const NdGeometry geometry = MakeLinesGeometry(num_spatial_axes, im_shape, col_shape, kernel_shape,
                                                pad, stride, dilation, line_begin, line_end);
  LaunchIm2ColNd(data_im, geometry, data_col);
}

template <typename Dtype>
void col2im_nd_lines_add_gpu(const Dtype* data_col, int num_spatial_axes, const int* im_shape,
                             const int* col_shape, const int* kernel_shape, const int* pad,
                             const int* stride, const int* dilation, int line_begin, int line_end,
                             Dtype* data_im) {
  const NdGeometry geometry = MakeLinesGeometry(num_spatial_axes, im_shape, col_shape, kernel_shape,
                                                pad, stride, dilation, line_begin, line_end);
  if (geometry.positions <= 0) return;
  LaunchCol2ImNd(data_col, geometry, /*accumulate=*/true, data_im);
}

#define INSTANTIATE_IM2COL_GPU(Dtype)                                                             \
  template void im2col_gpu<Dtype>(const Dtype*, int, int, int, int, int, int, int, int, int, int, \
                                  int, Dtype*, int);                                              \
  template void col2im_gpu<Dtype>(const Dtype*, int, int, int, int, int, int, int, int, int, int, \
                                  int, Dtype*, int);                                              \
  template void im2col_nd_gpu<Dtype>(const Dtype*, int, const int*, const int*, const int*,       \
                                     const int*, const int*, const int*, Dtype*, int);            \
  template void col2im_nd_gpu<Dtype>(const Dtype*, int, const int*, const int*, const int*,       \
                                     const int*, const int*, const int*, Dtype*, int);            \
  template void im2col_nd_lines_gpu<Dtype>(const Dtype*, int, const int*, const int*, const int*, \
                                           const int*, const int*, const int*, int, int, Dtype*); \
  template void col2im_nd_lines_add_gpu<Dtype>(const Dtype*, int, const int*, const int*,         \
                                               const int*, const int*, const int*, const int*,    \
                                               int, int, Dtype*)
INSTANTIATE_IM2COL_GPU(float);
INSTANTIATE_IM2COL_GPU(double);

}  // namespace caffe
