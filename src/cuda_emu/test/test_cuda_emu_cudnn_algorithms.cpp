// The convolution algorithms the emulator's cuDNN offers (src/cuda_emu/cudnn/
// convolution_algorithm*.cpp): every algorithm the getters list runs with the workspace they
// report and computes the same result; the Find calls time them within the workspace given; the
// getters' ranking leaves the caller a choice to make. Its main (emu_test_main.cpp) makes two
// emulated GPUs.
#include <cuda_runtime.h>
#include <cudnn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "conv2d_reference.hpp"
#include "cudnn_test_support.hpp"
#include "device_array.hpp"

namespace caffe_emu_test {
namespace {

TYPED_TEST_SUITE(CuDNNEmuTypedTest, CuDNNTypes);

// Every algorithm the getters list as runnable runs with the workspace they report, and all
// compute the same result.
TYPED_TEST(CuDNNEmuTypedTest, EveryListedAlgorithmComputesTheSameResult) {
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
TYPED_TEST(CuDNNEmuTypedTest, FindTimesAlgorithmsWithinTheWorkspaceGiven) {
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
  ASSERT_EQ(cudnnFindConvolutionForwardAlgorithmEx(this->handle_, x_desc.get(), x_dev.get(),
                                                   w_desc.get(), w_dev.get(), conv.get(),
                                                   y_desc.get(), y_dev.get(), 16, &returned,
                                                   forward.data(), workspace.get(), kWorkspace),
            CUDNN_STATUS_SUCCESS);
  const int forward_runs = expect_timed_order(forward, returned, kWorkspace);
  ExpectNear(g.Forward(x, w), y_dev.Read(), "y");
  int listed_count = 0;
  ASSERT_EQ(
      cudnnGetConvolutionForwardAlgorithm_v7(this->handle_, x_desc.get(), w_desc.get(), conv.get(),
                                             y_desc.get(), 16, &listed_count, listed.data()),
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
                w_desc.get(), dw_dev.get(), 16, &returned, backward_filter.data(), workspace.get(),
                kWorkspace),
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

TYPED_TEST(CuDNNEmuTypedTest, GettersRankAlgorithmsACallerMustChooseAmong) {
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

}  // namespace
}  // namespace caffe_emu_test
