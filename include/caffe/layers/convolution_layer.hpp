// Convolution: each output channel is a learned filter slid over the input's spatial axes (any
// number of them), plus a bias. Legend: N images, C input channels, C_out num_output, G group,
// k_i kernel size, o_i output size along spatial axis i.
#ifndef CAFFE_LAYERS_CONVOLUTION_LAYER_HPP_
#define CAFFE_LAYERS_CONVOLUTION_LAYER_HPP_

#include "caffe/layers/base_conv_layer.hpp"

namespace caffe {

struct DepthwiseGeometry;

/// top[n][o][y] = bias[o] + sum over c in o's group, kernel taps t of
///   weights[o][c][t] * bottom[n][c][y * stride - pad + t * dilation] (0 in the padding).
/// bottom[i]: (N..., C, spatial...) all of one shape; top[i]: (N..., C_out, o...) with
/// o_i = (d_i + 2 pad_i - (dilation_i (k_i - 1) + 1)) / stride_i + 1.
/// blobs_[0]: weights (C_out, C / G, k...); blobs_[1]: bias (C_out) if bias_term.
template <typename Dtype>
class ConvolutionLayer : public BaseConvolutionLayer<Dtype> {
 public:
  using BaseConvolutionLayer<Dtype>::BaseConvolutionLayer;
  const char* type() const override { return "Convolution"; }
  /// LMS: as the base class, but a depthwise convolution uses no column buffers.
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif
  bool reverse_dimensions() override { return false; }
  void compute_output_shape() override;

 private:
  // A 2-D depthwise convolution (group = channels, each channel's outputs reading it alone) runs
  // directly on the CPU and the GPU (kernels/depthwise_convolution.hpp), not by im2col + GEMM.
  bool RunsDepthwise() const;
  DepthwiseGeometry DepthwiseShape() const;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_CONVOLUTION_LAYER_HPP_
