// The CUDA emulator's cuDNN (src/cuda_emu/cudnn*.cpp) against direct computations written here
// independently: convolution (padding, stride, dilation, groups, both modes, strided tensors,
// every algorithm the getters offer, alpha/beta blending), its bias gradient, AddTensor, pooling,
// LRN, activations and softmax, forward and backward; gradients without a closed form here are
// checked by central differences of the forward reference. Then the checks cuDNN makes, or a GPU
// would punish: host memory as data, a too-small workspace, mismatched descriptors, outputs
// overlapping inputs, scaling factors in device memory, a handle used on another GPU. Its main
// (emu_test_main.cpp) makes two emulated GPUs.
//
// Legend: N images, C channels of x, K filters (channels of y), G groups, H/W spatial sides;
// reference tensors are packed NCHW (filters K, C / G, kernel H, kernel W).
#include <cuda_runtime.h>
#include <cudnn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "device_array.hpp"

namespace caffe_emu_test {
namespace {

template <typename T>
constexpr cudnnDataType_t kType = std::is_same_v<T, float> ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;

// Row-major strides of `dims`.
std::vector<int> Packed(const std::vector<int>& dims) {
  std::vector<int> strides(dims.size());
  int stride = 1;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= dims[i];
  }
  return strides;
}

int Count(const std::vector<int>& dims) {
  int count = 1;
  for (int d : dims) count *= d;
  return count;
}

template <typename T>
std::vector<T> Random(size_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<T> values(count);
  for (T& value : values) value = static_cast<T>(uniform(generator));
  return values;
}

// A tensor descriptor, packed unless strides are given.
class Tensor {
 public:
  Tensor(cudnnDataType_t type, const std::vector<int>& dims, std::vector<int> strides = {}) {
    EXPECT_EQ(cudnnCreateTensorDescriptor(&descriptor_), CUDNN_STATUS_SUCCESS);
    if (strides.empty()) strides = Packed(dims);
    EXPECT_EQ(cudnnSetTensorNdDescriptor(descriptor_, type, static_cast<int>(dims.size()),
                                         dims.data(), strides.data()),
              CUDNN_STATUS_SUCCESS);
  }
  ~Tensor() { cudnnDestroyTensorDescriptor(descriptor_); }
  cudnnTensorDescriptor_t get() const { return descriptor_; }

 private:
  cudnnTensorDescriptor_t descriptor_ = nullptr;
};

class Filter {
 public:
  Filter(cudnnDataType_t type, const std::vector<int>& dims) {
    EXPECT_EQ(cudnnCreateFilterDescriptor(&descriptor_), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnSetFilterNdDescriptor(descriptor_, type, CUDNN_TENSOR_NCHW,
                                         static_cast<int>(dims.size()), dims.data()),
              CUDNN_STATUS_SUCCESS);
  }
  ~Filter() { cudnnDestroyFilterDescriptor(descriptor_); }
  cudnnFilterDescriptor_t get() const { return descriptor_; }

 private:
  cudnnFilterDescriptor_t descriptor_ = nullptr;
};

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

template <typename T>
void ExpectNear(const std::vector<double>& expected, const std::vector<T>& actual,
                const char* what) {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  const double tolerance = std::is_same_v<T, float> ? 2e-5 : 1e-11;
  int reported = 0;
  for (size_t i = 0; i < expected.size() && reported < 5; ++i) {
    if (std::abs(expected[i] - actual[i]) > tolerance * (1 + std::abs(expected[i]))) {
      ADD_FAILURE() << what << "[" << i << "]: expected " << expected[i] << ", got " << actual[i];
      ++reported;
    }
  }
}

class CudnnEmuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    ASSERT_EQ(cudnnCreate(&handle_), CUDNN_STATUS_SUCCESS);
  }
  void TearDown() override { cudnnDestroy(handle_); }
  cudnnHandle_t handle_ = nullptr;
};

template <typename T>
class CudnnEmuTypedTest : public CudnnEmuTest {
 protected:
  const T one_ = 1, zero_ = 0;
};
using Types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudnnEmuTypedTest, Types);

// Groups, rectangular dilated kernel, unequal padding and strides, not a multiple of anything.
Conv2d OddConvolution() { return {2, 6, 9, 8, 4, 3, 2, 1, 2, 2, 1, 2, 1, 2}; }

TYPED_TEST(CudnnEmuTypedTest, ConvolutionPassesMatchDirectSums) {
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

TYPED_TEST(CudnnEmuTypedTest, ConvolutionReadsAndWritesThroughStrides) {
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

// Every algorithm the getters list as runnable runs with the workspace they report, and all
// compute the same result.
TYPED_TEST(CudnnEmuTypedTest, EveryListedAlgorithmComputesTheSameResult) {
  using T = TypeParam;
  const Conv2d g = {2, 4, 6, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, 2};  // FFT and Winograd apply
  const Tensor x_desc(kType<T>, g.x_dims()), y_desc(kType<T>, g.y_dims());
  const Filter w_desc(kType<T>, g.w_dims());
  const Convolution conv(g, kType<T>, CUDNN_FMA_MATH);
  const std::vector<T> x = Random<T>(Count(g.x_dims()), 7), w = Random<T>(Count(g.w_dims()), 8);
  DeviceArray<T> x_dev(x.size()), w_dev(w.size()), y_dev(Count(g.y_dims()));
  x_dev.Write(x);
  w_dev.Write(w);
  int max_count = 0, returned = 0;
  ASSERT_EQ(cudnnGetConvolutionForwardAlgorithmMaxCount(this->handle_, &max_count),
            CUDNN_STATUS_SUCCESS);
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(max_count);
  ASSERT_EQ(
      cudnnGetConvolutionForwardAlgorithm_v7(this->handle_, x_desc.get(), w_desc.get(), conv.get(),
                                             y_desc.get(), max_count, &returned, perf.data()),
      CUDNN_STATUS_SUCCESS);
  int runnable = 0;
  for (int i = 0; i < returned; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    ++runnable;
    SCOPED_TRACE(::testing::Message()
                 << "algorithm " << perf[i].algo << ", math " << perf[i].mathType);
    size_t bytes = 1;
    ASSERT_EQ(cudnnSetConvolutionMathType(conv.get(), perf[i].mathType), CUDNN_STATUS_SUCCESS);
    ASSERT_EQ(
        cudnnGetConvolutionForwardWorkspaceSize(this->handle_, x_desc.get(), w_desc.get(),
                                                conv.get(), y_desc.get(), perf[i].algo, &bytes),
        CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(bytes, perf[i].memory);
    DeviceArray<char> workspace(std::max<size_t>(bytes, 1));
    ASSERT_EQ(
        cudnnConvolutionForward(this->handle_, &this->one_, x_desc.get(), x_dev.get(), w_desc.get(),
                                w_dev.get(), conv.get(), perf[i].algo, workspace.get(), bytes,
                                &this->zero_, y_desc.get(), y_dev.get()),
        CUDNN_STATUS_SUCCESS);
    if (perf[i].mathType == CUDNN_TENSOR_OP_MATH) continue;  // TF32: tested below
    ExpectNear(g.Forward(x, w), y_dev.Read(), "y");
  }
  EXPECT_GE(runnable, 5);
}

// The Find*AlgorithmEx calls time the listed algorithms (by the emulator's model) on the
// caller's tensors: runnable ones fastest first, those needing more workspace than given
// ALLOC_FAILED, the output holding the result; their order differs from the getters'.
TYPED_TEST(CudnnEmuTypedTest, FindTimesAlgorithmsWithinTheWorkspaceGiven) {
  using T = TypeParam;
  const Conv2d g = {2, 4, 6, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, 2};  // FFT and Winograd apply
  const Tensor x_desc(kType<T>, g.x_dims()), y_desc(kType<T>, g.y_dims());
  const Filter w_desc(kType<T>, g.w_dims());
  const bool is_float = std::is_same_v<T, float>;
  const Convolution conv(g, kType<T>, is_float ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH);
  const std::vector<T> x = Random<T>(Count(g.x_dims()), 7), w = Random<T>(Count(g.w_dims()), 8);
  const std::vector<T> dy = Random<T>(Count(g.y_dims()), 9);
  DeviceArray<T> x_dev(x.size()), w_dev(w.size()), y_dev(dy.size()), dy_dev(dy.size());
  DeviceArray<T> dx_dev(x.size()), dw_dev(w.size());
  x_dev.Write(x);
  w_dev.Write(w);
  dy_dev.Write(dy);
  // Every runnable entry first, each no slower than the next; the rest failed.
  auto expect_timed_order = [](const auto& perf, int returned, size_t workspace) {
    bool failed_seen = false;
    int succeeded = 0;
    for (int i = 0; i < returned; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS) {
        failed_seen = true;
        continue;
      }
      ++succeeded;
      EXPECT_FALSE(failed_seen) << "entry " << i << " ran after a failed one";
      EXPECT_GE(perf[i].time, 0) << "entry " << i;
      EXPECT_LE(perf[i].memory, workspace) << "entry " << i;
      if (i > 0 && perf[i - 1].status == CUDNN_STATUS_SUCCESS) {
        EXPECT_LE(perf[i - 1].time, perf[i].time) << "entry " << i;
      }
    }
    EXPECT_GE(succeeded, 1);
    return succeeded;
  };
  const size_t kWorkspace = 1 << 20;
  DeviceArray<char> workspace(kWorkspace);
  int returned = 0;
  std::vector<cudnnConvolutionFwdAlgoPerf_t> forward(16), listed(16);
  ASSERT_EQ(cudnnFindConvolutionForwardAlgorithmEx(
                this->handle_, x_desc.get(), x_dev.get(), w_desc.get(), w_dev.get(), conv.get(),
                y_desc.get(), y_dev.get(), 16, &returned, forward.data(), workspace.get(),
                kWorkspace),
            CUDNN_STATUS_SUCCESS);
  const int forward_runs = expect_timed_order(forward, returned, kWorkspace);
  ExpectNear(g.Forward(x, w), y_dev.Read(), "y");
  int listed_count = 0;
  ASSERT_EQ(cudnnGetConvolutionForwardAlgorithm_v7(this->handle_, x_desc.get(), w_desc.get(),
                                                   conv.get(), y_desc.get(), 16, &listed_count,
                                                   listed.data()),
            CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(returned, listed_count) << "Find returns the algorithms the getter lists";
  EXPECT_NE(forward[0].algo, listed[0].algo) << "timing and the heuristics agree: no choice";

  std::vector<cudnnConvolutionBwdDataAlgoPerf_t> backward_data(16);
  ASSERT_EQ(cudnnFindConvolutionBackwardDataAlgorithmEx(
                this->handle_, w_desc.get(), w_dev.get(), y_desc.get(), dy_dev.get(), conv.get(),
                x_desc.get(), dx_dev.get(), 16, &returned, backward_data.data(), workspace.get(),
                kWorkspace),
            CUDNN_STATUS_SUCCESS);
  expect_timed_order(backward_data, returned, kWorkspace);
  ExpectNear(g.BackwardData(w, dy), dx_dev.Read(), "dx");

  std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> backward_filter(16);
  ASSERT_EQ(cudnnFindConvolutionBackwardFilterAlgorithmEx(
                this->handle_, x_desc.get(), x_dev.get(), y_desc.get(), dy_dev.get(), conv.get(),
                w_desc.get(), dw_dev.get(), 16, &returned, backward_filter.data(),
                workspace.get(), kWorkspace),
            CUDNN_STATUS_SUCCESS);
  expect_timed_order(backward_filter, returned, kWorkspace);
  ExpectNear(g.BackwardFilter(x, dy), dw_dev.Read(), "dw");

  // Without a workspace only the algorithms that need none run; the others are ALLOC_FAILED.
  ASSERT_EQ(cudnnFindConvolutionForwardAlgorithmEx(
                this->handle_, x_desc.get(), x_dev.get(), w_desc.get(), w_dev.get(), conv.get(),
                y_desc.get(), y_dev.get(), 16, &returned, forward.data(), nullptr, 0),
            CUDNN_STATUS_SUCCESS);
  EXPECT_LT(expect_timed_order(forward, returned, 0), forward_runs);
  bool alloc_failed = false;
  for (int i = 0; i < returned; ++i) alloc_failed |= forward[i].status == CUDNN_STATUS_ALLOC_FAILED;
  EXPECT_TRUE(alloc_failed);
  // A workspace in host memory is refused.
  std::vector<char> host_workspace(64);
  EXPECT_EQ(cudnnFindConvolutionForwardAlgorithmEx(
                this->handle_, x_desc.get(), x_dev.get(), w_desc.get(), w_dev.get(), conv.get(),
                y_desc.get(), y_dev.get(), 16, &returned, forward.data(), host_workspace.data(),
                host_workspace.size()),
            CUDNN_STATUS_BAD_PARAM);
}

TYPED_TEST(CudnnEmuTypedTest, GettersRankAlgorithmsACallerMustChooseAmong) {
  using T = TypeParam;
  constexpr bool kFloat = std::is_same_v<T, float>;
  const Conv2d g = OddConvolution();  // dilated and strided: no FFT or Winograd
  const Tensor x_desc(kType<T>, g.x_dims()), y_desc(kType<T>, g.y_dims());
  const Filter w_desc(kType<T>, g.w_dims());
  const Convolution conv(g, kType<T>, kFloat ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH);
  std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(16);
  int returned = 0;
  ASSERT_EQ(cudnnGetConvolutionBackwardDataAlgorithm_v7(this->handle_, w_desc.get(), y_desc.get(),
                                                        conv.get(), x_desc.get(), 16, &returned,
                                                        perf.data()),
            CUDNN_STATUS_SUCCESS);
  ASSERT_GE(returned, 4);
  bool seen_unsupported = false, nondeterministic_first = false, workspace = false;
  bool tensor_op = false;
  for (int i = 0; i < returned; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) {
      seen_unsupported = true;
      continue;
    }
    EXPECT_FALSE(seen_unsupported) << "runnable entries come first";
    tensor_op |= perf[i].mathType == CUDNN_TENSOR_OP_MATH;
    workspace |= perf[i].memory > 0;
    if (perf[i].mathType != CUDNN_TENSOR_OP_MATH && !nondeterministic_first) {
      nondeterministic_first = perf[i].determinism == CUDNN_NON_DETERMINISTIC;
    }
    if (perf[i].mathType != CUDNN_TENSOR_OP_MATH) {
      EXPECT_EQ(perf[i].mathType, kFloat ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH);
    }
  }
  EXPECT_TRUE(seen_unsupported);
  EXPECT_TRUE(nondeterministic_first);
  EXPECT_TRUE(workspace);
  EXPECT_EQ(tensor_op, kFloat) << "tensor-op entries are for float only";
  // An algorithm the geometry rules out.
  size_t bytes = 0;
  EXPECT_EQ(cudnnGetConvolutionBackwardDataWorkspaceSize(
                this->handle_, w_desc.get(), y_desc.get(), conv.get(), x_desc.get(),
                CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT, &bytes),
            CUDNN_STATUS_NOT_SUPPORTED);
}

TEST_F(CudnnEmuTest, FloatConvolutionsRoundToTf32UnlessFmaMath) {
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

TYPED_TEST(CudnnEmuTypedTest, BiasIsAddedAndItsGradientSummed) {
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

// ---- Pooling ----

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

TYPED_TEST(CudnnEmuTypedTest, PoolingMatchesWindowsOverThePaddedInput) {
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

// ---- LRN, activations, softmax (double, so that gradients can be checked numerically) ----

// The gradient of sum(dy * f(x)) by central differences.
std::vector<double> NumericGradient(
    const std::function<std::vector<double>(std::vector<double>)>& f, std::vector<double> x,
    const std::vector<double>& dy) {
  std::vector<double> dx(x.size());
  const double step = 1e-6;
  for (size_t j = 0; j < x.size(); ++j) {
    const double saved = x[j];
    x[j] = saved + step;
    const std::vector<double> up = f(x);
    x[j] = saved - step;
    const std::vector<double> down = f(x);
    x[j] = saved;
    for (size_t i = 0; i < up.size(); ++i) dx[j] += dy[i] * (up[i] - down[i]) / (2 * step);
  }
  return dx;
}

void ExpectClose(const std::vector<double>& expected, const std::vector<double>& actual,
                 double tolerance, const char* what) {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_NEAR(expected[i], actual[i], tolerance * (1 + std::abs(expected[i])))
        << what << "[" << i << "]";
  }
}

TEST_F(CudnnEmuTest, LrnFollowsCudnnsFormulaAndWindow) {
  const std::vector<int> dims = {2, 7, 3, 2};
  const int channels = 7, inner = 6;
  const Tensor desc(CUDNN_DATA_DOUBLE, dims);
  const std::vector<double> x = Random<double>(Count(dims), 13), dy = Random<double>(x.size(), 14);
  DeviceArray<double> x_dev(x.size()), y_dev(x.size()), dy_dev(x.size()), dx_dev(x.size());
  x_dev.Write(x);
  dy_dev.Write(dy);
  const double one = 1, zero = 0;
  // An even window reaches one channel further ahead than behind.
  for (unsigned n : {5u, 4u}) {
    SCOPED_TRACE(::testing::Message() << "lrnN " << n);
    const double alpha = 0.5, beta = 0.75, k = 2;
    auto reference = [&](const std::vector<double>& in) {
      std::vector<double> out(in.size());
      const int behind = (int(n) - 1) / 2, ahead = int(n) - 1 - behind;
      for (int plane = 0; plane < 2; ++plane)
        for (int c = 0; c < channels; ++c)
          for (int s = 0; s < inner; ++s) {
            double sum = 0;
            for (int j = c - behind; j <= c + ahead; ++j) {
              if (j >= 0 && j < channels)
                sum += std::pow(in[(plane * channels + j) * inner + s], 2);
            }
            const int at = (plane * channels + c) * inner + s;
            out[at] = in[at] / std::pow(k + alpha / n * sum, beta);
          }
      return out;
    };
    cudnnLRNDescriptor_t lrn;
    ASSERT_EQ(cudnnCreateLRNDescriptor(&lrn), CUDNN_STATUS_SUCCESS);
    ASSERT_EQ(cudnnSetLRNDescriptor(lrn, n, alpha, beta, k), CUDNN_STATUS_SUCCESS);
    ASSERT_EQ(cudnnLRNCrossChannelForward(handle_, lrn, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one,
                                          desc.get(), x_dev.get(), &zero, desc.get(), y_dev.get()),
              CUDNN_STATUS_SUCCESS);
    ExpectClose(reference(x), y_dev.Read(), 1e-12, "y");
    ASSERT_EQ(
        cudnnLRNCrossChannelBackward(handle_, lrn, CUDNN_LRN_CROSS_CHANNEL_DIM1, &one, desc.get(),
                                     y_dev.get(), desc.get(), dy_dev.get(), desc.get(), x_dev.get(),
                                     &zero, desc.get(), dx_dev.get()),
        CUDNN_STATUS_SUCCESS);
    ExpectClose(NumericGradient(reference, x, dy), dx_dev.Read(), 1e-7, "dx");
    EXPECT_EQ(cudnnSetLRNDescriptor(lrn, CUDNN_LRN_MAX_N + 1, alpha, beta, k),
              CUDNN_STATUS_BAD_PARAM);
    cudnnDestroyLRNDescriptor(lrn);
  }
}

TEST_F(CudnnEmuTest, ActivationsAndTheirGradients) {
  const std::vector<int> dims = {2, 3, 4, 5};
  const Tensor desc(CUDNN_DATA_DOUBLE, dims);
  const std::vector<double> x = Random<double>(Count(dims), 15), dy = Random<double>(x.size(), 16);
  DeviceArray<double> x_dev(x.size()), y_dev(x.size()), dy_dev(x.size()), dx_dev(x.size());
  x_dev.Write(x);
  dy_dev.Write(dy);
  const double one = 1, zero = 0;
  struct Case {
    cudnnActivationMode_t mode;
    double coef;
    double (*f)(double);
  };
  const Case cases[] = {
      {CUDNN_ACTIVATION_RELU, 0, [](double v) { return v > 0 ? v : 0.0; }},
      {CUDNN_ACTIVATION_SIGMOID, 0, [](double v) { return 1 / (1 + std::exp(-v)); }},
      {CUDNN_ACTIVATION_TANH, 0, [](double v) { return std::tanh(v); }},
      {CUDNN_ACTIVATION_CLIPPED_RELU, 0.5,
       [](double v) { return std::min(std::max(v, 0.0), 0.5); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "mode " << c.mode);
    cudnnActivationDescriptor_t activation;
    ASSERT_EQ(cudnnCreateActivationDescriptor(&activation), CUDNN_STATUS_SUCCESS);
    ASSERT_EQ(cudnnSetActivationDescriptor(activation, c.mode, CUDNN_PROPAGATE_NAN, c.coef),
              CUDNN_STATUS_SUCCESS);
    auto reference = [&c](std::vector<double> in) {
      for (double& v : in) v = c.f(v);
      return in;
    };
    ASSERT_EQ(cudnnActivationForward(handle_, activation, &one, desc.get(), x_dev.get(), &zero,
                                     desc.get(), y_dev.get()),
              CUDNN_STATUS_SUCCESS);
    ExpectClose(reference(x), y_dev.Read(), 1e-14, "y");
    // In place, as cuDNN allows: dx over dy.
    DeviceArray<double> in_place(x.size());
    in_place.Write(dy);
    ASSERT_EQ(cudnnActivationBackward(handle_, activation, &one, desc.get(), y_dev.get(),
                                      desc.get(), in_place.get(), desc.get(), x_dev.get(), &zero,
                                      desc.get(), in_place.get()),
              CUDNN_STATUS_SUCCESS);
    ExpectClose(NumericGradient(reference, x, dy), in_place.Read(), 1e-7, "dx");
    cudnnDestroyActivationDescriptor(activation);
  }
}

// Calls are queued on the handle's stream (docs/CUDA_EMU.md) with what cuDNN reads at the call: a
// descriptor set again and scaling factors changed before the queue runs change nothing.
TEST_F(CudnnEmuTest, CallsAreQueuedOnTheHandlesStreamAsTheyWereMade) {
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudnnSetStream(handle_, stream), CUDNN_STATUS_SUCCESS);
  const Tensor desc(CUDNN_DATA_FLOAT, {1, 2, 1, 3});
  DeviceArray<float> x(6), y(6);
  x.Write({-1, 2, -3, 4, 5, -6});
  y.Write({10, 10, 10, 10, 10, 10});
  cudnnActivationDescriptor_t activation;
  ASSERT_EQ(cudnnCreateActivationDescriptor(&activation), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnSetActivationDescriptor(activation, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0),
            CUDNN_STATUS_SUCCESS);
  float alpha = 2, beta = 1;
  ASSERT_EQ(cudnnActivationForward(handle_, activation, &alpha, desc.get(), x.get(), &beta,
                                   desc.get(), y.get()),
            CUDNN_STATUS_SUCCESS);
  alpha = 100;
  beta = 0;
  ASSERT_EQ(cudnnSetActivationDescriptor(activation, CUDNN_ACTIVATION_TANH, CUDNN_PROPAGATE_NAN,
                                         0),
            CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(y.Read(), std::vector<float>(6, 10)) << "the default stream does not wait for it";
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(y.Read(), (std::vector<float>{10, 14, 10, 18, 20, 10}));
  cudnnDestroyActivationDescriptor(activation);
  ASSERT_EQ(cudnnSetStream(handle_, nullptr), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(CudnnEmuTest, ReluPropagatesNanOnlyWhenAsked) {
  const Tensor desc(CUDNN_DATA_FLOAT, {1, 1, 1, 3});
  DeviceArray<float> x(3), y(3);
  x.Write({std::numeric_limits<float>::quiet_NaN(), -1, 2});
  const float one = 1, zero = 0;
  cudnnActivationDescriptor_t relu;
  ASSERT_EQ(cudnnCreateActivationDescriptor(&relu), CUDNN_STATUS_SUCCESS);
  for (cudnnNanPropagation_t nan : {CUDNN_PROPAGATE_NAN, CUDNN_NOT_PROPAGATE_NAN}) {
    ASSERT_EQ(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, nan, 0),
              CUDNN_STATUS_SUCCESS);
    ASSERT_EQ(cudnnActivationForward(handle_, relu, &one, desc.get(), x.get(), &zero, desc.get(),
                                     y.get()),
              CUDNN_STATUS_SUCCESS);
    const std::vector<float> values = y.Read();
    EXPECT_EQ(std::isnan(values[0]), nan == CUDNN_PROPAGATE_NAN);
    EXPECT_EQ(values[1], 0.0f);
    EXPECT_EQ(values[2], 2.0f);
  }
  cudnnDestroyActivationDescriptor(relu);
}

TEST_F(CudnnEmuTest, SoftmaxOverChannelsOrInstances) {
  const std::vector<int> dims = {2, 4, 3, 2};
  const int channels = 4, inner = 6;
  const Tensor desc(CUDNN_DATA_DOUBLE, dims);
  std::vector<double> x = Random<double>(Count(dims), 17);
  x[0] = 30;  // ACCURATE and LOG subtract the maximum
  const std::vector<double> dy = Random<double>(x.size(), 18);
  DeviceArray<double> x_dev(x.size()), y_dev(x.size()), dy_dev(x.size()), dx_dev(x.size());
  x_dev.Write(x);
  dy_dev.Write(dy);
  const double one = 1, zero = 0;
  for (cudnnSoftmaxMode_t mode : {CUDNN_SOFTMAX_MODE_CHANNEL, CUDNN_SOFTMAX_MODE_INSTANCE}) {
    for (cudnnSoftmaxAlgorithm_t algo :
         {CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_FAST, CUDNN_SOFTMAX_LOG}) {
      SCOPED_TRACE(::testing::Message() << "mode " << mode << ", algorithm " << algo);
      // Groups: per (image, position) over channels, or per image over everything.
      auto reference = [&](const std::vector<double>& in) {
        std::vector<double> out(in.size());
        const int group_size = mode == CUDNN_SOFTMAX_MODE_CHANNEL ? channels : channels * inner;
        const int stride = mode == CUDNN_SOFTMAX_MODE_CHANNEL ? inner : 1;
        const int groups_per_image = mode == CUDNN_SOFTMAX_MODE_CHANNEL ? inner : 1;
        for (int image = 0; image < 2; ++image)
          for (int g = 0; g < groups_per_image; ++g) {
            const int base = image * channels * inner + g;
            double sum = 0;
            for (int i = 0; i < group_size; ++i) sum += std::exp(in[base + i * stride]);
            for (int i = 0; i < group_size; ++i) {
              const double value = in[base + i * stride];
              out[base + i * stride] =
                  algo == CUDNN_SOFTMAX_LOG ? value - std::log(sum) : std::exp(value) / sum;
            }
          }
        return out;
      };
      ASSERT_EQ(cudnnSoftmaxForward(handle_, algo, mode, &one, desc.get(), x_dev.get(), &zero,
                                    desc.get(), y_dev.get()),
                CUDNN_STATUS_SUCCESS);
      ExpectClose(reference(x), y_dev.Read(), 1e-12, "y");
      ASSERT_EQ(cudnnSoftmaxBackward(handle_, algo, mode, &one, desc.get(), y_dev.get(), desc.get(),
                                     dy_dev.get(), &zero, desc.get(), dx_dev.get()),
                CUDNN_STATUS_SUCCESS);
      ExpectClose(NumericGradient(reference, x, dy), dx_dev.Read(), 1e-6, "dx");
    }
  }
}

// ---- What cuDNN or a GPU would reject ----

class CudnnEmuErrorTest : public CudnnEmuTest {
 protected:
  CudnnEmuErrorTest()
      : g_{1, 4, 6, 6, 2, 3, 3, 0, 0, 1, 1, 1, 1, 1},
        x_desc_(CUDNN_DATA_FLOAT, g_.x_dims()),
        y_desc_(CUDNN_DATA_FLOAT, g_.y_dims()),
        w_desc_(CUDNN_DATA_FLOAT, g_.w_dims()),
        conv_(g_, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH),
        x_(Count(g_.x_dims())),
        w_(Count(g_.w_dims())),
        y_(Count(g_.y_dims())) {
    x_.Write(Random<float>(Count(g_.x_dims()), 19));
    w_.Write(Random<float>(Count(g_.w_dims()), 20));
  }
  cudnnStatus_t Forward(const void* x, cudnnConvolutionFwdAlgo_t algo, void* workspace,
                        size_t bytes, void* y, const float* alpha = nullptr) {
    return cudnnConvolutionForward(handle_, alpha ? alpha : &one_, x_desc_.get(), x, w_desc_.get(),
                                   w_.get(), conv_.get(), algo, workspace, bytes, &zero_,
                                   y_desc_.get(), y);
  }
  const float one_ = 1, zero_ = 0;
  const Conv2d g_;
  const Tensor x_desc_, y_desc_;
  const Filter w_desc_;
  const Convolution conv_;
  DeviceArray<float> x_, w_, y_;
};

TEST_F(CudnnEmuErrorTest, DataInHostMemoryFails) {
  std::vector<float> host(Count(g_.x_dims()));
  EXPECT_EQ(Forward(host.data(), CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, y_.get()),
            CUDNN_STATUS_EXECUTION_FAILED);
  EXPECT_EQ(Forward(nullptr, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, y_.get()),
            CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(Forward(x_.get(), CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, y_.get()),
            CUDNN_STATUS_SUCCESS);
}

TEST_F(CudnnEmuErrorTest, AWorkspaceSmallerThanTheGettersSayIsABadParam) {
  const cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_GEMM;
  size_t bytes = 0;
  ASSERT_EQ(cudnnGetConvolutionForwardWorkspaceSize(handle_, x_desc_.get(), w_desc_.get(),
                                                    conv_.get(), y_desc_.get(), algo, &bytes),
            CUDNN_STATUS_SUCCESS);
  ASSERT_GT(bytes, 0u);
  DeviceArray<char> workspace(bytes);
  std::vector<char> host(bytes);
  EXPECT_EQ(Forward(x_.get(), algo, nullptr, 0, y_.get()), CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(Forward(x_.get(), algo, workspace.get(), bytes - 1, y_.get()), CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(Forward(x_.get(), algo, host.data(), bytes, y_.get()), CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(Forward(x_.get(), algo, workspace.get(), bytes, y_.get()), CUDNN_STATUS_SUCCESS);
}

TEST_F(CudnnEmuErrorTest, MismatchedDescriptorsAreRejected) {
  // Filters for 3 channels, x has 4.
  const Filter three(CUDNN_DATA_FLOAT, {2, 3, 3, 3});
  std::vector<int> out(4);
  EXPECT_EQ(
      cudnnGetConvolutionNdForwardOutputDim(conv_.get(), x_desc_.get(), three.get(), 4, out.data()),
      CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(cudnnConvolutionForward(handle_, &one_, x_desc_.get(), x_.get(), three.get(), w_.get(),
                                    conv_.get(), CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr,
                                    0, &zero_, y_desc_.get(), y_.get()),
            CUDNN_STATUS_BAD_PARAM);
  // y's channels differ from the filters' count; y's sides from the output's.
  const Tensor wrong_channels(CUDNN_DATA_FLOAT, {1, 3, 4, 4}),
      wrong_side(CUDNN_DATA_FLOAT, {1, 2, 4, 5});
  for (const Tensor* y : {&wrong_channels, &wrong_side}) {
    EXPECT_EQ(cudnnConvolutionForward(
                  handle_, &one_, x_desc_.get(), x_.get(), w_desc_.get(), w_.get(), conv_.get(),
                  CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, &zero_, y->get(), y_.get()),
              y == &wrong_channels ? CUDNN_STATUS_BAD_PARAM : CUDNN_STATUS_NOT_SUPPORTED);
  }
  // Double filters with float tensors.
  const Filter double_filters(CUDNN_DATA_DOUBLE, g_.w_dims());
  EXPECT_EQ(cudnnGetConvolutionNdForwardOutputDim(conv_.get(), x_desc_.get(), double_filters.get(),
                                                  4, out.data()),
            CUDNN_STATUS_BAD_PARAM);
  // An algorithm that does not handle dilation.
  const Conv2d dilated = {1, 4, 6, 6, 2, 3, 3, 0, 0, 1, 1, 2, 2, 1};
  const Convolution dilated_conv(dilated, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH);
  const Tensor dilated_y(CUDNN_DATA_FLOAT, dilated.y_dims());
  size_t bytes = 0;
  EXPECT_EQ(cudnnGetConvolutionForwardWorkspaceSize(handle_, x_desc_.get(), w_desc_.get(),
                                                    dilated_conv.get(), dilated_y.get(),
                                                    CUDNN_CONVOLUTION_FWD_ALGO_FFT, &bytes),
            CUDNN_STATUS_NOT_SUPPORTED);
}

TEST_F(CudnnEmuErrorTest, OutputsMayNotOverlapInputsUnlessCuDnnSaysSo) {
  DeviceArray<float> shared(Count(g_.x_dims()));
  shared.Write(Random<float>(Count(g_.x_dims()), 21));
  EXPECT_EQ(
      Forward(shared.get(), CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, shared.get() + 8),
      CUDNN_STATUS_BAD_PARAM);
  cudnnActivationDescriptor_t relu;
  ASSERT_EQ(cudnnCreateActivationDescriptor(&relu), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0),
            CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(cudnnActivationForward(handle_, relu, &one_, x_desc_.get(), shared.get(), &zero_,
                                   x_desc_.get(), shared.get()),
            CUDNN_STATUS_SUCCESS)
      << "activations run in place";
  // In place needs identical descriptors: the same elements in another order is not in place.
  const Tensor transposed(CUDNN_DATA_FLOAT, g_.x_dims(), {144, 36, 1, 6});
  EXPECT_EQ(cudnnActivationForward(handle_, relu, &one_, x_desc_.get(), shared.get(), &zero_,
                                   transposed.get(), shared.get()),
            CUDNN_STATUS_BAD_PARAM);
  // Interleaved without sharing an element: even and odd columns.
  const Tensor even(CUDNN_DATA_FLOAT, {1, 4, 6, 3}, {144, 36, 6, 2});
  EXPECT_EQ(cudnnActivationForward(handle_, relu, &one_, even.get(), shared.get(), &zero_,
                                   even.get(), shared.get() + 1),
            CUDNN_STATUS_SUCCESS);
  cudnnDestroyActivationDescriptor(relu);
}

TEST_F(CudnnEmuErrorTest, ScalingFactorsAreReadOnTheHost) {
  DeviceArray<float> device_alpha(1);
  device_alpha.Write({1.0f});
  EXPECT_EQ(Forward(x_.get(), CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, y_.get(),
                    device_alpha.get()),
            CUDNN_STATUS_BAD_PARAM);
}

TEST_F(CudnnEmuErrorTest, AHandleWorksOnTheGpuItWasMadeOn) {
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  cudnnHandle_t other = nullptr;
  ASSERT_EQ(cudnnCreate(&other), CUDNN_STATUS_SUCCESS);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_EQ(cudnnConvolutionForward(other, &one_, x_desc_.get(), x_.get(), w_desc_.get(), w_.get(),
                                    conv_.get(), CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr,
                                    0, &zero_, y_desc_.get(), y_.get()),
            CUDNN_STATUS_EXECUTION_FAILED);
  EXPECT_EQ(cudnnDestroy(other), CUDNN_STATUS_SUCCESS);
}

TEST_F(CudnnEmuTest, DescriptorsCheckWhatTheyAreSetTo) {
  cudnnTensorDescriptor_t tensor;
  ASSERT_EQ(cudnnCreateTensorDescriptor(&tensor), CUDNN_STATUS_SUCCESS);
  const int dims[] = {2, 3, 4, 5}, strides[] = {60, 20, 5, 1}, zero_dims[] = {2, 0, 4, 5};
  EXPECT_EQ(cudnnSetTensorNdDescriptor(tensor, CUDNN_DATA_FLOAT, 3, dims, strides),
            CUDNN_STATUS_NOT_SUPPORTED)
      << "cuDNN wants at least 4 dims";
  EXPECT_EQ(cudnnSetTensorNdDescriptor(tensor, CUDNN_DATA_FLOAT, 4, zero_dims, strides),
            CUDNN_STATUS_BAD_PARAM);
  ASSERT_EQ(cudnnSetTensorNdDescriptor(tensor, CUDNN_DATA_DOUBLE, 4, dims, strides),
            CUDNN_STATUS_SUCCESS);
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  int rank = 0;
  std::vector<int> got_dims(8), got_strides(8);
  ASSERT_EQ(
      cudnnGetTensorNdDescriptor(tensor, 8, &type, &rank, got_dims.data(), got_strides.data()),
      CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(type, CUDNN_DATA_DOUBLE);
  EXPECT_EQ(rank, 4);
  EXPECT_EQ(std::vector<int>(got_dims.begin(), got_dims.begin() + 4),
            std::vector<int>(dims, dims + 4));
  EXPECT_EQ(std::vector<int>(got_strides.begin(), got_strides.begin() + 4),
            std::vector<int>(strides, strides + 4));
  cudnnDestroyTensorDescriptor(tensor);
  cudnnConvolutionDescriptor_t conv;
  ASSERT_EQ(cudnnCreateConvolutionDescriptor(&conv), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(cudnnSetConvolutionGroupCount(conv, 0), CUDNN_STATUS_BAD_PARAM);
  const int pad[] = {-1, 0}, one[] = {1, 1};
  EXPECT_EQ(cudnnSetConvolutionNdDescriptor(conv, 2, pad, one, one, CUDNN_CROSS_CORRELATION,
                                            CUDNN_DATA_FLOAT),
            CUDNN_STATUS_BAD_PARAM);
  cudnnDestroyConvolutionDescriptor(conv);
  EXPECT_STREQ(cudnnGetErrorString(CUDNN_STATUS_BAD_PARAM), "CUDNN_STATUS_BAD_PARAM");
}

}  // namespace
}  // namespace caffe_emu_test
