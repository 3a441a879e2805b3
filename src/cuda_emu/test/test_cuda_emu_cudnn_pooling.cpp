// The emulator's cuDNN pooling (src/cuda_emu/cudnn/pooling.cpp) against a direct computation:
// max and average (with and without the padding in the count) over padded, strided windows,
// forward and backward, the maximum's gradient to the window's first maximum. Its main
// (emu_test_main.cpp) makes two emulated GPUs.
//
// Legend: N images, C channels, H/W spatial sides; tensors are packed NCHW.
#include <cuda_runtime.h>
#include <cudnn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "cudnn_test_support.hpp"
#include "device_array.hpp"

namespace caffe_emu_test {
namespace {

TYPED_TEST_SUITE(CuDNNEmuTypedTest, CuDNNTypes);

struct Pool2d {
  int n, c, h, w, window_h, window_w, pad_h, pad_w, stride_h, stride_w;
  int out_h() const { return (h + 2 * pad_h - window_h) / stride_h + 1; }
  int out_w() const { return (w + 2 * pad_w - window_w) / stride_w + 1; }
};

// Forward and backward of `g` in `mode`, the maximum's gradient to the window's first maximum.
void PoolReference(const Pool2d& g, cudnnPoolingMode_t mode, const std::vector<double>& x,
                   const std::vector<double>& dy, std::vector<double>* y, std::vector<double>* dx) {
  y->assign(size_t(g.n) * g.c * g.out_h() * g.out_w(), 0.0);
  dx->assign(x.size(), 0.0);
  for (int plane = 0; plane < g.n * g.c; ++plane)
    for (int oh = 0; oh < g.out_h(); ++oh)
      for (int ow = 0; ow < g.out_w(); ++ow) {
        const int at = (plane * g.out_h() + oh) * g.out_w() + ow;
        const int h0 = std::max(oh * g.stride_h - g.pad_h, 0);
        const int h1 = std::min(oh * g.stride_h - g.pad_h + g.window_h, g.h);
        const int w0 = std::max(ow * g.stride_w - g.pad_w, 0);
        const int w1 = std::min(ow * g.stride_w - g.pad_w + g.window_w, g.w);
        int argmax = -1;
        double sum = 0;
        for (int ih = h0; ih < h1; ++ih)
          for (int iw = w0; iw < w1; ++iw) {
            const int i = (plane * g.h + ih) * g.w + iw;
            sum += x[i];
            if (argmax < 0 || x[i] > x[argmax]) argmax = i;
          }
        if (mode == CUDNN_POOLING_MAX_DETERMINISTIC) {
          (*y)[at] = x[argmax];
          (*dx)[argmax] += dy[at];
          continue;
        }
        const double count = mode == CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                 ? g.window_h * g.window_w
                                 : (h1 - h0) * (w1 - w0);
        (*y)[at] = sum / count;
        for (int ih = h0; ih < h1; ++ih)
          for (int iw = w0; iw < w1; ++iw) (*dx)[(plane * g.h + ih) * g.w + iw] += dy[at] / count;
      }
}

TYPED_TEST(CuDNNEmuTypedTest, PoolingMatchesWindowsOverThePaddedInput) {
  using T = TypeParam;
  const Pool2d g = {2, 3, 7, 6, 3, 2, 1, 1, 2, 2};
  const std::vector<int> x_dims = {g.n, g.c, g.h, g.w}, y_dims = {g.n, g.c, g.out_h(), g.out_w()};
  const Tensor x_desc(kType<T>, x_dims), y_desc(kType<T>, y_dims);
  // Small integers: windows hold ties, whose gradient goes to the first maximum.
  std::vector<T> x(Count(x_dims));
  std::mt19937 generator(11);
  for (T& value : x) value = static_cast<T>(generator() % 4);
  const std::vector<T> dy = Random<T>(Count(y_dims), 12);
  DeviceArray<T> x_dev(x.size()), y_dev(dy.size()), dy_dev(dy.size()), dx_dev(x.size());
  x_dev.Write(x);
  dy_dev.Write(dy);
  for (cudnnPoolingMode_t mode :
       {CUDNN_POOLING_MAX_DETERMINISTIC, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
        CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING}) {
    SCOPED_TRACE(::testing::Message() << "mode " << mode);
    cudnnPoolingDescriptor_t pooling;
    ASSERT_EQ(cudnnCreatePoolingDescriptor(&pooling), CUDNN_STATUS_SUCCESS);
    const int window[] = {g.window_h, g.window_w}, pad[] = {g.pad_h, g.pad_w};
    const int stride[] = {g.stride_h, g.stride_w};
    ASSERT_EQ(
        cudnnSetPoolingNdDescriptor(pooling, mode, CUDNN_NOT_PROPAGATE_NAN, 2, window, pad, stride),
        CUDNN_STATUS_SUCCESS);
    std::vector<double> y, dx;
    PoolReference(g, mode, std::vector<double>(x.begin(), x.end()),
                  std::vector<double>(dy.begin(), dy.end()), &y, &dx);
    ASSERT_EQ(cudnnPoolingForward(this->handle_, pooling, &this->one_, x_desc.get(), x_dev.get(),
                                  &this->zero_, y_desc.get(), y_dev.get()),
              CUDNN_STATUS_SUCCESS);
    ExpectNear(y, y_dev.Read(), "y");
    ASSERT_EQ(cudnnPoolingBackward(this->handle_, pooling, &this->one_, y_desc.get(), y_dev.get(),
                                   y_desc.get(), dy_dev.get(), x_desc.get(), x_dev.get(),
                                   &this->zero_, x_desc.get(), dx_dev.get()),
              CUDNN_STATUS_SUCCESS);
    ExpectNear(dx, dx_dev.Read(), "dx");
    cudnnDestroyPoolingDescriptor(pooling);
  }
}

}  // namespace
}  // namespace caffe_emu_test
