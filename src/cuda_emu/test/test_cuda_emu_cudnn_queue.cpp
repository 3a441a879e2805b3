// How the emulator's cuDNN runs its calls (src/cuda_emu/cudnn/queue.hpp): queued on the handle's
// stream with what cuDNN reads at the call. Its main (emu_test_main.cpp) makes two emulated GPUs.
#include <cuda_runtime.h>
#include <cudnn.h>
#include <gtest/gtest.h>

#include <vector>

#include "cudnn_test_support.hpp"
#include "device_array.hpp"

namespace caffe_emu_test {
namespace {

// Calls are queued on the handle's stream (docs/CUDA_EMU.md) with what cuDNN reads at the call: a
// descriptor set again and scaling factors changed before the queue runs change nothing.
TEST_F(CuDNNEmuTest, CallsAreQueuedOnTheHandlesStreamAsTheyWereMade) {
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
  ASSERT_EQ(cudnnSetActivationDescriptor(activation, CUDNN_ACTIVATION_TANH, CUDNN_PROPAGATE_NAN, 0),
            CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(y.Read(), std::vector<float>(6, 10)) << "the default stream does not wait for it";
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(y.Read(), (std::vector<float>{10, 14, 10, 18, 20, 10}));
  cudnnDestroyActivationDescriptor(activation);
  ASSERT_EQ(cudnnSetStream(handle_, nullptr), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

}  // namespace
}  // namespace caffe_emu_test
