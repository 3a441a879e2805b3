// The emulator's cuDNN convolution (src/cuda_emu/cudnn/convolution_*.cpp) against direct
// computations (conv2d_reference.hpp): the three passes with padding, stride, dilation, groups and
// both modes, alpha/beta blending, strided tensors, TF32 rounding, and the bias (AddTensor and
// the bias gradient). Its main (emu_test_main.cpp) makes two emulated GPUs.
#include <cuda_runtime.h>
#include <cudnn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "conv2d_reference.hpp"
#include "cudnn_test_support.hpp"
#include "device_array.hpp"

namespace caffe_emu_test {
namespace {

TYPED_TEST_SUITE(CuDNNEmuTypedTest, CuDNNTypes);

TYPED_TEST(CuDNNEmuTypedTest, ConvolutionPassesMatchDirectSums) {
  using T = TypeParam;
  for (bool flip : {false, true}) {
    Conv2d g = OddConvolution();
    g.flip = flip;
    SCOPED_TRACE(flip ? "CUDNN_CONVOLUTION" : "CUDNN_CROSS_CORRELATION");
    const Tensor x_desc(kType<T>, g.x_dims()), y_desc(kType<T>, g.y_dims());
    const Filter w_desc(kType<T>, g.w_dims());
    const Convolution conv(g, kType<T>, CUDNN_FMA_MATH);
    std::vector<int> out(4);
    ASSERT_EQ(cudnnGetConvolutionNdForwardOutputDim(conv.get(), x_desc.get(), w_desc.get(), 4,
                                                    out.data()),
              CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(out, g.y_dims());
    const std::vector<T> x = Random<T>(Count(g.x_dims()), 1), w = Random<T>(Count(g.w_dims()), 2);
    const std::vector<T> dy = Random<T>(Count(g.y_dims()), 3);
    const std::vector<T> prior_dw = Random<T>(Count(g.w_dims()), 4);
    DeviceArray<T> x_dev(x.size()), w_dev(w.size()), y_dev(dy.size()), dy_dev(dy.size());
    DeviceArray<T> dx_dev(x.size()), dw_dev(w.size());
    x_dev.Write(x);
    w_dev.Write(w);
    dy_dev.Write(dy);
    dw_dev.Write(prior_dw);
    // Fresh memory is NaN: beta 0 must not read y or dx.
    ASSERT_EQ(
        cudnnConvolutionForward(this->handle_, &this->one_, x_desc.get(), x_dev.get(), w_desc.get(),
                                w_dev.get(), conv.get(), CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                                nullptr, 0, &this->zero_, y_desc.get(), y_dev.get()),
        CUDNN_STATUS_SUCCESS);
    ExpectNear(g.Forward(x, w), y_dev.Read(), "y");
    ASSERT_EQ(cudnnConvolutionBackwardData(this->handle_, &this->one_, w_desc.get(), w_dev.get(),
                                           y_desc.get(), dy_dev.get(), conv.get(),
                                           CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, nullptr, 0,
                                           &this->zero_, x_desc.get(), dx_dev.get()),
              CUDNN_STATUS_SUCCESS);
    ExpectNear(g.BackwardData(w, dy), dx_dev.Read(), "dx");
    // beta 1 accumulates, as Caffe's parameter gradients do; alpha scales the new part.
    const T two = 2;
    ASSERT_EQ(cudnnConvolutionBackwardFilter(this->handle_, &two, x_desc.get(), x_dev.get(),
                                             y_desc.get(), dy_dev.get(), conv.get(),
                                             CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, nullptr, 0,
                                             &this->one_, w_desc.get(), dw_dev.get()),
              CUDNN_STATUS_SUCCESS);
    std::vector<double> expected_dw = g.BackwardFilter(x, dy);
    for (size_t i = 0; i < expected_dw.size(); ++i)
      expected_dw[i] = 2 * expected_dw[i] + prior_dw[i];
    ExpectNear(expected_dw, dw_dev.Read(), "dw");
  }
}

TYPED_TEST(CuDNNEmuTypedTest, ConvolutionReadsAndWritesThroughStrides) {
  using T = TypeParam;
  const Conv2d g = OddConvolution();
  // x in NHWC order, y with its rows padded to 13 elements, described by strides.
  const int n = g.n, c = g.c, h = g.h, w = g.w, k = g.k, oh = g.out_h(), ow = g.out_w();
  const Tensor x_desc(kType<T>, g.x_dims(), {h * w * c, 1, w * c, c});
  const Tensor y_desc(kType<T>, g.y_dims(), {k * oh * 13, oh * 13, 13, 1});
  const Filter w_desc(kType<T>, g.w_dims());
  const Convolution conv(g, kType<T>, CUDNN_FMA_MATH);
  const std::vector<T> x = Random<T>(Count(g.x_dims()), 5),
                       filters = Random<T>(Count(g.w_dims()), 6);
  std::vector<T> x_nhwc(x.size());
  for (int in = 0; in < n; ++in)
    for (int ic = 0; ic < c; ++ic)
      for (int ih = 0; ih < h; ++ih)
        for (int iw = 0; iw < w; ++iw)
          x_nhwc[((in * h + ih) * w + iw) * c + ic] = x[g.x_at(in, ic, ih, iw)];
  DeviceArray<T> x_dev(x.size()), w_dev(filters.size()), y_dev(size_t(n) * k * oh * 13);
  x_dev.Write(x_nhwc);
  w_dev.Write(filters);
  ASSERT_EQ(
      cudnnConvolutionForward(this->handle_, &this->one_, x_desc.get(), x_dev.get(), w_desc.get(),
                              w_dev.get(), conv.get(), CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                              nullptr, 0, &this->zero_, y_desc.get(), y_dev.get()),
      CUDNN_STATUS_SUCCESS);
  const std::vector<double> expected = g.Forward(x, filters);
  const std::vector<T> padded = y_dev.Read();
  std::vector<T> y(expected.size());
  for (int row = 0; row < n * k * oh; ++row) {
    for (int col = 0; col < ow; ++col) y[row * ow + col] = padded[row * 13 + col];
    for (int col = ow; col < 13; ++col)
      EXPECT_TRUE(std::isnan(padded[row * 13 + col])) << "written";
  }
  ExpectNear(expected, y, "y");
}

TEST_F(CuDNNEmuTest, FloatConvolutionsRoundToTf32UnlessFmaMath) {
  const Conv2d g = {1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1};
  const Tensor tensor(CUDNN_DATA_FLOAT, g.x_dims());
  const Filter w_desc(CUDNN_DATA_FLOAT, g.w_dims());
  const float one = 1, zero = 0;
  DeviceArray<float> x(1), w(1), y(1);
  x.Write({1.0f + 1.0f / 4096});  // below TF32's 10 mantissa bits
  w.Write({1.0f});
  for (cudnnMathType_t math : {CUDNN_FMA_MATH, CUDNN_DEFAULT_MATH, CUDNN_TENSOR_OP_MATH}) {
    const Convolution conv(g, CUDNN_DATA_FLOAT, math);
    ASSERT_EQ(cudnnConvolutionForward(handle_, &one, tensor.get(), x.get(), w_desc.get(), w.get(),
                                      conv.get(), CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr,
                                      0, &zero, tensor.get(), y.get()),
              CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(y.Read()[0], math == CUDNN_FMA_MATH ? 1.0f + 1.0f / 4096 : 1.0f) << "math " << math;
  }
}

TYPED_TEST(CuDNNEmuTypedTest, BiasIsAddedAndItsGradientSummed) {
  using T = TypeParam;
  const std::vector<int> dims = {2, 3, 4, 5}, bias_dims = {1, 3, 1, 1};
  const Tensor data_desc(kType<T>, dims), bias_desc(kType<T>, bias_dims);
  const std::vector<T> data = Random<T>(Count(dims), 9), bias = {0.5, -1, 2};
  DeviceArray<T> data_dev(data.size()), bias_dev(3), bias_diff_dev(3);
  data_dev.Write(data);
  bias_dev.Write(bias);
  bias_diff_dev.Write({1, 2, 3});
  ASSERT_EQ(cudnnAddTensor(this->handle_, &this->one_, bias_desc.get(), bias_dev.get(), &this->one_,
                           data_desc.get(), data_dev.get()),
            CUDNN_STATUS_SUCCESS);
  std::vector<double> expected(data.size());
  for (size_t i = 0; i < data.size(); ++i) expected[i] = double(data[i]) + bias[i / 20 % 3];
  ExpectNear(expected, data_dev.Read(), "data + bias");
  // A bias broadcast along some axes only: (1, 3, 4, 1).
  const Tensor rows_desc(kType<T>, {1, 3, 4, 1});
  const std::vector<T> rows = Random<T>(12, 10);
  DeviceArray<T> rows_dev(12);
  rows_dev.Write(rows);
  const T half = 0.5, two = 2;
  ASSERT_EQ(cudnnAddTensor(this->handle_, &half, rows_desc.get(), rows_dev.get(), &two,
                           data_desc.get(), data_dev.get()),
            CUDNN_STATUS_SUCCESS);
  for (size_t i = 0; i < data.size(); ++i) expected[i] = 2 * expected[i] + 0.5 * rows[i / 5 % 12];
  ExpectNear(expected, data_dev.Read(), "2 * data + 0.5 * rows");
  ASSERT_EQ(
      cudnnConvolutionBackwardBias(this->handle_, &this->one_, data_desc.get(), data_dev.get(),
                                   &this->one_, bias_desc.get(), bias_diff_dev.get()),
      CUDNN_STATUS_SUCCESS);
  std::vector<double> sums = {1, 2, 3};
  for (size_t i = 0; i < expected.size(); ++i) sums[i / 20 % 3] += expected[i];
  ExpectNear(sums, bias_diff_dev.Read(), "bias diff");
  const Tensor wrong_desc(kType<T>, {1, 2, 1, 1});
  EXPECT_EQ(cudnnAddTensor(this->handle_, &this->one_, wrong_desc.get(), bias_dev.get(),
                           &this->one_, data_desc.get(), data_dev.get()),
            CUDNN_STATUS_BAD_PARAM);
}

}  // namespace
}  // namespace caffe_emu_test
