// Shared test scaffolding: typed-test lists over data types and devices, the fixture that sets the
// compute mode, where the shared fixtures live, and small helpers for building layer parameters.
#ifndef CAFFE_TEST_TEST_CAFFE_MAIN_HPP_
#define CAFFE_TEST_TEST_CAFFE_MAIN_HPP_

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/common.hpp"
#include "caffe/proto/caffe.pb.h"

namespace caffe {

/// A device for typed tests: its Dtype and the mode the test runs in.
template <typename TypeParam>
struct CPUDevice {
  using Dtype = TypeParam;
  static constexpr Caffe::Brew device = Caffe::CPU;
};
template <typename TypeParam>
struct GPUDevice {
  using Dtype = TypeParam;
  static constexpr Caffe::Brew device = Caffe::GPU;
};

using TestDtypes = ::testing::Types<float, double>;
#ifdef CPU_ONLY
using TestDtypesAndDevices = ::testing::Types<CPUDevice<float>, CPUDevice<double>>;
#elif defined(CAFFE_TEST_GPU_DEVICES_ONLY)
// A GPU-scope build (CAFFE_TEST_SCOPE=gpu): the CPU variant runs the CPU cases.
using TestDtypesAndDevices = ::testing::Types<GPUDevice<float>, GPUDevice<double>>;
#else
using TestDtypesAndDevices =
    ::testing::Types<CPUDevice<float>, CPUDevice<double>, GPUDevice<float>, GPUDevice<double>>;
#endif

/// Base fixture for tests typed over TestDtypesAndDevices: sets the mode and a fixed seed; GPU
/// variants skip (with the reason) where no GPU can be used.
template <typename TypeParam>
class MultiDeviceTest : public ::testing::Test {
 public:
  using Dtype = typename TypeParam::Dtype;

 protected:
  MultiDeviceTest() {
    Caffe::set_mode(TypeParam::device);
    Caffe::set_random_seed(1701);
  }
  void SetUp() override {
    if (TypeParam::device == Caffe::GPU && !Caffe::GpuAvailable()) {
      GTEST_SKIP() << "no GPU available on this machine";
    }
  }
  ~MultiDeviceTest() override = default;
};

/// The shared folder holding reference files and golden fixtures: $CAFFE_SHARED_DIR if set, else
/// ../shared beside the source tree. Returns "" when it does not exist.
std::string SharedDir();
/// The repository root this test program was built from (CMake's PROJECT_SOURCE_DIR).
std::string SourceDir();
/// The build folder this test program belongs to (PROJECT_BINARY_DIR); the tools are in its bin/.
std::string BuildDir();
/// Skips the current test with a reason when the shared folder is absent.
#define CAFFE_REQUIRE_SHARED_DIR()                                                         \
  if (::caffe::SharedDir().empty()) {                                                      \
    GTEST_SKIP() << "shared fixtures not found (set CAFFE_SHARED_DIR or place ../shared)"; \
  }

/// Parses a LayerParameter from prototxt text, failing the test on a syntax error.
LayerParameter ParseLayerParam(const std::string& text);

/// Fills a blob's data with N(0, 1) values from a fixed seed.
template <typename Dtype>
void FillGaussian(Blob<Dtype>* blob, unsigned int seed, Dtype std = 1);
/// Fills a blob's data with U(low, high) values from a fixed seed.
template <typename Dtype>
void FillUniform(Blob<Dtype>* blob, unsigned int seed, Dtype low, Dtype high);
/// `count` U(-1, 1) floats from a fixed seed (the same draw as FillUniform's).
std::vector<float> UniformValues(size_t count, unsigned int seed);

/// A fresh temporary directory; all of them are removed when the test program passes.
std::string MakeTempDir(const std::string& prefix);

/// The message of the caffe::Error that `action` throws ("" when it throws none).
std::string ErrorOf(const std::function<void()>& action);

}  // namespace caffe

#endif  // CAFFE_TEST_TEST_CAFFE_MAIN_HPP_
