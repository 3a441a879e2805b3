// Deconvolution (transposed convolution): the adjoint of Convolution with the same weights. Each
// bottom position spreads its values, weighted by the kernel, over a kernel-sized window of the
// top, windows `stride` apart; the result is cut by `pad` on each side. Used for learned
// upsampling (FCN) and the decoder paths of 2-D and 3-D U-Nets / V-Nets.
// Legend: N images, C bottom channels, C_out num_output, G group, k_i kernel size, d_i bottom
// size and o_i top size along spatial axis i.
#ifndef CAFFE_LAYERS_DECONVOLUTION_LAYER_HPP_
#define CAFFE_LAYERS_DECONVOLUTION_LAYER_HPP_

#include "caffe/layers/base_conv_layer.hpp"

namespace caffe {

/// top[n][o][y] = bias[o] + sum over c in o's group, taps t, and bottom positions x with
///   x * stride - pad + t * dilation = y of weights[c][o % (C_out / G)][t] * bottom[n][c][x].
/// bottom[i]: (N..., C, d...) all of one shape; top[i]: (N..., C_out, o...) with
/// o_i = stride_i (d_i - 1) + dilation_i (k_i - 1) + 1 - 2 pad_i.
/// blobs_[0]: weights (C, C_out / G, k...) (BVLC's layout: the convolution from top to bottom);
/// blobs_[1]: bias (C_out) if bias_term. Any number of spatial axes (1-D, 2-D, 3-D, ...).
template <typename Dtype>
class DeconvolutionLayer : public BaseConvolutionLayer<Dtype> {
 public:
  using BaseConvolutionLayer<Dtype>::BaseConvolutionLayer;
  const char* type() const override { return "Deconvolution"; }

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif
  bool reverse_dimensions() override { return true; }
  void compute_output_shape() override;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_DECONVOLUTION_LAYER_HPP_
