// The emulator's cuDNN LRN, activations and softmax (src/cuda_emu/cudnn/lrn.cpp, activation.cpp,
// softmax.cpp) against direct computations, in double, so that their gradients can be checked
// by central differences of the forward reference. Its main (emu_test_main.cpp) makes two
// emulated GPUs.
//
// Legend: N images, C channels; tensors are packed NCHW.
#include <cuda_runtime.h>
#include <cudnn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "cudnn_test_support.hpp"
#include "device_array.hpp"

namespace caffe_emu_test {
namespace {

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

TEST_F(CuDNNEmuTest, LrnFollowsCuDNNsFormulaAndWindow) {
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

TEST_F(CuDNNEmuTest, ActivationsAndTheirGradients) {
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

TEST_F(CuDNNEmuTest, ReluPropagatesNanOnlyWhenAsked) {
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

TEST_F(CuDNNEmuTest, SoftmaxOverChannelsOrInstances) {
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

}  // namespace
}  // namespace caffe_emu_test
