#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "caffe/kernels/denormals.hpp"
#include "caffe/net.hpp"
#include "caffe/test/scoped_env.hpp"
#include "caffe/util/error.hpp"

namespace caffe {
namespace {

// Computed at run time, so the compiler cannot fold the product into a constant.
float Product(float a, float b) {
  volatile float x = a;
  volatile float y = b;
  return x * y;
}

constexpr float kTiny = 1e-20f;  // kTiny * kTiny = 1e-40: a denormal float

class DenormalsTest : public ::testing::Test {
 protected:
  void SetUp() override { SetFlushDenormals(true); }
  void TearDown() override { ReadFlushDenormalsSetting(); }
};

TEST_F(DenormalsTest, ScopeFlushesAndThenRestoresTheThreadsMode) {
  ASSERT_FALSE(ThisThreadFlushesDenormals()) << "the test thread starts with IEEE denormals";
  ASSERT_GT(Product(kTiny, kTiny), 0.f);
  {
    ScopedFlushDenormals flush;
    EXPECT_TRUE(ThisThreadFlushesDenormals());
    EXPECT_EQ(Product(kTiny, kTiny), 0.f);  // flush to zero
    const float denormal = std::numeric_limits<float>::denorm_min();
    EXPECT_EQ(Product(denormal, 1e30f), 0.f);  // denormals are zero (1.4e-15 with IEEE)
    {
      ScopedFlushDenormals nested;
      EXPECT_TRUE(ThisThreadFlushesDenormals());
    }
    EXPECT_TRUE(ThisThreadFlushesDenormals()) << "a nested scope must not undo its outer one";
  }
  EXPECT_FALSE(ThisThreadFlushesDenormals());
  EXPECT_GT(Product(kTiny, kTiny), 0.f);
}

TEST_F(DenormalsTest, TheOpenMpThreadsOfParallelLoopsFlushToo) {
  ScopedFlushDenormals flush;
  std::vector<int> flushes(4, -1);
#pragma omp parallel for num_threads(4) schedule(static, 1)
  for (int i = 0; i < 4; ++i) flushes[i] = ThisThreadFlushesDenormals() ? 1 : 0;
  EXPECT_EQ(flushes, std::vector<int>(4, 1));
}

TEST_F(DenormalsTest, OffKeepsIeeeDenormals) {
  SetFlushDenormals(false);
  ScopedFlushDenormals flush;
  EXPECT_FALSE(ThisThreadFlushesDenormals());
  EXPECT_GT(Product(kTiny, kTiny), 0.f);
}

TEST_F(DenormalsTest, TheVariableSaysOneOrZeroAndAnythingElseIsAnErrorNamingIt) {
  {
    ScopedEnv env("CAFFE_FLUSH_DENORMALS", "0");
    EXPECT_FALSE(ReadFlushDenormalsSetting());
    EXPECT_FALSE(FlushDenormalsEnabled());
  }
  {
    ScopedEnv env("CAFFE_FLUSH_DENORMALS", "1");
    EXPECT_TRUE(ReadFlushDenormalsSetting());
  }
  ScopedEnv env("CAFFE_FLUSH_DENORMALS", "yes");
  try {
    ReadFlushDenormalsSetting();
    FAIL() << "CAFFE_FLUSH_DENORMALS=yes was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("CAFFE_FLUSH_DENORMALS is \"yes\"; expected 1"),
              std::string::npos)
        << error.what();
  }
}

// y = 1e-20 * x: forward and backward of x = 1e-20 and dy = 1e-20 give denormals.
std::unique_ptr<Net<float>> ScalingNet() {
  NetParameter param;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "name: 'scaling' force_backward: true "
      "layer { name: 'x' type: 'Input' top: 'x' input_param { shape { dim: 2 dim: 3 } } } "
      "layer { name: 'y' type: 'Power' bottom: 'x' top: 'y' power_param { scale: 1e-20 } }",
      &param));
  auto net = std::make_unique<Net<float>>(param);
  Blob<float>* x = net->blob_by_name("x").get();
  for (int i = 0; i < x->count(); ++i) x->mutable_cpu_data()[i] = kTiny;
  return net;
}

TEST_F(DenormalsTest, NetsComputeDenormalsAsZerosInBothPasses) {
  Caffe::set_mode(Caffe::CPU);
  for (const bool flush : {true, false}) {
    SetFlushDenormals(flush);
    std::unique_ptr<Net<float>> net = ScalingNet();
    net->Forward();
    Blob<float>* y = net->blob_by_name("y").get();
    for (int i = 0; i < y->count(); ++i) y->mutable_cpu_diff()[i] = kTiny;
    net->Backward();
    const Blob<float>* x = net->blob_by_name("x").get();
    for (int i = 0; i < y->count(); ++i) {
      if (flush) {
        EXPECT_EQ(y->cpu_data()[i], 0.f) << i;
        EXPECT_EQ(x->cpu_diff()[i], 0.f) << i;
      } else {
        EXPECT_GT(y->cpu_data()[i], 0.f) << i;
        EXPECT_GT(x->cpu_diff()[i], 0.f) << i;
      }
    }
    EXPECT_FALSE(ThisThreadFlushesDenormals()) << "the caller's mode comes back after a pass";
  }
}

}  // namespace
}  // namespace caffe
