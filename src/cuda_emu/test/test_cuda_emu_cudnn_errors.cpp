// What the emulator's cuDNN rejects, as cuDNN or a GPU would: host memory as data, a too-small
// workspace, mismatched descriptors, outputs overlapping inputs, scaling factors in device
// memory, a handle used on another GPU, descriptors set to what cuDNN refuses. Its main
// (emu_test_main.cpp) makes two emulated GPUs.
#include <cuda_runtime.h>
#include <cudnn.h>
#include <gtest/gtest.h>

#include <vector>

#include "conv2d_reference.hpp"
#include "cudnn_test_support.hpp"
#include "device_array.hpp"

namespace caffe_emu_test {
namespace {

class CuDNNEmuErrorTest : public CuDNNEmuTest {
 protected:
  CuDNNEmuErrorTest()
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

TEST_F(CuDNNEmuErrorTest, DataInHostMemoryFails) {
  std::vector<float> host(Count(g_.x_dims()));
  EXPECT_EQ(Forward(host.data(), CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, y_.get()),
            CUDNN_STATUS_EXECUTION_FAILED);
  EXPECT_EQ(Forward(nullptr, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, y_.get()),
            CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(Forward(x_.get(), CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, y_.get()),
            CUDNN_STATUS_SUCCESS);
}

TEST_F(CuDNNEmuErrorTest, AWorkspaceSmallerThanTheGettersSayIsABadParam) {
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

TEST_F(CuDNNEmuErrorTest, MismatchedDescriptorsAreRejected) {
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

TEST_F(CuDNNEmuErrorTest, OutputsMayNotOverlapInputsUnlessCuDnnSaysSo) {
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

TEST_F(CuDNNEmuErrorTest, ScalingFactorsAreReadOnTheHost) {
  DeviceArray<float> device_alpha(1);
  device_alpha.Write({1.0f});
  EXPECT_EQ(Forward(x_.get(), CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, y_.get(),
                    device_alpha.get()),
            CUDNN_STATUS_BAD_PARAM);
}

TEST_F(CuDNNEmuErrorTest, AHandleWorksOnTheGpuItWasMadeOn) {
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

TEST_F(CuDNNEmuTest, DescriptorsCheckWhatTheyAreSetTo) {
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
