// im2col / col2im: the rearrangement that turns a convolution into one matrix product. im2col
// copies every kernel-sized patch of an image into a column, so that
//   output (C_out x S_out) = weights (C_out x C*K) * columns (C*K x S_out).
// col2im is its adjoint: it sums each column entry back into the image position it came from
// (used for the gradient with respect to the input, and for deconvolution's forward pass).
//
// Legend: C channels; H/W image height/width; K = kernel_h * kernel_w (or the product of all
// kernel dims); S_out output positions (out_h * out_w, or the product of all output dims).
// Column layout (as BVLC): row (c * kernel_h + i) * kernel_w + j, column oh * out_w + ow holds
// image[c][oh * stride_h - pad_h + i * dilation_h][ow * stride_w - pad_w + j * dilation_w], 0 where
// that position falls in the padding. The N-D functions use the same layout with every axis in
// row-major order (last axis fastest).
//
// The optional `col_row_stride` places consecutive column rows that many elements apart instead of
// S_out (0 means S_out); it lets several images share one column matrix, each image owning a band
// of S_out columns, so a whole batch can be multiplied with one GEMM.
#ifndef CAFFE_KERNELS_IM2COL_HPP_
#define CAFFE_KERNELS_IM2COL_HPP_

namespace caffe {

/// The output size along one axis: (input + 2 * pad - (dilation * (kernel - 1) + 1)) / stride + 1.
/// Assumes the dilated kernel fits in the padded input.
inline int ConvOutputSize(int input, int kernel, int pad, int stride, int dilation) {
  const int kernel_extent = dilation * (kernel - 1) + 1;
  return (input + 2 * pad - kernel_extent) / stride + 1;
}

/// 2-D im2col: data_im (channels x height x width) -> data_col (channels*K x out_h*out_w).
template <typename Dtype>
void im2col_cpu(const Dtype* data_im, int channels, int height, int width, int kernel_h,
                int kernel_w, int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h,
                int dilation_w, Dtype* data_col, int col_row_stride = 0);

/// 2-D col2im: overwrites data_im (channels x height x width) with the sum of the column entries
/// that im2col would have copied from each position.
template <typename Dtype>
void col2im_cpu(const Dtype* data_col, int channels, int height, int width, int kernel_h,
                int kernel_w, int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h,
                int dilation_w, Dtype* data_im, int col_row_stride = 0);

/// N-D im2col over `num_spatial_axes` axes. im_shape: (C, spatial dims...) and col_shape:
/// (C*K, output dims...), each num_spatial_axes + 1 entries; kernel_shape, pad, stride and
/// dilation: num_spatial_axes entries each.
template <typename Dtype>
void im2col_nd_cpu(const Dtype* data_im, int num_spatial_axes, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_col, int col_row_stride = 0);

/// N-D col2im, the adjoint of im2col_nd_cpu; overwrites data_im.
template <typename Dtype>
void col2im_nd_cpu(const Dtype* data_col, int num_spatial_axes, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_im, int col_row_stride = 0);

/// im2col_nd_cpu for the output lines [line_begin, line_end) only, where a line is the output's
/// last axis (col_shape's last entry columns): column j of data_col (row stride (line_end -
/// line_begin) * line width) is output column line_begin * line width + j. Lets a huge volume be
/// convolved tile by tile with a bounded column buffer.
template <typename Dtype>
void im2col_nd_lines_cpu(const Dtype* data_im, int num_spatial_axes, const int* im_shape,
                         const int* col_shape, const int* kernel_shape, const int* pad,
                         const int* stride, const int* dilation, int line_begin, int line_end,
                         Dtype* data_col);

/// The adjoint of im2col_nd_lines_cpu: ADDS the tile's column entries into data_im (zero it
/// before the first tile).
template <typename Dtype>
void col2im_nd_lines_add_cpu(const Dtype* data_col, int num_spatial_axes, const int* im_shape,
                             const int* col_shape, const int* kernel_shape, const int* pad,
                             const int* stride, const int* dilation, int line_begin, int line_end,
                             Dtype* data_im);

#ifndef CPU_ONLY
// The same routines on the GPU (im2col.cu), with the same arguments and column layout: data_im
// and data_col are device arrays; the shape arrays of the N-D routines (im_shape, col_shape,
// kernel_shape, pad, stride, dilation) stay HOST arrays, as for the _cpu ones (BVLC's _gpu
// versions took device arrays), and are handed to the kernels by value. The N-D routines serve
// at most kMaxIm2colGpuAxes spatial axes. All run on the default stream, without synchronizing.

constexpr int kMaxIm2colGpuAxes = 10;

template <typename Dtype>
void im2col_gpu(const Dtype* data_im, int channels, int height, int width, int kernel_h,
                int kernel_w, int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h,
                int dilation_w, Dtype* data_col, int col_row_stride = 0);

/// Overwrites data_im, like col2im_cpu.
template <typename Dtype>
void col2im_gpu(const Dtype* data_col, int channels, int height, int width, int kernel_h,
                int kernel_w, int pad_h, int pad_w, int stride_h, int stride_w, int dilation_h,
                int dilation_w, Dtype* data_im, int col_row_stride = 0);

template <typename Dtype>
void im2col_nd_gpu(const Dtype* data_im, int num_spatial_axes, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_col, int col_row_stride = 0);

/// Overwrites data_im, like col2im_nd_cpu.
template <typename Dtype>
void col2im_nd_gpu(const Dtype* data_col, int num_spatial_axes, const int* im_shape,
                   const int* col_shape, const int* kernel_shape, const int* pad, const int* stride,
                   const int* dilation, Dtype* data_im, int col_row_stride = 0);

/// The output lines [line_begin, line_end) only, as im2col_nd_lines_cpu.
template <typename Dtype>
void im2col_nd_lines_gpu(const Dtype* data_im, int num_spatial_axes, const int* im_shape,
                         const int* col_shape, const int* kernel_shape, const int* pad,
                         const int* stride, const int* dilation, int line_begin, int line_end,
                         Dtype* data_col);

/// ADDS the tile's column entries into data_im, as col2im_nd_lines_add_cpu.
template <typename Dtype>
void col2im_nd_lines_add_gpu(const Dtype* data_col, int num_spatial_axes, const int* im_shape,
                             const int* col_shape, const int* kernel_shape, const int* pad,
                             const int* stride, const int* dilation, int line_begin, int line_end,
                             Dtype* data_im);
#endif  // CPU_ONLY

}  // namespace caffe

#endif  // CAFFE_KERNELS_IM2COL_HPP_
