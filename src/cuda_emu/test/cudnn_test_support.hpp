// What the tests of the emulator's cuDNN (test_cuda_emu_cudnn_*.cpp) share: tensor and filter
// descriptors that free themselves, random inputs, the comparison with a reference, and the
// fixtures (a cuDNN handle on GPU 0; typed over float and double with their alpha 1 and beta 0).
#ifndef CAFFE_CUDA_EMU_TEST_CUDNN_TEST_SUPPORT_HPP_
#define CAFFE_CUDA_EMU_TEST_CUDNN_TEST_SUPPORT_HPP_

#include <cuda_runtime.h>
#include <cudnn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <type_traits>
#include <vector>

// Fixtures live outside an unnamed namespace: gtest requires one fixture class per suite, and
// the suites' tests are spread over several files.
namespace caffe_emu_test {

template <typename T>
inline constexpr cudnnDataType_t kType =
    std::is_same_v<T, float> ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;

// Row-major strides of `dims`.
inline std::vector<int> Packed(const std::vector<int>& dims) {
  std::vector<int> strides(dims.size());
  int stride = 1;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= dims[i];
  }
  return strides;
}

inline int Count(const std::vector<int>& dims) {
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

class CuDNNEmuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    ASSERT_EQ(cudnnCreate(&handle_), CUDNN_STATUS_SUCCESS);
  }
  void TearDown() override { cudnnDestroy(handle_); }
  cudnnHandle_t handle_ = nullptr;
};

template <typename T>
class CuDNNEmuTypedTest : public CuDNNEmuTest {
 protected:
  const T one_ = 1, zero_ = 0;
};
using CuDNNTypes = ::testing::Types<float, double>;

}  // namespace caffe_emu_test

#endif  // CAFFE_CUDA_EMU_TEST_CUDNN_TEST_SUPPORT_HPP_
