// A 2-D convolution for the tests of the emulator's cuDNN: its geometry, direct computations of
// its three passes written independently of the emulator, and a convolution descriptor for it.
//
// Legend: N images, C channels of x, K filters (channels of y), G groups, H/W spatial sides;
// reference tensors are packed NCHW (filters K, C / G, kernel H, kernel W).
#ifndef CAFFE_CUDA_EMU_TEST_CONV2D_REFERENCE_HPP_
#define CAFFE_CUDA_EMU_TEST_CONV2D_REFERENCE_HPP_

#include <cudnn.h>
#include <gtest/gtest.h>

#include <vector>

#include "cudnn_test_support.hpp"

namespace caffe_emu_test {

// A 2-D convolution's geometry, with the reference computations.
struct Conv2d {
  int n, c, h, w, k, kernel_h, kernel_w, pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w,
      groups;
  bool flip = false;  // CUDNN_CONVOLUTION

  int out_h() const { return (h + 2 * pad_h - (kernel_h - 1) * dilation_h - 1) / stride_h + 1; }
  int out_w() const { return (w + 2 * pad_w - (kernel_w - 1) * dilation_w - 1) / stride_w + 1; }
  std::vector<int> x_dims() const { return {n, c, h, w}; }
  std::vector<int> w_dims() const { return {k, c / groups, kernel_h, kernel_w}; }
  std::vector<int> y_dims() const { return {n, k, out_h(), out_w()}; }
  int x_at(int in, int ic, int ih, int iw) const { return ((in * c + ic) * h + ih) * w + iw; }
  int w_at(int ik, int ic, int r, int s) const {
    if (flip) r = kernel_h - 1 - r, s = kernel_w - 1 - s;
    return ((ik * (c / groups) + ic) * kernel_h + r) * kernel_w + s;
  }
  int y_at(int in, int ik, int oh, int ow) const {
    return ((in * k + ik) * out_h() + oh) * out_w() + ow;
  }

  template <typename T>
  std::vector<double> Forward(const std::vector<T>& x, const std::vector<T>& filters) const {
    std::vector<double> y(Count(y_dims()), 0.0);
    const int per_group = c / groups, k_per_group = k / groups;
    for (int in = 0; in < n; ++in)
      for (int ik = 0; ik < k; ++ik)
        for (int oh = 0; oh < out_h(); ++oh)
          for (int ow = 0; ow < out_w(); ++ow)
            for (int ic = 0; ic < per_group; ++ic)
              for (int r = 0; r < kernel_h; ++r)
                for (int s = 0; s < kernel_w; ++s) {
                  const int ih = oh * stride_h - pad_h + r * dilation_h;
                  const int iw = ow * stride_w - pad_w + s * dilation_w;
                  if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
                  y[y_at(in, ik, oh, ow)] +=
                      double(x[x_at(in, ik / k_per_group * per_group + ic, ih, iw)]) *
                      filters[w_at(ik, ic, r, s)];
                }
    return y;
  }

  // dx gathered per input element: the outputs whose windows reach it.
  template <typename T>
  std::vector<double> BackwardData(const std::vector<T>& filters, const std::vector<T>& dy) const {
    std::vector<double> dx(Count(x_dims()), 0.0);
    const int per_group = c / groups, k_per_group = k / groups;
    for (int in = 0; in < n; ++in)
      for (int ic = 0; ic < c; ++ic)
        for (int ih = 0; ih < h; ++ih)
          for (int iw = 0; iw < w; ++iw)
            for (int j = 0; j < k_per_group; ++j)
              for (int r = 0; r < kernel_h; ++r)
                for (int s = 0; s < kernel_w; ++s) {
                  const int th = ih + pad_h - r * dilation_h, tw = iw + pad_w - s * dilation_w;
                  if (th < 0 || tw < 0 || th % stride_h || tw % stride_w) continue;
                  const int oh = th / stride_h, ow = tw / stride_w;
                  if (oh >= out_h() || ow >= out_w()) continue;
                  const int ik = ic / per_group * k_per_group + j;
                  dx[x_at(in, ic, ih, iw)] +=
                      double(filters[w_at(ik, ic % per_group, r, s)]) * dy[y_at(in, ik, oh, ow)];
                }
    return dx;
  }

  template <typename T>
  std::vector<double> BackwardFilter(const std::vector<T>& x, const std::vector<T>& dy) const {
    std::vector<double> dw(Count(w_dims()), 0.0);
    const int per_group = c / groups, k_per_group = k / groups;
    for (int ik = 0; ik < k; ++ik)
      for (int ic = 0; ic < per_group; ++ic)
        for (int r = 0; r < kernel_h; ++r)
          for (int s = 0; s < kernel_w; ++s)
            for (int in = 0; in < n; ++in)
              for (int oh = 0; oh < out_h(); ++oh)
                for (int ow = 0; ow < out_w(); ++ow) {
                  const int ih = oh * stride_h - pad_h + r * dilation_h;
                  const int iw = ow * stride_w - pad_w + s * dilation_w;
                  if (ih < 0 || ih >= h || iw < 0 || iw >= w) continue;
                  dw[w_at(ik, ic, r, s)] +=
                      double(x[x_at(in, ik / k_per_group * per_group + ic, ih, iw)]) *
                      dy[y_at(in, ik, oh, ow)];
                }
    return dw;
  }
};

// A convolution descriptor for `g`.
class Convolution {
 public:
  Convolution(const Conv2d& g, cudnnDataType_t type, cudnnMathType_t math) {
    EXPECT_EQ(cudnnCreateConvolutionDescriptor(&descriptor_), CUDNN_STATUS_SUCCESS);
    const int pad[] = {g.pad_h, g.pad_w}, stride[] = {g.stride_h, g.stride_w};
    const int dilation[] = {g.dilation_h, g.dilation_w};
    EXPECT_EQ(
        cudnnSetConvolutionNdDescriptor(descriptor_, 2, pad, stride, dilation,
                                        g.flip ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION, type),
        CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnSetConvolutionGroupCount(descriptor_, g.groups), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnSetConvolutionMathType(descriptor_, math), CUDNN_STATUS_SUCCESS);
  }
  ~Convolution() { cudnnDestroyConvolutionDescriptor(descriptor_); }
  cudnnConvolutionDescriptor_t get() const { return descriptor_; }

 private:
  cudnnConvolutionDescriptor_t descriptor_ = nullptr;
};

// Groups, rectangular dilated kernel, unequal padding and strides, not a multiple of anything.
inline Conv2d OddConvolution() { return {2, 6, 9, 8, 4, 3, 2, 1, 2, 2, 1, 2, 1, 2}; }

}  // namespace caffe_emu_test

#endif  // CAFFE_CUDA_EMU_TEST_CONV2D_REFERENCE_HPP_
