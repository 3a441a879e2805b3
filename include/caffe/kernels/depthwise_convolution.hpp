// Depthwise 2-D convolution on the CPU and the GPU, computed directly: every input channel c has
// its own `multiplier` filters (group = channels, num_output = multiplier x channels; output
// channel o reads channel o / multiplier), as MobileNet's 3x3 layers. Caffe's im2col + GEMM runs
// these as one GEMM of a single output row per group, over a column buffer k x k times the input.
// Legend: N images, C channels, M multiplier, H x W input, OH x OW output.
#ifndef CAFFE_KERNELS_DEPTHWISE_CONVOLUTION_HPP_
#define CAFFE_KERNELS_DEPTHWISE_CONVOLUTION_HPP_

namespace caffe {

struct DepthwiseGeometry {
  int num = 0, channels = 0, multiplier = 1;
  int height = 0, width = 0, out_height = 0, out_width = 0;
  int kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  int pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
};

/// y (N, C*M, OH, OW) = the convolution of x (N, C, H, W) with w (C*M, 1, kernel_h, kernel_w),
/// plus bias (C*M) where it is not null. Overwrites y.
template <typename Dtype>
void DepthwiseForward(const DepthwiseGeometry& g, const Dtype* x, const Dtype* w, const Dtype* bias,
                      Dtype* y);

/// dx = the gradient of the input for the top gradient dy. Overwrites dx.
template <typename Dtype>
void DepthwiseBackwardData(const DepthwiseGeometry& g, const Dtype* dy, const Dtype* w, Dtype* dx);

/// Adds the gradient of the weights for dy and the input x to dw (Caffe's gradients accumulate).
template <typename Dtype>
void DepthwiseBackwardWeights(const DepthwiseGeometry& g, const Dtype* dy, const Dtype* x,
                              Dtype* dw);

#ifndef CPU_ONLY
// The same three on the GPU (depthwise_convolution.cu); pointers are device memory, and g stays
// on the host.
template <typename Dtype>
void DepthwiseForwardGpu(const DepthwiseGeometry& g, const Dtype* x, const Dtype* w,
                         const Dtype* bias, Dtype* y);
template <typename Dtype>
void DepthwiseBackwardDataGpu(const DepthwiseGeometry& g, const Dtype* dy, const Dtype* w,
                              Dtype* dx);
template <typename Dtype>
void DepthwiseBackwardWeightsGpu(const DepthwiseGeometry& g, const Dtype* dy, const Dtype* x,
                                 Dtype* dw);
#endif  // CPU_ONLY

}  // namespace caffe

#endif  // CAFFE_KERNELS_DEPTHWISE_CONVOLUTION_HPP_
