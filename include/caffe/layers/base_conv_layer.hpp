// The base of Convolution (and, later, Deconvolution): parses ConvolutionParameter the way BVLC
// does, owns the weights and bias, and provides the im2col + GEMM machinery in terms of the
// convolution's two sides:
//   the image side  ("im"):  conv_in_channels_ x conv_input_shape_ per image, read through im2col;
//   the output side ("out"): conv_out_channels_ x conv_out_spatial_dim_ per image, a GEMM result.
// Convolution maps bottom (im) -> top (out); Deconvolution (reverse_dimensions() true) maps
// bottom (out) -> top (im) with the same weights, so both reuse ImageToOutput / BackwardGemm.
//
// Legend: N images (product of the axes before `axis`); C input channels; C_out num_output;
// G group; S output positions per image (product of the output's spatial dims); K kernel_dim_ =
// conv_in_channels_ / G * product of kernel dims (the column rows one group's filters read).
//
// Speed: BVLC runs one GEMM per image per group, one image after another. Here chunks of images
// run in parallel, one per thread, each with its own column buffer (and weight-gradient
// accumulator, summed at the end of backward). Images with few output positions (S below
// 256, e.g. 8x8) are processed in chunks of chunk_images_: their column matrices are laid side by
// side (K*G x chunk*S) so one GEMM per group covers the chunk, and the (C_out x chunk*S) result is
// scattered back into per-image (C_out x S) blocks with the bias added in the same pass. Larger
// images keep one image per GEMM (then no scatter is needed: the GEMM writes the top directly),
// since a bigger column buffer falls out of the L2 cache. A 1x1 stride-1 unpadded kernel reads a
// single image directly instead of building columns.
//
// Deconvolution maps onto the helpers as: forward = BackwardGemm(bottom, nullptr, ..., top) plus
// AddChannelBias on top; bottom diff = ImageToOutput(top_diff, ..., nullptr, bottom_diff); weight
// diff = BackwardGemm(bottom_data, top_diff, ..., weight_diff, nullptr); bias diff =
// AccumulateChannelSums(top_diff).
#ifndef CAFFE_LAYERS_BASE_CONV_LAYER_HPP_
#define CAFFE_LAYERS_BASE_CONV_LAYER_HPP_

#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"
#include "caffe/proto/caffe.pb.h"

namespace caffe {

/// Shared setup and GEMM helpers of convolution-like layers. bottom[i]: (N..., C, spatial...)
/// with 0 or more spatial axes after `axis`; all bottoms share one shape; top[i] has the shape
/// the subclass computes. blobs_[0]: weights (conv_out_channels, conv_in_channels / G, kernel...);
/// blobs_[1] (if bias_term): bias (C_out).
template <typename Dtype>
class BaseConvolutionLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  // Forward writes all of each top, Backward all of each propagated bottom diff (LMS).
  bool WritesWholeOutputs() const override { return true; }
  /// Backward (every engine) reads the bottom's data only for the filters' gradient, and never
  /// the top's.
  bool BackwardReadsTopData(int) const override { return false; }
  bool BackwardReadsBottomData(int) const override { return this->param_propagate_down(0); }
  /// bf16 where asked: the GEMMs round their factors to bf16 (depthwise convolutions, computed
  /// directly, stay fp32).
  bool HasBf16Math() const override { return true; }
  /// LMS: the bottoms, tops and learned blobs, plus the column, output and transposed-gradient
  /// buffers.
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;
  /// Reads kernel/stride/pad/dilation/group/axis and creates (or checks) the weights and bias.
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Checks the bottoms against the layer's channels and sizes the tops and buffers.
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

  int MinBottomBlobs() const override { return 1; }
  int MinTopBlobs() const override { return 1; }
  bool EqualNumBottomTopBlobs() const override { return true; }

  /// The most column values one image may take before it is convolved in tiles of output lines
  /// (default 64 M values, 256 MB in float). Tests lower it to exercise the tiled path.
  static void set_max_image_column_values(long values) { max_image_column_values_ = values; }
  static long max_image_column_values() { return max_image_column_values_; }

 protected:
  /// True for layers whose bottom is the GEMM's output side (Deconvolution).
  virtual bool reverse_dimensions() = 0;
  /// Fills output_shape_ (the top's spatial dims) from the bottom shape and the parameters.
  virtual void compute_output_shape() = 0;

  /// out = weights * im2col(im) (+ bias per output channel when bias is not null), for `num`
  /// images stored conv_in_dim_ (im) and conv_out_dim_ (out) apart.
  void ImageToOutput(const Dtype* im, int num, const Dtype* weights, const Dtype* bias, Dtype* out);
  /// The adjoint products for `num` images: weight_diff += out_diff * im2col(im)^T when
  /// weight_diff is not null (im is then read), and im_diff = col2im(weights^T * out_diff)
  /// (overwritten) when im_diff is not null. Deconvolution's forward is the im_diff part alone.
  void BackwardGemm(const Dtype* out_diff, const Dtype* im, int num, const Dtype* weights,
                    Dtype* weight_diff, Dtype* im_diff);
  /// data[n][c][s] += bias[c] for n < num, c < channels, s < spatial.
  static void AddChannelBias(Dtype* data, int num, int channels, int spatial, const Dtype* bias);
  /// sums[c] += sum over n, s of data[n][c][s].
  static void AccumulateChannelSums(const Dtype* data, int num, int channels, int spatial,
                                    Dtype* sums);
#ifndef CPU_ONLY
  // The same four on device arrays (base_conv_layer.cu), with the same semantics: one image per
  // GEMM per group (as BVLC) through one column buffer, gpu_col_buffer_, instead of the CPU's
  // chunks and per-thread buffers; a 1x1 convolution multiplies the image itself; images whose
  // columns exceed max_image_column_values() go in tiles of output lines, as on the CPU.
  void ImageToOutputGpu(const Dtype* im, int num, const Dtype* weights, const Dtype* bias,
                        Dtype* out);
  void BackwardGemmGpu(const Dtype* out_diff, const Dtype* im, int num, const Dtype* weights,
                       Dtype* weight_diff, Dtype* im_diff);
  static void AddChannelBiasGpu(Dtype* data, int num, int channels, int spatial, const Dtype* bias);
  static void AccumulateChannelSumsGpu(const Dtype* data, int num, int channels, int spatial,
                                       Dtype* sums);
#endif

  // Whether this pass's GEMMs are in bf16: the subclass sets it from forward_math() or
  // backward_math() as each pass starts (a Deconvolution's forward runs BackwardGemm, so the
  // GEMM functions cannot tell the pass themselves).
  bool bf16_gemm_ = false;

  // From the parameters (LayerSetUp). One entry per spatial axis.
  std::vector<int> kernel_shape_, stride_, pad_, dilation_;
  int num_spatial_axes_ = 0;
  int channel_axis_ = 1;
  int channels_ = 0;    // C, channels of bottom
  int num_output_ = 0;  // C_out
  int group_ = 1;       // G
  bool bias_term_ = true;
  bool is_1x1_ = false;  // 1x1 kernel, stride 1, no padding: columns are the image itself
  bool force_nd_im2col_ = false;

  // From the bottom shape (Reshape).
  int num_ = 0;                    // N
  std::vector<int> output_shape_;  // the top's spatial dims, set by compute_output_shape
  const std::vector<int>* bottom_shape_ = nullptr;  // valid during Reshape
  int bottom_dim_ = 0;                              // values per image in bottom
  int top_dim_ = 0;                                 // values per image in top
  int out_spatial_dim_ = 0;                         // the top's spatial positions per image

 private:
  // Columns for `count` images of `im` (conv_in_dim_ apart) written to `col`, or `im` itself for
  // a single image of a 1x1 convolution.
  const Dtype* Columns(const Dtype* im, int count, Dtype* col);
  void Im2Col(const Dtype* im, Dtype* col, int col_row_stride);
  void Col2Im(const Dtype* col, int col_row_stride, Dtype* im);
  // Images per GEMM for the current shapes.
  int ChooseChunkImages() const;
  // The tiled paths: one image at a time, output lines [line, line + tile_lines_) per GEMM.
  void ImageToOutputTiled(const Dtype* im, int num, const Dtype* weights, const Dtype* bias,
                          Dtype* out);
  void BackwardGemmTiled(const Dtype* out_diff, const Dtype* im, int num, const Dtype* weights,
                         Dtype* weight_diff, Dtype* im_diff);
  void TileColumns(const Dtype* im, int line_begin, int line_end, Dtype* col) const;
  // weight_diff += the transposes of the used threads' accumulators.
  void AddTransposedWeightDiffs(const Dtype* weight_diff_t, const std::vector<char>& thread_used,
                                Dtype* weight_diff) const;

#ifndef CPU_ONLY
  // gpu_col_buffer_ on the device; Reshape shaped it (K * G, columns).
  Dtype* GpuColumnBuffer(int columns);
  // One image's columns / its col2im (overwriting `im`), on the device.
  void Im2ColGpu(const Dtype* im, Dtype* col);
  void Col2ImGpu(const Dtype* col, Dtype* im);
  void ImageToOutputTiledGpu(const Dtype* im, int num, const Dtype* weights, const Dtype* bias,
                             Dtype* out);
  void BackwardGemmTiledGpu(const Dtype* out_diff, const Dtype* im, int num, const Dtype* weights,
                            Dtype* weight_diff, Dtype* im_diff);
#endif

  static long max_image_column_values_;

  int conv_in_channels_ = 0;           // channels on the image side
  int conv_out_channels_ = 0;          // channels on the output side
  int conv_out_spatial_dim_ = 0;       // S
  int conv_in_dim_ = 0;                // values per image on the image side
  int conv_out_dim_ = 0;               // values per image on the output side
  int kernel_dim_ = 0;                 // K
  int weight_offset_ = 0;              // values of one group's filters
  std::vector<int> conv_input_shape_;  // image side: (conv_in_channels_, spatial dims...)
  std::vector<int> col_shape_;         // (K * G, the output side's spatial dims...)
  int chunk_images_ = 1;
  int num_chunks_ = 0;
  int tile_lines_ = 0;      // > 0: images are convolved in tiles of this many output lines
  int line_width_ = 1;      // values per output line (the output side's last spatial axis)
  int num_lines_ = 0;       // output lines per image
  int threads_ = 1;         // chunks run in parallel on this many threads
  Blob<Dtype> col_buffer_;  // per thread: (K * G, chunk_images_ * S)
  Blob<Dtype> out_buffer_;  // per thread: (conv_out_channels_, chunk_images_ * S), if chunked
  Blob<Dtype>
      weight_diff_t_;  // per thread, per group: the weight gradient transposed (K x C_out / G)
#ifndef CPU_ONLY
  // The GPU path's columns of one image, or of one tile of output lines: (K * G, columns). Shaped
  // in Reshape, memory taken on first use; the CPU buffers above are not used in GPU mode.
  Blob<Dtype> gpu_col_buffer_;
#endif
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_BASE_CONV_LAYER_HPP_
