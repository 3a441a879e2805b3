// LogLayer: shape, hand-computed values for base e and base 2 with scale and shift, finite
// differences on positive inputs, and rejected bases.
// LogLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <cmath>
#include <vector>

#include "caffe/layers/log_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class LogLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  // Positive inputs: the log's domain (also after the shifts the tests use).
  LogLayerTest() : bottom_(vector<int>{2, 3, 4, 5}) {
    FillUniform<Dtype>(&bottom_, 1701, Dtype(0.5), Dtype(2));
  }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(LogLayerTest, TestDtypesAndDevices);

TYPED_TEST(LogLayerTest, IsRegisteredAsLog) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("name: 'l' type: 'Log'"));
  EXPECT_STREQ(layer->type(), "Log");
}

TYPED_TEST(LogLayerTest, TopHasBottomShape) {
  using Dtype = typename TypeParam::Dtype;
  LogLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
}

TYPED_TEST(LogLayerTest, DefaultIsNaturalLog) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{3}), top;
  const Dtype x[] = {Dtype(0.5), 1, 4};
  caffe_copy(3, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  LogLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  const double expected[] = {-0.693147180560, 0, 1.386294361120};
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(top.cpu_data()[i], expected[i], 1e-6) << i;
  caffe_set(3, Dtype(2), top.mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  const double expected_dx[] = {4, 2, 0.5};  // 2 / x
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(bottom.cpu_diff()[i], expected_dx[i], 1e-6) << i;
}

TYPED_TEST(LogLayerTest, BaseScaleShiftMatchHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{3}), top;
  const Dtype x[] = {0, 1, 3};
  caffe_copy(3, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  LogLayer<Dtype> layer(ParseLayerParam("log_param { base: 2 scale: 2 shift: 1 }"));
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  // log2(1 + 2x)
  const double expected[] = {0, 1.584962500721, 2.807354922058};
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(top.cpu_data()[i], expected[i], 1e-5) << i;
  caffe_set(3, Dtype(1), top.mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  for (int i = 0; i < 3; ++i) {
    // d/dx log2(1 + 2x) = 2 / ((1 + 2x) ln 2)
    EXPECT_NEAR(bottom.cpu_diff()[i], 2 / ((1 + 2 * x[i]) * std::log(2.0)), 1e-5) << i;
  }
}

TYPED_TEST(LogLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* text : {"", "log_param { base: 2 scale: 0.5 shift: 1 }",
                           "log_param { base: 10 scale: 3 shift: -0.2 }"}) {
    SCOPED_TRACE(text);
    LogLayer<Dtype> layer(ParseLayerParam(text));
    GradientChecker<Dtype> checker(Dtype(1e-3), Dtype(1e-2));
    checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
  }
}

TYPED_TEST(LogLayerTest, RejectsBadBase) {
  using Dtype = typename TypeParam::Dtype;
  // Negative, zero, and 1 (whose log is 0, so 1 / log(base) is infinite).
  for (const char* text :
       {"log_param { base: -3 }", "log_param { base: 0 }", "log_param { base: 1 }"}) {
    SCOPED_TRACE(text);
    LogLayer<Dtype> layer(ParseLayerParam(text));
    EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), Error);
  }
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class LogLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(LogLayerGpuTest, TestDtypes);

TYPED_TEST(LogLayerGpuTest, Log) {
  GpuLayerCase<TypeParam> natural =
      MakeGpuCase<TypeParam>("name: 'log' type: 'Log' bottom: 'x' top: 'y'", {kGpuCheckShape});
  natural.fill = UniformFill<TypeParam>(0.2, 5);
  ExpectGpuMatchesCpu(natural);
  GpuLayerCase<TypeParam> affine = MakeGpuCase<TypeParam>(
      "name: 'log10' type: 'Log' log_param { base: 10 scale: 2 shift: 0.5 } bottom: 'x' top: 'y'",
      {kGpuCheckLargeShape});
  affine.fill = UniformFill<TypeParam>(0.1, 4);
  ExpectGpuMatchesCpu(affine);
}

}  // namespace caffe
