// BiasLayer: learned bias shapes (axis, num_axes, scalar), the default zero filler, bias from
// bottom[1] (incl. a 0-D scalar), in-place operation, accumulation of param diffs,
// finite-difference gradients, and shape/parameter errors.
// BiasLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/bias_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class BiasLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  BiasLayerTest() : bottom_(vector<int>{2, 3, 4, 5}) { FillGaussian(&bottom_, 1701); }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_};
  Blobs<Dtype> top_vec_{&top_};
};
TYPED_TEST_SUITE(BiasLayerTest, TestDtypesAndDevices);

TYPED_TEST(BiasLayerTest, LearnedBiasShapesAndZeroDefault) {
  using Dtype = typename TypeParam::Dtype;
  struct Case {
    const char* param;
    vector<int> shape;
  };
  const Case cases[] = {{"", {3}},
                        {"bias_param { axis: 0 num_axes: 2 }", {2, 3}},
                        {"bias_param { axis: 2 num_axes: -1 }", {4, 5}},
                        {"bias_param { num_axes: 0 }", {}}};
  for (const Case& c : cases) {
    BiasLayer<Dtype> layer(ParseLayerParam(std::string("name: 'b' type: 'Bias' ") + c.param));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    ASSERT_EQ(layer.blobs().size(), 1u) << c.param;
    EXPECT_EQ(layer.blobs()[0]->shape(), c.shape) << c.param;
    EXPECT_EQ(layer.blobs()[0]->asum_data(), Dtype(0)) << c.param;
    EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
  }
}

TYPED_TEST(BiasLayerTest, ForwardAddsTheBiasOverTheRange) {
  using Dtype = typename TypeParam::Dtype;
  BiasLayer<Dtype> layer(
      ParseLayerParam("name: 'b' type: 'Bias' bias_param { axis: 1 num_axes: 2 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  Dtype* bias = layer.blobs()[0]->mutable_cpu_data();
  for (int i = 0; i < 12; ++i) bias[i] = Dtype(i) - 5;
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 3; ++c) {
      for (int h = 0; h < 4; ++h) {
        for (int w = 0; w < 5; ++w) {
          EXPECT_NEAR(this->top_.data_at(n, c, h, w),
                      this->bottom_.data_at(n, c, h, w) + Dtype(c * 4 + h) - 5, 1e-6);
        }
      }
    }
  }
}

TYPED_TEST(BiasLayerTest, BiasFromSecondBottomIncludingScalar) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bias(vector<int>{3});
  const Dtype values[] = {1, -2, 3};
  caffe_copy(3, values, bias.mutable_cpu_data());
  Blobs<Dtype> bottoms{&this->bottom_, &bias};
  BiasLayer<Dtype> layer(ParseLayerParam("name: 'b' type: 'Bias'"));
  layer.SetUp(bottoms, this->top_vec_);
  EXPECT_TRUE(layer.blobs().empty());
  layer.Forward(bottoms, this->top_vec_);
  EXPECT_NEAR(this->top_.data_at(1, 1, 2, 3), this->bottom_.data_at(1, 1, 2, 3) - 2, 1e-6);
  EXPECT_NEAR(this->top_.data_at(0, 2, 0, 0), this->bottom_.data_at(0, 2, 0, 0) + 3, 1e-6);

  Blob<Dtype> scalar((vector<int>()));
  scalar.mutable_cpu_data()[0] = Dtype(0.5);
  Blobs<Dtype> with_scalar{&this->bottom_, &scalar};
  BiasLayer<Dtype> scalar_layer(ParseLayerParam("name: 'b' type: 'Bias'"));
  scalar_layer.SetUp(with_scalar, this->top_vec_);
  scalar_layer.Forward(with_scalar, this->top_vec_);
  for (int i = 0; i < this->top_.count(); ++i) {
    EXPECT_NEAR(this->top_.cpu_data()[i], this->bottom_.cpu_data()[i] + Dtype(0.5), 1e-6);
  }
}

TYPED_TEST(BiasLayerTest, InPlaceAndAccumulatingParamDiff) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> data(vector<int>{2, 2, 3});
  caffe_set(data.count(), Dtype(1), data.mutable_cpu_data());
  Blobs<Dtype> in_place{&data};
  BiasLayer<Dtype> layer(ParseLayerParam("name: 'b' type: 'Bias'"));
  layer.SetUp(in_place, in_place);
  layer.blobs()[0]->mutable_cpu_data()[0] = Dtype(2);
  layer.blobs()[0]->mutable_cpu_data()[1] = Dtype(-1);
  layer.Forward(in_place, in_place);
  EXPECT_EQ(data.data_at({1, 0, 2}), Dtype(3));
  EXPECT_EQ(data.data_at({1, 1, 2}), Dtype(0));
  for (int i = 0; i < data.count(); ++i) data.mutable_cpu_diff()[i] = Dtype(i);
  caffe_set(2, Dtype(0), layer.blobs()[0]->mutable_cpu_diff());
  for (int pass = 1; pass <= 2; ++pass) {
    layer.Backward(in_place, {true}, in_place);
    // channel 0: 0+1+2 + 6+7+8; channel 1: 3+4+5 + 9+10+11
    EXPECT_EQ(layer.blobs()[0]->cpu_diff()[0], Dtype(24 * pass));
    EXPECT_EQ(layer.blobs()[0]->cpu_diff()[1], Dtype(42 * pass));
    EXPECT_EQ(data.cpu_diff()[7], Dtype(7));  // in place: the diff passes through untouched
  }
}

TYPED_TEST(BiasLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{2, 3, 2, 2}), bias(vector<int>{3, 2}), scalar((vector<int>()));
  FillGaussian(&bottom, 11);
  FillGaussian(&bias, 12);
  FillGaussian(&scalar, 13);
  Blobs<Dtype> bottoms{&bottom};
  GradientChecker<Dtype> checker(/*stepsize=*/1e-2, /*threshold=*/1e-2);
  for (const char* param : {"bias_param { filler { type: 'gaussian' } }",
                            "bias_param { axis: 0 num_axes: -1 filler { type: 'gaussian' } }",
                            "bias_param { num_axes: 0 filler { type: 'gaussian' } }"}) {
    SCOPED_TRACE(param);
    BiasLayer<Dtype> layer(ParseLayerParam(std::string("name: 'b' type: 'Bias' ") + param));
    checker.CheckGradientExhaustive(&layer, bottoms, this->top_vec_);
  }
  Blobs<Dtype> two{&bottom, &bias};
  BiasLayer<Dtype> from_bottom(ParseLayerParam("name: 'b' type: 'Bias'"));
  checker.CheckGradientExhaustive(&from_bottom, two, this->top_vec_);
  Blobs<Dtype> with_scalar{&bottom, &scalar};
  BiasLayer<Dtype> from_scalar(ParseLayerParam("name: 'b' type: 'Bias'"));
  checker.CheckGradientExhaustive(&from_scalar, with_scalar, this->top_vec_);
}

TYPED_TEST(BiasLayerTest, RejectsMismatchedBiasAndBadAxes) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> wrong(vector<int>{4});
  Blobs<Dtype> bottoms{&this->bottom_, &wrong};
  BiasLayer<Dtype> layer(ParseLayerParam("name: 'b1' type: 'Bias'"));
  try {
    layer.SetUp(bottoms, this->top_vec_);
    FAIL() << "expected caffe::Error";
  } catch (const caffe::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("Bias layer 'b1'"), std::string::npos) << message;
    EXPECT_NE(message.find("4 (4)"), std::string::npos) << message;
  }
  for (const char* param : {"bias_param { axis: -5 }", "bias_param { axis: 3 num_axes: 2 }",
                            "bias_param { num_axes: -3 }"}) {
    BiasLayer<Dtype> bad(ParseLayerParam(std::string("name: 'b1' type: 'Bias' ") + param));
    EXPECT_THROW(bad.SetUp(this->bottom_vec_, this->top_vec_), caffe::Error) << param;
  }
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class BiasLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(BiasLayerGpuTest, TestDtypes);

TYPED_TEST(BiasLayerGpuTest, BiasLearned) {
  const char* const kParams[] = {
      "",                      // axis 1, one axis: per channel
      "num_axes: 2",           // (C, H)
      "axis: 0 num_axes: -1",  // D = count, inner 1
      "axis: -2 num_axes: 2",  // (H, W), inner 1
      "num_axes: 0",           // a scalar
  };
  for (const char* params : kParams) {
    SCOPED_TRACE(params);
    GpuLayerCase<TypeParam> test_case =
        MakeGpuCase<TypeParam>(std::string("name: 'bias' type: 'Bias' bias_param { ") + params +
                                   " filler { type: 'gaussian' } } bottom: 'x' top: 'y'",
                               {kGpuCheckShape}, GpuSumTolerance<TypeParam>());
    ExpectGpuMatchesCpu(test_case);
  }
  GpuLayerCase<TypeParam> large = MakeGpuCase<TypeParam>(
      "name: 'bias' type: 'Bias' bias_param { filler { type: 'gaussian' } } "
      "bottom: 'x' top: 'y'",
      {kGpuCheckLargeShape}, GpuSumTolerance<TypeParam>());
  ExpectGpuMatchesCpu(large);
}

TYPED_TEST(BiasLayerGpuTest, BiasFromSecondBottom) {
  GpuLayerCase<TypeParam> test_case =
      MakeGpuCase<TypeParam>("name: 'bias' type: 'Bias' bottom: 'x' bottom: 'b' top: 'y'",
                             {kGpuCheckShape, {3, 17}}, GpuSumTolerance<TypeParam>());
  ExpectGpuMatchesCpu(test_case);
  test_case.propagate_down = {false, true};
  ExpectGpuMatchesCpu(test_case);
  test_case.propagate_down = {true, false};
  ExpectGpuMatchesCpu(test_case);
  // A scalar second bottom.
  test_case.bottom_shapes = {kGpuCheckLargeShape, {}};
  test_case.propagate_down = {};
  ExpectGpuMatchesCpu(test_case);
}

TYPED_TEST(BiasLayerGpuTest, BiasInPlace) {
  GpuLayerCase<TypeParam> learned = MakeGpuCase<TypeParam>(
      "name: 'bias' type: 'Bias' bias_param { filler { type: 'gaussian' } } "
      "bottom: 'x' top: 'x'",
      {kGpuCheckShape}, GpuSumTolerance<TypeParam>());
  ExpectInPlaceGpuMatchesCpu(learned);
  GpuLayerCase<TypeParam> second_bottom = MakeGpuCase<TypeParam>(
      "name: 'bias' type: 'Bias' bias_param { axis: 0 } "
      "bottom: 'x' bottom: 'b' top: 'x'",
      {kGpuCheckShape, {2, 3}}, GpuSumTolerance<TypeParam>());
  ExpectInPlaceGpuMatchesCpu(second_bottom);
}

}  // namespace caffe
