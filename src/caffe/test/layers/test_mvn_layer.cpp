// MVNLayer: shape, hand-computed normalization (per channel, across channels, mean only; eps
// added to the std), zero mean / unit variance on random data, finite differences for every
// mode, and arity errors.
// MVNLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <cmath>
#include <string>
#include <vector>

#include "caffe/layers/mvn_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class MVNLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  MVNLayerTest() : bottom_(vector<int>{2, 3, 4, 5}), small_(vector<int>{1, 2, 1, 3}) {
    FillGaussian<Dtype>(&bottom_, 1701);
    const Dtype x[] = {1, 2, 3, 4, 4, 4};  // channel 0: spread; channel 1: constant
    caffe_copy(6, x, small_.mutable_cpu_data());
  }
  // Forward of `small_` under `text`.
  vector<Dtype> ForwardSmall(const std::string& text) {
    Blob<Dtype> top;
    Blobs<Dtype> bottom_vec{&small_}, top_vec{&top};
    MVNLayer<Dtype> layer(ParseLayerParam(text));
    layer.SetUp(bottom_vec, top_vec);
    layer.Forward(bottom_vec, top_vec);
    return vector<Dtype>(top.cpu_data(), top.cpu_data() + top.count());
  }
  Blob<Dtype> bottom_, small_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(MVNLayerTest, TestDtypesAndDevices);

TYPED_TEST(MVNLayerTest, IsRegisteredAsMVN) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("name: 'm' type: 'MVN'"));
  EXPECT_STREQ(layer->type(), "MVN");
}

TYPED_TEST(MVNLayerTest, TopHasBottomShape) {
  using Dtype = typename TypeParam::Dtype;
  MVNLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
}

TYPED_TEST(MVNLayerTest, NormalizesEachChannel) {
  const auto y = this->ForwardSmall("");
  // Channel 0: mean 2, std sqrt(2/3); channel 1: std 0, so (x - mean) / eps = 0.
  const double expected[] = {-1.224744871392, 0, 1.224744871392, 0, 0, 0};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(y[i], expected[i], 1e-5) << i;
}

TYPED_TEST(MVNLayerTest, EpsIsAddedToTheStandardDeviation) {
  const auto y = this->ForwardSmall("mvn_param { eps: 0.5 }");
  const double scale = 1 / (std::sqrt(2.0 / 3) + 0.5);
  const double expected[] = {-scale, 0, scale, 0, 0, 0};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(y[i], expected[i], 1e-5) << i;
}

TYPED_TEST(MVNLayerTest, MeanOnlySubtractsTheChannelMean) {
  const auto y = this->ForwardSmall("mvn_param { normalize_variance: false }");
  const double expected[] = {-1, 0, 1, 0, 0, 0};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(y[i], expected[i], 1e-6) << i;
}

TYPED_TEST(MVNLayerTest, AcrossChannelsNormalizesEachImage) {
  const auto y = this->ForwardSmall("mvn_param { across_channels: true }");
  // All six values: mean 3, variance (4 + 1 + 0 + 1 + 1 + 1) / 6 = 4/3.
  const double inv_std = 1 / std::sqrt(4.0 / 3);
  const double expected[] = {-2 * inv_std, -inv_std, 0, inv_std, inv_std, inv_std};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(y[i], expected[i], 1e-5) << i;
}

TYPED_TEST(MVNLayerTest, RandomInputGetsZeroMeanAndUnitVariance) {
  using Dtype = typename TypeParam::Dtype;
  MVNLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 3; ++c) {
      double sum = 0, sum_sq = 0;
      for (int h = 0; h < 4; ++h) {
        for (int w = 0; w < 5; ++w) {
          const double v = this->top_.data_at(n, c, h, w);
          sum += v;
          sum_sq += v * v;
        }
      }
      EXPECT_NEAR(sum / 20, 0, 1e-5);
      EXPECT_NEAR(sum_sq / 20, 1, 1e-4);
    }
  }
}

TYPED_TEST(MVNLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{2, 2, 2, 3});
  FillGaussian<Dtype>(&bottom, 1703);
  Blobs<Dtype> bottom_vec{&bottom};
  for (const char* text :
       {"", "mvn_param { normalize_variance: false }", "mvn_param { across_channels: true }",
        "mvn_param { across_channels: true normalize_variance: false }"}) {
    SCOPED_TRACE(text);
    MVNLayer<Dtype> layer(ParseLayerParam(text));
    GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3));
    checker.CheckGradientExhaustive(&layer, bottom_vec, this->top_vec_);
  }
}

TYPED_TEST(MVNLayerTest, RejectsTwoBottoms) {
  using Dtype = typename TypeParam::Dtype;
  MVNLayer<Dtype> layer(LayerParameter{});
  Blobs<Dtype> two{&this->bottom_, &this->bottom_};
  EXPECT_THROW(layer.SetUp(two, this->top_vec_), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class MVNLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(MVNLayerGpuTest, TestDtypes);

TYPED_TEST(MVNLayerGpuTest, MVNEachMode) {
  const char* cases[] = {
      "",
      "across_channels: true",
      "normalize_variance: false",
      "across_channels: true normalize_variance: false",
      "eps: 0.001",
  };
  for (const char* param : cases) {
    SCOPED_TRACE(param);
    GpuLayerCase<TypeParam> c;
    c.layer =
        std::string("name: 'mvn' type: 'MVN' mvn_param { ") + param + " } bottom: 'x' top: 'y'";
    c.bottom_shapes = {{3, 5, 9, 7}};
    ExpectGpuMatchesCpu(c);
  }
}

TYPED_TEST(MVNLayerGpuTest, MVNRowsLongerThanABlock) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'mvn' type: 'MVN' bottom: 'x' top: 'y'";
  c.bottom_shapes = {{2, 3, 40, 37}};  // rows of 1480 values
  c.tolerance = GpuSumTolerance<TypeParam>();
  ExpectGpuMatchesCpu(c);
}

}  // namespace caffe
