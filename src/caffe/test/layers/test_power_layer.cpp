// PowerLayer: shape, hand-computed values for each of BVLC's special cases (power*scale 0,
// power 0, power 1, power 2, shift 0) and the general form, finite differences, arity errors.
// PowerLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <cmath>
#include <string>
#include <vector>

#include "caffe/layers/power_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class PowerLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  PowerLayerTest() : bottom_(vector<int>{2, 3, 4, 5}), positive_(vector<int>{2, 3, 4, 5}) {
    FillGaussian<Dtype>(&bottom_, 1701);
    FillUniform<Dtype>(&positive_, 1702, Dtype(0.5), Dtype(2));
  }
  // Runs forward and backward (top diff 1) on x, and checks y and dx.
  void Check(const std::string& text, const vector<Dtype>& x, const vector<double>& y,
             const vector<double>& dx) {
    SCOPED_TRACE(text);
    const int n = static_cast<int>(x.size());
    Blob<Dtype> bottom(vector<int>{n}), top;
    caffe_copy(n, x.data(), bottom.mutable_cpu_data());
    Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
    PowerLayer<Dtype> layer(ParseLayerParam(text));
    layer.SetUp(bottom_vec, top_vec);
    layer.Forward(bottom_vec, top_vec);
    for (int i = 0; i < n; ++i) EXPECT_NEAR(top.cpu_data()[i], y[i], 1e-5) << i;
    caffe_set(n, Dtype(1), top.mutable_cpu_diff());
    layer.Backward(top_vec, {true}, bottom_vec);
    for (int i = 0; i < n; ++i) EXPECT_NEAR(bottom.cpu_diff()[i], dx[i], 1e-5) << i;
  }
  void CheckGradient(const std::string& text, Blob<Dtype>* bottom) {
    SCOPED_TRACE(text);
    PowerLayer<Dtype> layer(ParseLayerParam(text));
    Blobs<Dtype> bottom_vec{bottom};
    GradientChecker<Dtype> checker(Dtype(1e-3), Dtype(1e-2));
    checker.CheckGradientEltwise(&layer, bottom_vec, top_vec_);
  }
  Blob<Dtype> bottom_, positive_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(PowerLayerTest, TestDtypesAndDevices);

TYPED_TEST(PowerLayerTest, IsRegisteredAsPower) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("name: 'p' type: 'Power'"));
  EXPECT_STREQ(layer->type(), "Power");
}

TYPED_TEST(PowerLayerTest, TopHasBottomShape) {
  using Dtype = typename TypeParam::Dtype;
  PowerLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
}

TYPED_TEST(PowerLayerTest, DefaultIsIdentity) {
  this->Check("", {-2, 0, 3}, {-2, 0, 3}, {1, 1, 1});
}

TYPED_TEST(PowerLayerTest, PowerOneIsAffine) {
  this->Check("power_param { power: 1 scale: 3 shift: -1 }", {-2, 0, 3}, {-7, -1, 8}, {3, 3, 3});
}

TYPED_TEST(PowerLayerTest, PowerTwoMatchesHandComputedValues) {
  // (1 + 2x)^2; d/dx = 4 (1 + 2x).
  this->Check("power_param { power: 2 scale: 2 shift: 1 }", {-1, 0, 1}, {1, 1, 9}, {-4, 4, 12});
}

TYPED_TEST(PowerLayerTest, ZeroShiftMatchesHandComputedValues) {
  // sqrt(x); d/dx = 0.5 / sqrt(x).
  this->Check("power_param { power: 0.5 }", {1, 4, 9}, {1, 2, 3}, {0.5, 0.25, 1.0 / 6});
}

TYPED_TEST(PowerLayerTest, GeneralFormMatchesHandComputedValues) {
  // (2 - x)^3; d/dx = -3 (2 - x)^2.
  this->Check("power_param { power: 3 scale: -1 shift: 2 }", {-1, 1, 3}, {27, 1, -1},
              {-27, -3, -3});
}

TYPED_TEST(PowerLayerTest, ZeroScaleGivesConstantAndNoGradient) {
  // shift^power whatever x, and dx = 0.
  this->Check("power_param { power: 3 scale: 0 shift: 2 }", {-1, 0, 5}, {8, 8, 8}, {0, 0, 0});
}

TYPED_TEST(PowerLayerTest, ZeroPowerGivesOne) {
  this->Check("power_param { power: 0 scale: 2 shift: 0 }", {-1, 0, 5}, {1, 1, 1}, {0, 0, 0});
}

TYPED_TEST(PowerLayerTest, GradientsMatchFiniteDifferences) {
  this->CheckGradient("power_param { power: 2 scale: 0.83 shift: -2.4 }", &this->bottom_);
  this->CheckGradient("power_param { power: 2 scale: 0.34 }", &this->bottom_);
  this->CheckGradient("power_param { power: 1 scale: 0.83 shift: -2.4 }", &this->bottom_);
  this->CheckGradient("power_param { power: 0.37 scale: 0.83 }", &this->positive_);
  this->CheckGradient("power_param { power: -0.37 scale: 0.83 shift: 1.5 }", &this->positive_);
  this->CheckGradient("power_param { power: 0 scale: 0.83 shift: -2.4 }", &this->bottom_);
  this->CheckGradient("power_param { power: 3 scale: 0 shift: -2.4 }", &this->bottom_);
}

TYPED_TEST(PowerLayerTest, RejectsTwoBottoms) {
  using Dtype = typename TypeParam::Dtype;
  PowerLayer<Dtype> layer(LayerParameter{});
  Blobs<Dtype> two{&this->bottom_, &this->bottom_};
  EXPECT_THROW(layer.SetUp(two, this->top_vec_), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class PowerLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(PowerLayerGpuTest, TestDtypes);

TYPED_TEST(PowerLayerGpuTest, Power) {
  // Each of these takes a different branch of forward or backward.
  const char* const kParams[] = {
      "power: 2 scale: 0.8 shift: 0.3",  // square, with shift
      "power: 2",                        // square, no shift
      "power: 0.37",                     // shift 0: y / x * power
      "power: 3 scale: 0.5 shift: 1.2",  // the general form
      "power: 1 scale: -2 shift: 0.5",   // linear
      "power: 0 scale: 3",               // constant 1
      "power: 2 scale: 0 shift: 3",      // constant shift ^ power
  };
  for (const char* params : kParams) {
    GpuLayerCase<TypeParam> test_case =
        MakeGpuCase<TypeParam>(std::string("name: 'power' type: 'Power' power_param { ") + params +
                                   " } bottom: 'x' top: 'y'",
                               {kGpuCheckShape});
    // Positive inputs keep fractional powers real.
    test_case.fill = UniformFill<TypeParam>(0.3, 2.5);
    SCOPED_TRACE(params);
    ExpectGpuMatchesCpu(test_case);
  }
}

}  // namespace caffe
