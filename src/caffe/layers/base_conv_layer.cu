// The GPU half of BaseConvolutionLayer's im2col + GEMM machinery. Legend as in
// base_conv_layer.hpp: N images, C_out output-side channels, G group, S output positions per
// image, K column rows per group. Each image is turned into columns (K * G x S) by im2col_gpu and
// multiplied per group with cuBLAS, as BVLC does; a 1x1 convolution multiplies the image itself.
// Images whose columns would exceed max_image_column_values() are done in tiles of output lines
// (the same tiles as the CPU path), the GEMMs then reading and writing sub-blocks of the
// output through leading dimensions.
#include <algorithm>
#include <vector>

#include "caffe/kernels/im2col.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/layers/base_conv_layer.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void AddChannelBiasKernel(const int n, const int channels, const int spatial,
                                     const Dtype* bias, Dtype* data) {
  CUDA_KERNEL_LOOP(index, n) { data[index] += bias[(index / spatial) % channels]; }
}

// One block per channel: its threads sum strided shares of the channel's N * S values, then
// reduce in shared memory (a fixed order, so the result is deterministic).
constexpr int kChannelSumThreads = 256;

template <typename Dtype>
__global__ void AccumulateChannelSumsKernel(const int num, const int channels, const int spatial,
                                            const Dtype* data, Dtype* sums) {
  __shared__ Dtype partial[kChannelSumThreads];
  const int channel = blockIdx.x;
  const long values = static_cast<long>(num) * spatial;
  Dtype sum = 0;
  for (long i = threadIdx.x; i < values; i += blockDim.x) {
    const long image = i / spatial;
    sum += data[(image * channels + channel) * spatial + i % spatial];
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int width = blockDim.x / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) partial[threadIdx.x] += partial[threadIdx.x + width];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[channel] += partial[0];
}

}  // namespace

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::AddChannelBiasGpu(Dtype* data, int num, int channels, int spatial,
                                                    const Dtype* bias) {
  const int n = num * channels * spatial;
  if (n <= 0) return;
  AddChannelBiasKernel<Dtype>
      <<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(n, channels, spatial, bias, data);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::AccumulateChannelSumsGpu(const Dtype* data, int num, int channels,
                                                           int spatial, Dtype* sums) {
  if (channels <= 0 || num <= 0 || spatial <= 0) return;
  AccumulateChannelSumsKernel<Dtype>
      <<<channels, kChannelSumThreads>>>(num, channels, spatial, data, sums);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
Dtype* BaseConvolutionLayer<Dtype>::GpuColumnBuffer(int columns) {
  // Reshape shapes it, so that LMS plans it; memory comes here, on first use.
  CHECK_EQ(static_cast<long>(gpu_col_buffer_.count()),
           static_cast<long>(kernel_dim_) * group_ * columns)
      << "the GPU column buffer is shaped in Reshape";
  return gpu_col_buffer_.mutable_gpu_data();
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::Im2ColGpu(const Dtype* im, Dtype* col) {
  if (!force_nd_im2col_ && num_spatial_axes_ == 2) {
    im2col_gpu(im, conv_in_channels_, conv_input_shape_[1], conv_input_shape_[2], kernel_shape_[0],
               kernel_shape_[1], pad_[0], pad_[1], stride_[0], stride_[1], dilation_[0],
               dilation_[1], col);
  } else {
    im2col_nd_gpu(im, num_spatial_axes_, conv_input_shape_.data(), col_shape_.data(),
                  kernel_shape_.data(), pad_.data(), stride_.data(), dilation_.data(), col);
  }
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::Col2ImGpu(const Dtype* col, Dtype* im) {
  if (!force_nd_im2col_ && num_spatial_axes_ == 2) {
    col2im_gpu(col, conv_in_channels_, conv_input_shape_[1], conv_input_shape_[2], kernel_shape_[0],
               kernel_shape_[1], pad_[0], pad_[1], stride_[0], stride_[1], dilation_[0],
               dilation_[1], im);
  } else {
    col2im_nd_gpu(col, num_spatial_axes_, conv_input_shape_.data(), col_shape_.data(),
                  kernel_shape_.data(), pad_.data(), stride_.data(), dilation_.data(), im);
  }
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::ImageToOutputGpu(const Dtype* im, int num, const Dtype* weights,
                                                   const Dtype* bias, Dtype* out) {
  if (num <= 0) return;
  if (tile_lines_ > 0) {
    ImageToOutputTiledGpu(im, num, weights, bias, out);
    return;
  }
  const int spatial = conv_out_spatial_dim_;
  const int group_rows = conv_out_channels_ / group_;
  Dtype* col_buffer = is_1x1_ ? nullptr : GpuColumnBuffer(spatial);
  for (int n = 0; n < num; ++n) {
    const Dtype* im_image = im + static_cast<long>(n) * conv_in_dim_;
    const Dtype* col = im_image;  // a 1x1 convolution's columns are the image
    if (!is_1x1_) {
      Im2ColGpu(im_image, col_buffer);
      col = col_buffer;
    }
    Dtype* out_image = out + static_cast<long>(n) * conv_out_dim_;
    for (int g = 0; g < group_; ++g) {
      caffe_gpu_gemm<Dtype>(CblasNoTrans, CblasNoTrans, group_rows, spatial, kernel_dim_, Dtype(1),
                            weights + g * weight_offset_,
                            col + static_cast<long>(g) * kernel_dim_ * spatial, Dtype(0),
                            out_image + static_cast<long>(g) * group_rows * spatial);
    }
  }
  if (bias) AddChannelBiasGpu(out, num, conv_out_channels_, spatial, bias);
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::BackwardGemmGpu(const Dtype* out_diff, const Dtype* im, int num,
                                                  const Dtype* weights, Dtype* weight_diff,
                                                  Dtype* im_diff) {
  if (num <= 0 || (!weight_diff && !im_diff)) return;
  if (tile_lines_ > 0) {
    BackwardGemmTiledGpu(out_diff, im, num, weights, weight_diff, im_diff);
    return;
  }
  const int spatial = conv_out_spatial_dim_;
  const int group_rows = conv_out_channels_ / group_;
  Dtype* col_buffer = is_1x1_ ? nullptr : GpuColumnBuffer(spatial);
  for (int n = 0; n < num; ++n) {
    const Dtype* diff_image = out_diff + static_cast<long>(n) * conv_out_dim_;
    if (weight_diff) {
      // weight_diff (C_out / G x K per group) += out_diff * columns^T.
      const Dtype* im_image = im + static_cast<long>(n) * conv_in_dim_;
      const Dtype* col = im_image;
      if (!is_1x1_) {
        Im2ColGpu(im_image, col_buffer);
        col = col_buffer;
      }
      for (int g = 0; g < group_; ++g) {
        caffe_gpu_gemm<Dtype>(CblasNoTrans, CblasTrans, group_rows, kernel_dim_, spatial, Dtype(1),
                              diff_image + static_cast<long>(g) * group_rows * spatial,
                              col + static_cast<long>(g) * kernel_dim_ * spatial, Dtype(1),
                              weight_diff + g * weight_offset_);
      }
    }
    if (im_diff) {
      // columns = weights^T * out_diff, then col2im; a 1x1 image takes the product directly.
      Dtype* im_image = im_diff + static_cast<long>(n) * conv_in_dim_;
      Dtype* col = is_1x1_ ? im_image : col_buffer;
      for (int g = 0; g < group_; ++g) {
        caffe_gpu_gemm<Dtype>(CblasTrans, CblasNoTrans, kernel_dim_, spatial, group_rows, Dtype(1),
                              weights + g * weight_offset_,
                              diff_image + static_cast<long>(g) * group_rows * spatial, Dtype(0),
                              col + static_cast<long>(g) * kernel_dim_ * spatial);
      }
      if (!is_1x1_) Col2ImGpu(col_buffer, im_image);
    }
  }
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::ImageToOutputTiledGpu(const Dtype* im, int num,
                                                        const Dtype* weights, const Dtype* bias,
                                                        Dtype* out) {
  const int spatial = conv_out_spatial_dim_;
  const int group_rows = conv_out_channels_ / group_;
  Dtype* col = GpuColumnBuffer(tile_lines_ * line_width_);
  for (int n = 0; n < num; ++n) {
    const Dtype* im_image = im + static_cast<long>(n) * conv_in_dim_;
    Dtype* out_image = out + static_cast<long>(n) * conv_out_dim_;
    for (int line = 0; line < num_lines_; line += tile_lines_) {
      const int line_end = std::min(num_lines_, line + tile_lines_);
      const int columns = (line_end - line) * line_width_;
      im2col_nd_lines_gpu(im_image, num_spatial_axes_, conv_input_shape_.data(), col_shape_.data(),
                          kernel_shape_.data(), pad_.data(), stride_.data(), dilation_.data(), line,
                          line_end, col);
      // The tile's columns of the output: rows `spatial` apart.
      for (int g = 0; g < group_; ++g) {
        caffe_gpu_gemm_ld<Dtype>(CblasNoTrans, CblasNoTrans, group_rows, columns, kernel_dim_,
                                 Dtype(1), weights + g * weight_offset_, kernel_dim_,
                                 col + static_cast<long>(g) * kernel_dim_ * columns, columns,
                                 Dtype(0),
                                 out_image + static_cast<long>(g) * group_rows * spatial +
                                     static_cast<long>(line) * line_width_,
                                 spatial);
      }
    }
  }
  if (bias) AddChannelBiasGpu(out, num, conv_out_channels_, spatial, bias);
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::BackwardGemmTiledGpu(const Dtype* out_diff, const Dtype* im,
                                                       int num, const Dtype* weights,
                                                       Dtype* weight_diff, Dtype* im_diff) {
  const int spatial = conv_out_spatial_dim_;
  const int group_rows = conv_out_channels_ / group_;
  Dtype* col = GpuColumnBuffer(tile_lines_ * line_width_);
  for (int n = 0; n < num; ++n) {
    const Dtype* diff_image = out_diff + static_cast<long>(n) * conv_out_dim_;
    Dtype* im_image = im_diff ? im_diff + static_cast<long>(n) * conv_in_dim_ : nullptr;
    if (im_image) caffe_gpu_set(conv_in_dim_, Dtype(0), im_image);  // the tiles add into it
    for (int line = 0; line < num_lines_; line += tile_lines_) {
      const int line_end = std::min(num_lines_, line + tile_lines_);
      const int columns = (line_end - line) * line_width_;
      const Dtype* diff_tile = diff_image + static_cast<long>(line) * line_width_;
      if (weight_diff) {
        im2col_nd_lines_gpu(im + static_cast<long>(n) * conv_in_dim_, num_spatial_axes_,
                            conv_input_shape_.data(), col_shape_.data(), kernel_shape_.data(),
                            pad_.data(), stride_.data(), dilation_.data(), line, line_end, col);
        for (int g = 0; g < group_; ++g) {
          caffe_gpu_gemm_ld<Dtype>(CblasNoTrans, CblasTrans, group_rows, kernel_dim_, columns,
                                   Dtype(1),
                                   diff_tile + static_cast<long>(g) * group_rows * spatial, spatial,
                                   col + static_cast<long>(g) * kernel_dim_ * columns, columns,
                                   Dtype(1), weight_diff + g * weight_offset_, kernel_dim_);
        }
      }
      if (im_image) {
        for (int g = 0; g < group_; ++g) {
          caffe_gpu_gemm_ld<Dtype>(CblasTrans, CblasNoTrans, kernel_dim_, columns, group_rows,
                                   Dtype(1), weights + g * weight_offset_, kernel_dim_,
                                   diff_tile + static_cast<long>(g) * group_rows * spatial, spatial,
                                   Dtype(0), col + static_cast<long>(g) * kernel_dim_ * columns,
                                   columns);
        }
        col2im_nd_lines_add_gpu(col, num_spatial_axes_, conv_input_shape_.data(), col_shape_.data(),
                                kernel_shape_.data(), pad_.data(), stride_.data(), dilation_.data(),
                                line, line_end, im_image);
      }
    }
  }
}

template void BaseConvolutionLayer<float>::ImageToOutputGpu(const float*, int, const float*,
                                                            const float*, float*);
template void BaseConvolutionLayer<double>::ImageToOutputGpu(const double*, int, const double*,
                                                             const double*, double*);
template void BaseConvolutionLayer<float>::BackwardGemmGpu(const float*, const float*, int,
                                                           const float*, float*, float*);
template void BaseConvolutionLayer<double>::BackwardGemmGpu(const double*, const double*, int,
                                                            const double*, double*, double*);
template void BaseConvolutionLayer<float>::AddChannelBiasGpu(float*, int, int, int, const float*);
template void BaseConvolutionLayer<double>::AddChannelBiasGpu(double*, int, int, int,
                                                              const double*);
template void BaseConvolutionLayer<float>::AccumulateChannelSumsGpu(const float*, int, int, int,
                                                                    float*);
template void BaseConvolutionLayer<double>::AccumulateChannelSumsGpu(const double*, int, int, int,
                                                                     double*);

}  // namespace caffe
