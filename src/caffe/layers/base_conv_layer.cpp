// Legend as in base_conv_layer.hpp: N images, C channels, C_out num_output, G group,
// S output positions per image, K column rows per group.
#include "caffe/layers/base_conv_layer.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "caffe/filler.hpp"
#include "caffe/kernels/bf16_gemm.hpp"
#include "caffe/kernels/im2col.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/util/cpu_threads.hpp"

namespace caffe {

namespace {

// Runs body(i) for i in [0, count), over `threads` OpenMP threads when there are several. With
// one the loop runs outside any OpenMP construct: a GEMM called inside one, even an inactive
// region (if false), is nested to OpenMP OpenBLAS, which then starts a team of new threads for
// each call, racing the idle pool thread that still spins (a 1x1 convolution at batch 1 after
// any threaded layer: 2.7 ms instead of 0.4-0.5).
template <typename Body>
void ForEachChunk(int count, int threads, Body body) {
  if (threads > 1) {
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int i = 0; i < count; ++i) body(i);
  } else {
    for (int i = 0; i < count; ++i) body(i);
  }
}

// caffe_cpu_gemm_ld, with the factors rounded to bf16 where `bf16` (float layers only).
template <typename Dtype>
void Gemm(bool bf16, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K,
          const Dtype* A, int lda, const Dtype* B, int ldb, Dtype beta, Dtype* C, int ldc) {
  caffe_cpu_gemm_ld<Dtype>(trans_a, trans_b, M, N, K, Dtype(1), A, lda, B, ldb, beta, C, ldc);
}

template <>
void Gemm<float>(bool bf16, CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K,
                 const float* A, int lda, const float* B, int ldb, float beta, float* C, int ldc) {
  if (bf16)
    return caffe_cpu_gemm_bf16(trans_a, trans_b, M, N, K, 1.f, A, lda, B, ldb, beta, C, ldc);
  caffe_cpu_gemm_ld<float>(trans_a, trans_b, M, N, K, 1.f, A, lda, B, ldb, beta, C, ldc);
}

// Chunking: images are added to one GEMM until it has at least this many columns. Measured on
// LeNet, CIFAR-10 quick and CaffeNet shapes: layers with 8x8 outputs gain 8-10 % of CPU time at
// 256 columns with one OpenBLAS thread and about a third of wall time with two (fewer, larger
// GEMMs to split); larger targets lose, since the chunk's column buffer then no longer stays in
// the L2 cache between im2col and the GEMM (2048 columns made CIFAR's conv2 twice as slow).
constexpr int kTargetGemmColumns = 256;
// ...and the column buffer of a chunk stays below this many values (4 MB in float).
constexpr long kMaxChunkColumnValues = 1L << 20;
// Chunks run in parallel, one column buffer per thread; threads are not added beyond this many
// column values in all (256 MB in float), as huge images would multiply their buffer.
constexpr long kMaxParallelColumnValues = 1L << 26;

}  // namespace

template <typename Dtype>
long BaseConvolutionLayer<Dtype>::max_image_column_values_ = 1L << 26;

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const ConvolutionParameter& conv_param = this->layer_param_.convolution_param();
  force_nd_im2col_ = conv_param.force_nd_im2col();
  channel_axis_ = bottom[0]->CanonicalAxisIndex(conv_param.axis());
  const int first_spatial_axis = channel_axis_ + 1;
  num_spatial_axes_ = bottom[0]->num_axes() - first_spatial_axis;

  // kernel_size, stride, pad, dilation: given once for every axis, once per axis, or (for the
  // defaulted ones) not at all; the *_h/*_w forms are a 2-D alternative.
  auto per_axis = [&](const google::protobuf::RepeatedField<uint32_t>& values, bool has_h,
                      bool has_w, uint32_t h, uint32_t w, const char* field, const char* name,
                      int default_value, bool required) {
    std::vector<int> result(num_spatial_axes_, default_value);
    if (has_h || has_w) {
      LAYER_CHECK(num_spatial_axes_ == 2)
          << name << "_h and " << name << "_w can only be used for 2-D convolution, but bottom "
          << bottom[0]->shape_string() << " has " << num_spatial_axes_
          << " spatial axes after axis " << channel_axis_;
      LAYER_CHECK_EQ(values.size(), 0)
          << "give either " << field << " or " << name << "_h and " << name << "_w, not both";
      LAYER_CHECK(has_h && has_w) << name << "_h and " << name << "_w must be given together";
      result[0] = static_cast<int>(h);
      result[1] = static_cast<int>(w);
      return result;
    }
    const int given = values.size();
    if (given == 0 && !required) return result;
    LAYER_CHECK(given == 1 || given == num_spatial_axes_)
        << field << " must be given once, or once per spatial axis; it is given " << given
        << " times for " << num_spatial_axes_ << " spatial axes (bottom "
        << bottom[0]->shape_string() << ", axis " << channel_axis_ << ")";
    for (int i = 0; i < num_spatial_axes_; ++i) {
      result[i] = static_cast<int>(values.Get(given == 1 ? 0 : i));
    }
    return result;
  };
  kernel_shape_ = per_axis(conv_param.kernel_size(), conv_param.has_kernel_h(),
                           conv_param.has_kernel_w(), conv_param.kernel_h(), conv_param.kernel_w(),
                           "kernel_size", "kernel", 1, /*required=*/true);
  stride_ = per_axis(conv_param.stride(), conv_param.has_stride_h(), conv_param.has_stride_w(),
                     conv_param.stride_h(), conv_param.stride_w(), "stride", "stride", 1, false);
  pad_ = per_axis(conv_param.pad(), conv_param.has_pad_h(), conv_param.has_pad_w(),
                  conv_param.pad_h(), conv_param.pad_w(), "pad", "pad", 0, false);
  // dilation has no _h/_w form.
  dilation_ = per_axis(conv_param.dilation(), false, false, 0, 0, "dilation", "dilation", 1, false);
  is_1x1_ = true;
  for (int i = 0; i < num_spatial_axes_; ++i) {
    LAYER_CHECK_GT(kernel_shape_[i], 0)
        << "kernel size along spatial axis " << i << " is 0; must be >= 1";
    LAYER_CHECK_GE(stride_[i], 1) << "stride along spatial axis " << i << " is 0; must be >= 1";
    LAYER_CHECK_GE(dilation_[i], 1) << "dilation along spatial axis " << i << " is 0; must be >= 1";
    is_1x1_ = is_1x1_ && kernel_shape_[i] == 1 && stride_[i] == 1 && pad_[i] == 0;
  }

  channels_ = bottom[0]->shape(channel_axis_);
  num_output_ = static_cast<int>(conv_param.num_output());
  LAYER_CHECK_GE(num_output_, 1) << "num_output must be >= 1";
  group_ = static_cast<int>(conv_param.group());
  LAYER_CHECK_GE(group_, 1) << "group must be >= 1";
  LAYER_CHECK_EQ(channels_ % group_, 0)
      << "the " << channels_ << " input channels of bottom " << bottom[0]->shape_string()
      << " must be a multiple of group " << group_;
  LAYER_CHECK_EQ(num_output_ % group_, 0)
      << "num_output " << num_output_ << " must be a multiple of group " << group_;
  if (reverse_dimensions()) {
    conv_out_channels_ = channels_;
    conv_in_channels_ = num_output_;
  } else {
    conv_out_channels_ = num_output_;
    conv_in_channels_ = channels_;
  }

  std::vector<int> weight_shape{conv_out_channels_, conv_in_channels_ / group_};
  weight_shape.insert(weight_shape.end(), kernel_shape_.begin(), kernel_shape_.end());
  bias_term_ = conv_param.bias_term();
  const std::vector<int> bias_shape{num_output_};
  if (!this->blobs_.empty()) {
    // Weights given with the layer (a .caffemodel loaded into the param): check they fit.
    LAYER_CHECK_EQ(static_cast<int>(this->blobs_.size()), 1 + bias_term_)
        << "expected " << (bias_term_ ? "weights and bias" : "weights only")
        << " (bias_term: " << (bias_term_ ? "true" : "false") << "), got " << this->blobs_.size()
        << " parameter blobs";
    LAYER_CHECK(this->blobs_[0]->shape() == weight_shape)
        << "weights have shape " << this->blobs_[0]->shape_string() << "; expected "
        << ShapeString(weight_shape);
    if (bias_term_) {
      LAYER_CHECK(this->blobs_[1]->shape() == bias_shape)
          << "bias has shape " << this->blobs_[1]->shape_string() << "; expected "
          << ShapeString(bias_shape);
    }
    VLOG(1) << "Skipping parameter initialization";
  } else {
    this->blobs_.resize(bias_term_ ? 2 : 1);
    this->blobs_[0] = std::make_shared<Blob<Dtype>>(weight_shape);
    GetFiller<Dtype>(conv_param.weight_filler())->Fill(this->blobs_[0].get());
    if (bias_term_) {
      this->blobs_[1] = std::make_shared<Blob<Dtype>>(bias_shape);
      GetFiller<Dtype>(conv_param.bias_filler())->Fill(this->blobs_[1].get());
    }
  }
  kernel_dim_ = this->blobs_[0]->count(1);
  weight_offset_ = conv_out_channels_ * kernel_dim_ / group_;
  this->param_propagate_down_.resize(this->blobs_.size(), true);
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int first_spatial_axis = channel_axis_ + 1;
  LAYER_CHECK_EQ(bottom[0]->num_axes(), first_spatial_axis + num_spatial_axes_)
      << "bottom " << bottom[0]->shape_string()
      << " changed its number of axes since setup; it may not";
  LAYER_CHECK_EQ(bottom[0]->shape(channel_axis_), channels_)
      << "bottom " << bottom[0]->shape_string() << " has the wrong number of channels on axis "
      << channel_axis_ << " for the weights";
  for (size_t i = 1; i < bottom.size(); ++i) {
    LAYER_CHECK(bottom[i]->shape() == bottom[0]->shape())
        << "all bottoms must have one shape: bottom[0] is " << bottom[0]->shape_string()
        << ", bottom[" << i << "] is " << bottom[i]->shape_string();
  }
  num_ = bottom[0]->count(0, channel_axis_);
  bottom_shape_ = &bottom[0]->shape();
  compute_output_shape();
  std::vector<int> top_shape(bottom[0]->shape().begin(),
                             bottom[0]->shape().begin() + channel_axis_);
  top_shape.push_back(num_output_);
  top_shape.insert(top_shape.end(), output_shape_.begin(), output_shape_.end());
  for (auto* blob : top) blob->Reshape(top_shape);

  const Blob<Dtype>* im_side = reverse_dimensions() ? top[0] : bottom[0];
  const Blob<Dtype>* out_side = reverse_dimensions() ? bottom[0] : top[0];
  conv_out_spatial_dim_ = out_side->count(first_spatial_axis);
  conv_input_shape_.assign(im_side->shape().begin() + channel_axis_, im_side->shape().end());
  col_shape_.assign(1, kernel_dim_ * group_);
  col_shape_.insert(col_shape_.end(), out_side->shape().begin() + first_spatial_axis,
                    out_side->shape().end());
  conv_in_dim_ = im_side->count(channel_axis_);
  conv_out_dim_ = out_side->count(channel_axis_);
  bottom_dim_ = bottom[0]->count(channel_axis_);
  top_dim_ = top[0]->count(channel_axis_);
  out_spatial_dim_ = top[0]->count(first_spatial_axis);

  // An image whose columns would exceed max_image_column_values_ (a large volume: V-Net's first
  // layers need gigabytes) is convolved in tiles of whole output lines.
  const long image_column_values =
      static_cast<long>(kernel_dim_) * group_ * std::max(conv_out_spatial_dim_, 1);
  tile_lines_ = 0;
  if (!is_1x1_ && num_spatial_axes_ >= 1 && image_column_values > max_image_column_values_) {
    line_width_ = col_shape_.back();
    num_lines_ = conv_out_spatial_dim_ / line_width_;
    const long line_values = static_cast<long>(kernel_dim_) * group_ * line_width_;
    tile_lines_ = static_cast<int>(
        std::max(1L, std::min<long>(num_lines_, max_image_column_values_ / line_values)));
  }
  chunk_images_ = tile_lines_ > 0 ? 1 : ChooseChunkImages();
  num_chunks_ = num_ > 0 ? (num_ + chunk_images_ - 1) / chunk_images_ : 0;
  const int columns =
      tile_lines_ > 0 ? tile_lines_ * line_width_ : chunk_images_ * conv_out_spatial_dim_;
  const long col_values = static_cast<long>(kernel_dim_) * group_ * columns;
  threads_ = std::max(
      1, std::min({caffe_max_threads(), num_chunks_,
                   static_cast<int>(kMaxParallelColumnValues / std::max(col_values, 1L))}));
  // Tiny layers stay on one thread: waking the others costs more than the work.
  const long work = static_cast<long>(kernel_dim_) * group_ * conv_out_spatial_dim_ * num_ *
                    std::max(conv_out_channels_ / group_, 1);
  if (work < 64L * kParallelMinElements) threads_ = 1;
  if (chunk_images_ > 1 || !is_1x1_) {
    col_buffer_.Reshape({threads_, kernel_dim_ * group_, columns});
  }
  if (chunk_images_ > 1) out_buffer_.Reshape({threads_, conv_out_channels_, columns});
  // Memory is only taken on first use (by a backward pass that computes the weight gradient).
  weight_diff_t_.Reshape({threads_, this->blobs_[0]->count()});
#ifndef CPU_ONLY
  // The GPU kernels' columns, of one image or one tile, shaped now (memory still comes on first
  // use) so that LMS plans them from the first step.
  const int gpu_columns =
      tile_lines_ > 0 ? tile_lines_ * line_width_ : (is_1x1_ ? 0 : conv_out_spatial_dim_);
  if (gpu_columns > 0) gpu_col_buffer_.Reshape({kernel_dim_ * group_, gpu_columns});
#endif
}

template <typename Dtype>
int BaseConvolutionLayer<Dtype>::ChooseChunkImages() const {
  const int spatial = std::max(conv_out_spatial_dim_, 1);
  if (num_ <= 1 || spatial >= kTargetGemmColumns) return 1;
  int chunk = std::min(num_, (kTargetGemmColumns + spatial - 1) / spatial);
  const long rows = static_cast<long>(kernel_dim_) * group_;
  while (chunk > 1 && rows * chunk * spatial > kMaxChunkColumnValues) --chunk;
  // At least one chunk per thread, then equal chunks: a 100-image batch in chunks of 32 would
  // leave a small last GEMM.
  const int threads = std::min(caffe_max_threads(), num_);
  const int chunks = std::max((num_ + chunk - 1) / chunk, threads);
  return (num_ + chunks - 1) / chunks;
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::Im2Col(const Dtype* im, Dtype* col, int col_row_stride) {
  if (is_1x1_) {  // the columns are the image's channels, row by row
    for (int c = 0; c < conv_in_channels_; ++c) {
      caffe_copy(conv_out_spatial_dim_, im + c * conv_out_spatial_dim_, col + c * col_row_stride);
    }
  } else if (!force_nd_im2col_ && num_spatial_axes_ == 2) {
    im2col_cpu(im, conv_in_channels_, conv_input_shape_[1], conv_input_shape_[2], kernel_shape_[0],
               kernel_shape_[1], pad_[0], pad_[1], stride_[0], stride_[1], dilation_[0],
               dilation_[1], col, col_row_stride);
  } else {
    im2col_nd_cpu(im, num_spatial_axes_, conv_input_shape_.data(), col_shape_.data(),
                  kernel_shape_.data(), pad_.data(), stride_.data(), dilation_.data(), col,
                  col_row_stride);
  }
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::Col2Im(const Dtype* col, int col_row_stride, Dtype* im) {
  if (is_1x1_) {
    for (int c = 0; c < conv_in_channels_; ++c) {
      caffe_copy(conv_out_spatial_dim_, col + c * col_row_stride, im + c * conv_out_spatial_dim_);
    }
  } else if (!force_nd_im2col_ && num_spatial_axes_ == 2) {
    col2im_cpu(col, conv_in_channels_, conv_input_shape_[1], conv_input_shape_[2], kernel_shape_[0],
               kernel_shape_[1], pad_[0], pad_[1], stride_[0], stride_[1], dilation_[0],
               dilation_[1], im, col_row_stride);
  } else {
    col2im_nd_cpu(col, num_spatial_axes_, conv_input_shape_.data(), col_shape_.data(),
                  kernel_shape_.data(), pad_.data(), stride_.data(), dilation_.data(), im,
                  col_row_stride);
  }
}

template <typename Dtype>
const Dtype* BaseConvolutionLayer<Dtype>::Columns(const Dtype* im, int count, Dtype* col) {
  if (is_1x1_ && count == 1) return im;
  const int columns = count * conv_out_spatial_dim_;
  for (int n = 0; n < count; ++n) {
    Im2Col(im + n * conv_in_dim_, col + n * conv_out_spatial_dim_, columns);
  }
  return col;
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::ImageToOutput(const Dtype* im, int num, const Dtype* weights,
                                                const Dtype* bias, Dtype* out) {
  if (tile_lines_ > 0) {
    ImageToOutputTiled(im, num, weights, bias, out);
    return;
  }
  const int spatial = conv_out_spatial_dim_;
  const int group_rows = conv_out_channels_ / group_;
  const int chunks = (num + chunk_images_ - 1) / chunk_images_;
  // Buffers are taken before the parallel loop: SyncedMemory is not thread-safe.
  Dtype* col_base = col_buffer_.count() ? col_buffer_.mutable_cpu_data() : nullptr;
  Dtype* product_base = out_buffer_.count() ? out_buffer_.mutable_cpu_data() : nullptr;
  const long col_stride = col_buffer_.count() / threads_;
  const long product_stride = out_buffer_.count() / threads_;
  ForEachChunk(chunks, threads_, [&](int chunk) {
    const int thread = caffe_thread_index();
    const int n0 = chunk * chunk_images_;
    const int count = std::min(chunk_images_, num - n0);
    const int columns = count * spatial;
    const Dtype* col =
        Columns(im + n0 * conv_in_dim_, count, col_base ? col_base + thread * col_stride : nullptr);
    Dtype* out_chunk = out + n0 * conv_out_dim_;
    Dtype* product = count == 1 ? out_chunk : product_base + thread * product_stride;
    for (int g = 0; g < group_; ++g) {
      Gemm<Dtype>(bf16_gemm_, CblasNoTrans, CblasNoTrans, group_rows, columns, kernel_dim_,
                  weights + g * weight_offset_, kernel_dim_, col + g * kernel_dim_ * columns,
                  columns, Dtype(0), product + g * group_rows * columns, columns);
    }
    if (count == 1) {
      if (bias) AddChannelBias(out_chunk, 1, conv_out_channels_, spatial, bias);
      return;
    }
    // (C_out, count * S) -> count x (C_out, S), adding the bias on the way.
    for (int n = 0; n < count; ++n) {
      for (int c = 0; c < conv_out_channels_; ++c) {
        const Dtype* src = product + c * columns + n * spatial;
        Dtype* dst = out_chunk + n * conv_out_dim_ + c * spatial;
        if (bias) {
          const Dtype b = bias[c];
          for (int s = 0; s < spatial; ++s) dst[s] = src[s] + b;
        } else {
          caffe_copy(spatial, src, dst);
        }
      }
    }
  });
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::BackwardGemm(const Dtype* out_diff, const Dtype* im, int num,
                                               const Dtype* weights, Dtype* weight_diff,
                                               Dtype* im_diff) {
  if (tile_lines_ > 0) {
    BackwardGemmTiled(out_diff, im, num, weights, weight_diff, im_diff);
    return;
  }
  const int spatial = conv_out_spatial_dim_;
  const int group_rows = conv_out_channels_ / group_;
  const int chunks = (num + chunk_images_ - 1) / chunk_images_;
  const int weight_count = this->blobs_[0]->count();
  Dtype* col_base = col_buffer_.count() ? col_buffer_.mutable_cpu_data() : nullptr;
  Dtype* gathered_base = out_buffer_.count() ? out_buffer_.mutable_cpu_data() : nullptr;
  const long col_stride = col_buffer_.count() / threads_;
  const long gathered_stride = out_buffer_.count() / threads_;
  // Each thread accumulates its chunks' weight gradient, transposed, in its own buffer.
  Dtype* weight_diff_t = weight_diff ? weight_diff_t_.mutable_cpu_data() : nullptr;
  std::vector<char> thread_used(threads_, 0);
  ForEachChunk(chunks, threads_, [&](int chunk) {
    const int thread = caffe_thread_index();
    const int n0 = chunk * chunk_images_;
    const int count = std::min(chunk_images_, num - n0);
    const int columns = count * spatial;
    Dtype* col_buffer = col_base ? col_base + thread * col_stride : nullptr;
    const Dtype* diff_chunk = out_diff + n0 * conv_out_dim_;
    const Dtype* gathered = diff_chunk;
    if (count > 1) {  // count x (C_out, S) -> (C_out, count * S)
      Dtype* buffer = gathered_base + thread * gathered_stride;
      for (int n = 0; n < count; ++n) {
        for (int c = 0; c < conv_out_channels_; ++c) {
          caffe_copy(spatial, diff_chunk + n * conv_out_dim_ + c * spatial,
                     buffer + c * columns + n * spatial);
        }
      }
      gathered = buffer;
    }
    if (weight_diff) {
      // Accumulates the transposed gradient (K x C_out / G per group), col * out_diff^T: OpenBLAS
      // runs this shape 10-40 % faster than out_diff * col^T for these short-and-wide operands.
      const Dtype* col = Columns(im + n0 * conv_in_dim_, count, col_buffer);
      Dtype* accumulator = weight_diff_t + thread * weight_count;
      const Dtype beta = thread_used[thread] ? Dtype(1) : Dtype(0);
      thread_used[thread] = 1;
      for (int g = 0; g < group_; ++g) {
        Gemm<Dtype>(bf16_gemm_, CblasNoTrans, CblasTrans, kernel_dim_, group_rows, columns,
                    col + g * kernel_dim_ * columns, columns, gathered + g * group_rows * columns,
                    columns, beta, accumulator + g * weight_offset_, group_rows);
      }
    }
    if (im_diff) {
      Dtype* im_chunk = im_diff + n0 * conv_in_dim_;
      // A single 1x1 image's columns are the image: the GEMM can write its diff directly.
      const bool direct = is_1x1_ && count == 1;
      Dtype* col = direct ? im_chunk : col_buffer;
      for (int g = 0; g < group_; ++g) {
        Gemm<Dtype>(bf16_gemm_, CblasTrans, CblasNoTrans, kernel_dim_, columns, group_rows,
                    weights + g * weight_offset_, kernel_dim_, gathered + g * group_rows * columns,
                    columns, Dtype(0), col + g * kernel_dim_ * columns, columns);
      }
      if (!direct) {
        for (int n = 0; n < count; ++n) {
          Col2Im(col + n * spatial, columns, im_chunk + n * conv_in_dim_);
        }
      }
    }
  });
  if (weight_diff) AddTransposedWeightDiffs(weight_diff_t, thread_used, weight_diff);
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::TileColumns(const Dtype* im, int line_begin, int line_end,
                                              Dtype* col) const {
  im2col_nd_lines_cpu(im, num_spatial_axes_, conv_input_shape_.data(), col_shape_.data(),
                      kernel_shape_.data(), pad_.data(), stride_.data(), dilation_.data(),
                      line_begin, line_end, col);
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::ImageToOutputTiled(const Dtype* im, int num, const Dtype* weights,
                                                     const Dtype* bias, Dtype* out) {
  const int spatial = conv_out_spatial_dim_;
  const int group_rows = conv_out_channels_ / group_;
  Dtype* col_base = col_buffer_.mutable_cpu_data();
  const long col_stride = col_buffer_.count() / threads_;
  ForEachChunk(num, threads_, [&](int n) {
    Dtype* col = col_base + caffe_thread_index() * col_stride;
    Dtype* out_image = out + static_cast<long>(n) * conv_out_dim_;
    for (int line = 0; line < num_lines_; line += tile_lines_) {
      const int line_end = std::min(num_lines_, line + tile_lines_);
      const int columns = (line_end - line) * line_width_;
      TileColumns(im + static_cast<long>(n) * conv_in_dim_, line, line_end, col);
      // The tile's columns of the output: rows `spatial` apart.
      for (int g = 0; g < group_; ++g) {
        Gemm<Dtype>(bf16_gemm_, CblasNoTrans, CblasNoTrans, group_rows, columns, kernel_dim_,
                    weights + g * weight_offset_, kernel_dim_,
                    col + static_cast<long>(g) * kernel_dim_ * columns, columns, Dtype(0),
                    out_image + static_cast<long>(g) * group_rows * spatial +
                        static_cast<long>(line) * line_width_,
                    spatial);
      }
    }
    if (bias) AddChannelBias(out_image, 1, conv_out_channels_, spatial, bias);
  });
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::BackwardGemmTiled(const Dtype* out_diff, const Dtype* im, int num,
                                                    const Dtype* weights, Dtype* weight_diff,
                                                    Dtype* im_diff) {
  const int spatial = conv_out_spatial_dim_;
  const int group_rows = conv_out_channels_ / group_;
  const int weight_count = this->blobs_[0]->count();
  Dtype* col_base = col_buffer_.mutable_cpu_data();
  const long col_stride = col_buffer_.count() / threads_;
  Dtype* weight_diff_t = weight_diff ? weight_diff_t_.mutable_cpu_data() : nullptr;
  std::vector<char> thread_used(threads_, 0);
  ForEachChunk(num, threads_, [&](int n) {
    const int thread = caffe_thread_index();
    Dtype* col = col_base + thread * col_stride;
    const Dtype* diff_image = out_diff + static_cast<long>(n) * conv_out_dim_;
    Dtype* im_image = im_diff ? im_diff + static_cast<long>(n) * conv_in_dim_ : nullptr;
    if (im_image) caffe_set(conv_in_dim_, Dtype(0), im_image);
    for (int line = 0; line < num_lines_; line += tile_lines_) {
      const int line_end = std::min(num_lines_, line + tile_lines_);
      const int columns = (line_end - line) * line_width_;
      const Dtype* diff_tile = diff_image + static_cast<long>(line) * line_width_;
      if (weight_diff) {
        TileColumns(im + static_cast<long>(n) * conv_in_dim_, line, line_end, col);
        Dtype* accumulator = weight_diff_t + thread * weight_count;
        const Dtype beta = thread_used[thread] ? Dtype(1) : Dtype(0);
        thread_used[thread] = 1;
        for (int g = 0; g < group_; ++g) {
          Gemm<Dtype>(bf16_gemm_, CblasNoTrans, CblasTrans, kernel_dim_, group_rows, columns,
                      col + static_cast<long>(g) * kernel_dim_ * columns, columns,
                      diff_tile + static_cast<long>(g) * group_rows * spatial, spatial, beta,
                      accumulator + g * weight_offset_, group_rows);
        }
      }
      if (im_image) {
        for (int g = 0; g < group_; ++g) {
          Gemm<Dtype>(bf16_gemm_, CblasTrans, CblasNoTrans, kernel_dim_, columns, group_rows,
                      weights + g * weight_offset_, kernel_dim_,
                      diff_tile + static_cast<long>(g) * group_rows * spatial, spatial, Dtype(0),
                      col + static_cast<long>(g) * kernel_dim_ * columns, columns);
        }
        col2im_nd_lines_add_cpu(col, num_spatial_axes_, conv_input_shape_.data(), col_shape_.data(),
                                kernel_shape_.data(), pad_.data(), stride_.data(), dilation_.data(),
                                line, line_end, im_image);
      }
    }
  });
  if (weight_diff) AddTransposedWeightDiffs(weight_diff_t, thread_used, weight_diff);
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::AddTransposedWeightDiffs(const Dtype* weight_diff_t,
                                                           const std::vector<char>& thread_used,
                                                           Dtype* weight_diff) const {
  const int group_rows = conv_out_channels_ / group_;
  const int weight_count = this->blobs_[0]->count();
  for (int thread = 0; thread < threads_; ++thread) {
    if (!thread_used[thread]) continue;
    const Dtype* accumulator = weight_diff_t + thread * weight_count;
    for (int g = 0; g < group_; ++g) {
      const Dtype* from = accumulator + g * weight_offset_;
      Dtype* to = weight_diff + g * weight_offset_;
      for (int m = 0; m < group_rows; ++m) {
        for (int k = 0; k < kernel_dim_; ++k) to[m * kernel_dim_ + k] += from[k * group_rows + m];
      }
    }
  }
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::AddChannelBias(Dtype* data, int num, int channels, int spatial,
                                                 const Dtype* bias) {
  for (int n = 0; n < num; ++n) {
    for (int c = 0; c < channels; ++c) {
      Dtype* row = data + (n * channels + c) * spatial;
      const Dtype b = bias[c];
      for (int s = 0; s < spatial; ++s) row[s] += b;
    }
  }
}

template <typename Dtype>
void BaseConvolutionLayer<Dtype>::AccumulateChannelSums(const Dtype* data, int num, int channels,
                                                        int spatial, Dtype* sums) {
  for (int n = 0; n < num; ++n) {
    for (int c = 0; c < channels; ++c) {
      const Dtype* row = data + (n * channels + c) * spatial;
      Dtype sum = 0;
      for (int s = 0; s < spatial; ++s) sum += row[s];
      sums[c] += sum;
    }
  }
}

template <typename Dtype>
bool BaseConvolutionLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                                   const Blobs<Dtype>& top,
                                                   const vector<bool>& propagate_down,
                                                   MemoryUses* uses) const {
  Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  // Scratch of the kernels that run, each element written before it is read in the pass: the GPU
  // kernels' column buffer (shaped in Reshape), or the CPU kernels' buffers, whose transposed
  // weight gradient accumulates over the images.
#ifndef CPU_ONLY
  if (Caffe::mode() == Caffe::GPU) {
    uses->AddData(gpu_col_buffer_, kScratch);
    return true;
  }
#endif
  uses->AddData(col_buffer_, kScratch);
  uses->AddData(out_buffer_, kScratch);
  if (pass == Pass::kBackward) uses->AddData(weight_diff_t_, kReadWrite);
  return true;
}

INSTANTIATE_CLASS(BaseConvolutionLayer);

}  // namespace caffe
