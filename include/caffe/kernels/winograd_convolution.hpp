// 3x3 convolutions of stride 1 by Winograd's F(4x4, 3x3) on the CPU, in fp32: each 6x6 tile of the
// input and each 3x3 filter are transformed into 36 points, where one multiplication per point
// and channel pair makes a 4x4 tile of outputs (36 multiplications where the direct form takes
// 144); the sums over channels are 36 matrix products, one batched oneDNN matmul. oneDNN has this
// algorithm only for AVX-512 CPUs; these kernels serve the others (AVX2), where its direct 3x3
// convolutions are the bulk of a ResNet's or VGG's step. Forward, data gradient (the forward of
// the top gradient with the filters turned 180 degrees and their axes swapped) and weight
// gradient (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", 2015).
// Activations may be plain (N, C, H, W) or in oneDNN's channel blocks (memory/channel_layout.hpp).
// Legend: N images, C input channels, K outputs, H x W input, OH x OW output, T tiles.
#ifndef CAFFE_KERNELS_WINOGRAD_CONVOLUTION_HPP_
#define CAFFE_KERNELS_WINOGRAD_CONVOLUTION_HPP_

#include <cstddef>

namespace caffe {

struct WinogradGeometry {
  int num = 0, channels = 0, outputs = 0;
  int height = 0, width = 0;
  int pad_h = 0, pad_w = 0;
  int in_block = 1, out_block = 1;  // the channel blocks of the input and the output: 1, 8 or 16
  int out_height() const { return height + 2 * pad_h - 2; }
  int out_width() const { return width + 2 * pad_w - 2; }
};

/// Whether these kernels take `g`: whole blocks of 8 channels in and out (the transforms run 8
/// channels per vector), pads 0 to 2, an output, blocks that divide their channels.
bool WinogradTakes(const WinogradGeometry& g);

class WinogradConvolution {
 public:
  explicit WinogradConvolution(const WinogradGeometry& g);

  /// y (N, K, OH, OW) = x (N, C, H, W) convolved with w (K, C, 3, 3), times scales[k] where
  /// scales is not null, plus bias[k] where bias is not null, and where `relu` the ReLU of
  /// negative slope `slope` after it. Overwrites y.
  void Forward(const float* x, const float* w, const float* scales, const float* bias, bool relu,
               float slope, float* y);
  /// dx = the gradient of the input for the top gradient dy. Overwrites dx.
  void BackwardData(const float* dy, const float* w, float* dx);
  /// Adds the gradient of the weights for dy and the input x to dw (Caffe's gradients accumulate).
  void BackwardWeights(const float* x, const float* dy, float* dw);

 private:
  WinogradGeometry g_;
  WinogradGeometry data_g_;  // the data gradient's: dy in, dx out, pads 2 - pad
  int images_;               // per group of tiles, so that the scratch stays bounded
};

}  // namespace caffe

#endif  // CAFFE_KERNELS_WINOGRAD_CONVOLUTION_HPP_
