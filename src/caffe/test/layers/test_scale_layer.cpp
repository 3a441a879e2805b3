// ScaleLayer: learned scale shapes (axis, num_axes, scalar), the default identity filler, scale
// from bottom[1] (incl. a 0-D scalar), the bias term, in-place operation, accumulation of param
// diffs, large blobs (the threaded paths) against a direct evaluation, finite-difference
// gradients for every configuration, and shape/parameter errors.
// ScaleLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
// Legend: outer / D / inner as in scale_layer.hpp.
#include <cmath>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/scale_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class ScaleLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  ScaleLayerTest() : bottom_(vector<int>{2, 3, 4, 5}) { FillGaussian(&bottom_, 1701); }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_};
  Blobs<Dtype> top_vec_{&top_};
};
TYPED_TEST_SUITE(ScaleLayerTest, TestDtypesAndDevices);

TYPED_TEST(ScaleLayerTest, LearnedScaleShapes) {
  using Dtype = typename TypeParam::Dtype;
  struct Case {
    const char* param;
    vector<int> shape;
  };
  const Case cases[] = {{"", {3}},
                        {"scale_param { axis: 0 num_axes: 2 }", {2, 3}},
                        {"scale_param { axis: -2 num_axes: -1 }", {4, 5}},
                        {"scale_param { num_axes: 0 }", {}}};
  for (const Case& c : cases) {
    ScaleLayer<Dtype> layer(ParseLayerParam(std::string("name: 's' type: 'Scale' ") + c.param));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    ASSERT_EQ(layer.blobs().size(), 1u) << c.param;
    EXPECT_EQ(layer.blobs()[0]->shape(), c.shape) << c.param;
    EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
  }
}

TYPED_TEST(ScaleLayerTest, DefaultFillersGiveTheIdentity) {
  using Dtype = typename TypeParam::Dtype;
  ScaleLayer<Dtype> layer(
      ParseLayerParam("name: 's' type: 'Scale' scale_param { bias_term: true }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(layer.blobs().size(), 2u);
  EXPECT_EQ(layer.blobs()[1]->shape(), vector<int>{3});
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < this->top_.count(); ++i) {
    EXPECT_EQ(this->top_.cpu_data()[i], this->bottom_.cpu_data()[i]);
  }
}

TYPED_TEST(ScaleLayerTest, ForwardScalesAndShiftsPerChannel) {
  using Dtype = typename TypeParam::Dtype;
  ScaleLayer<Dtype> layer(
      ParseLayerParam("name: 's' type: 'Scale' scale_param { bias_term: true }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  const Dtype scale[] = {2, -1, 0.5};
  const Dtype bias[] = {1, 0, -3};
  caffe_copy(3, scale, layer.blobs()[0]->mutable_cpu_data());
  caffe_copy(3, bias, layer.blobs()[1]->mutable_cpu_data());
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 3; ++c) {
      for (int h = 0; h < 4; ++h) {
        for (int w = 0; w < 5; ++w) {
          EXPECT_NEAR(this->top_.data_at(n, c, h, w),
                      this->bottom_.data_at(n, c, h, w) * scale[c] + bias[c], 1e-6);
        }
      }
    }
  }
}

TYPED_TEST(ScaleLayerTest, ScaleFromSecondBottom) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> scale(vector<int>{3, 4});
  FillGaussian(&scale, 3);
  Blobs<Dtype> bottoms{&this->bottom_, &scale};
  ScaleLayer<Dtype> layer(ParseLayerParam("name: 's' type: 'Scale'"));
  layer.SetUp(bottoms, this->top_vec_);
  EXPECT_TRUE(layer.blobs().empty());
  layer.Forward(bottoms, this->top_vec_);
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 3; ++c) {
      for (int h = 0; h < 4; ++h) {
        for (int w = 0; w < 5; ++w) {
          EXPECT_NEAR(this->top_.data_at(n, c, h, w),
                      this->bottom_.data_at(n, c, h, w) * scale.data_at({c, h}), 1e-6);
        }
      }
    }
  }
}

TYPED_TEST(ScaleLayerTest, ScalarSecondBottomScalesEverything) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> scale((vector<int>()));
  scale.mutable_cpu_data()[0] = Dtype(-2);
  Blobs<Dtype> bottoms{&this->bottom_, &scale};
  // The axis is irrelevant (and not checked) for a scalar.
  ScaleLayer<Dtype> layer(ParseLayerParam("name: 's' type: 'Scale' scale_param { axis: 3 }"));
  layer.SetUp(bottoms, this->top_vec_);
  layer.Forward(bottoms, this->top_vec_);
  for (int i = 0; i < this->top_.count(); ++i) {
    EXPECT_NEAR(this->top_.cpu_data()[i], -2 * this->bottom_.cpu_data()[i], 1e-6);
  }
}

TYPED_TEST(ScaleLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  const std::string param =
      "name: 's' type: 'Scale' scale_param { bias_term: true filler { type: 'gaussian' } "
      "bias_filler { type: 'gaussian' } }";
  ScaleLayer<Dtype> layer(ParseLayerParam(param));
  ScaleLayer<Dtype> in_place_layer(ParseLayerParam(param));
  Blob<Dtype> shared;
  shared.CopyFrom(this->bottom_, false, true);
  Blobs<Dtype> in_place{&shared};
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  in_place_layer.SetUp(in_place, in_place);
  for (int i = 0; i < 2; ++i) in_place_layer.blobs()[i]->CopyFrom(*layer.blobs()[i]);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  in_place_layer.Forward(in_place, in_place);
  for (int i = 0; i < shared.count(); ++i) {
    ASSERT_EQ(shared.cpu_data()[i], this->top_.cpu_data()[i]);
  }
  FillGaussian(&shared, 4);
  caffe_copy(shared.count(), shared.cpu_data(), shared.mutable_cpu_diff());
  caffe_copy(shared.count(), shared.cpu_data(), this->top_.mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true}, this->bottom_vec_);
  in_place_layer.Backward(in_place, {true}, in_place);
  for (int i = 0; i < shared.count(); ++i) {
    EXPECT_NEAR(shared.cpu_diff()[i], this->bottom_.cpu_diff()[i], 1e-6);
  }
  for (int b = 0; b < 2; ++b) {
    for (int i = 0; i < 3; ++i) {
      EXPECT_NEAR(in_place_layer.blobs()[b]->cpu_diff()[i], layer.blobs()[b]->cpu_diff()[i], 1e-4);
    }
  }
}

TYPED_TEST(ScaleLayerTest, ParamDiffsAccumulateAndBottomScaleDiffIsSet) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{1, 2, 3});
  const Dtype x[] = {1, 2, 3, 4, 5, 6};
  caffe_copy(6, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottoms{&bottom};
  ScaleLayer<Dtype> layer(
      ParseLayerParam("name: 's' type: 'Scale' scale_param { bias_term: true }"));
  layer.SetUp(bottoms, this->top_vec_);
  layer.Forward(bottoms, this->top_vec_);
  caffe_set(6, Dtype(1), this->top_.mutable_cpu_diff());
  for (auto& blob : layer.blobs()) caffe_set(blob->count(), Dtype(0), blob->mutable_cpu_diff());
  for (int pass = 1; pass <= 2; ++pass) {
    layer.Backward(this->top_vec_, {true}, bottoms);
    EXPECT_EQ(layer.blobs()[0]->cpu_diff()[0], Dtype(6 * pass));   // 1 + 2 + 3
    EXPECT_EQ(layer.blobs()[0]->cpu_diff()[1], Dtype(15 * pass));  // 4 + 5 + 6
    EXPECT_EQ(layer.blobs()[1]->cpu_diff()[1], Dtype(3 * pass));
  }
  Blob<Dtype> scale(vector<int>{2});
  caffe_set(2, Dtype(1), scale.mutable_cpu_data());
  Blobs<Dtype> two{&bottom, &scale};
  ScaleLayer<Dtype> from_bottom(ParseLayerParam("name: 's' type: 'Scale'"));
  from_bottom.SetUp(two, this->top_vec_);
  from_bottom.Forward(two, this->top_vec_);
  caffe_set(6, Dtype(1), this->top_.mutable_cpu_diff());
  for (int pass = 0; pass < 2; ++pass) {
    from_bottom.Backward(this->top_vec_, {true, true}, two);
    EXPECT_EQ(scale.cpu_diff()[0], Dtype(6));
    EXPECT_EQ(scale.cpu_diff()[1], Dtype(15));
  }
}

// Blobs of at least kParallelMinElements values take the threaded paths: planes of inner values,
// rows of D values (inner 1), each split when long (a scalar, a scale as large as the bottom).
// They must match a direct evaluation in double, in place and with the scale as bottom[1] too.
TYPED_TEST(ScaleLayerTest, LargeBlobsMatchADirectEvaluation) {
  using Dtype = typename TypeParam::Dtype;
  struct Case {
    const char* param;
    vector<int> shape;
    int axis, scale_axes;
  };
  const Case cases[] = {
      {"scale_param { filler { type: 'gaussian' } bias_term: true "
       "bias_filler { type: 'gaussian' } }",
       {4, 8, 36, 36},
       1,
       1},
      {"scale_param { axis: -1 filler { type: 'gaussian' } }", {300, 2, 70}, 2, 1},
      {"scale_param { num_axes: 0 filler { type: 'gaussian' } bias_term: true "
       "bias_filler { type: 'gaussian' } }",
       {4, 8, 36, 36},
       0,
       0},
      {"scale_param { axis: 0 num_axes: -1 filler { type: 'gaussian' } }", {4, 8, 36, 36}, 0, 4},
      {"", {4, 8, 36, 36}, 1, 1},  // the scale from bottom[1]
  };
  for (const Case& c : cases) {
    for (const bool in_place : {false, true}) {
      SCOPED_TRACE(std::string(c.param) + (in_place ? " in place" : ""));
      const bool scale_bottom = std::string(c.param).empty();
      Blob<Dtype> x_blob(c.shape), dy_blob(c.shape), top;
      FillGaussian(&x_blob, 31);
      FillGaussian(&dy_blob, 32);
      const int axes_end = c.axis + c.scale_axes;
      const vector<int> scale_shape(c.shape.begin() + c.axis, c.shape.begin() + axes_end);
      const int inner = x_blob.count(axes_end), dim = x_blob.count(c.axis, axes_end);
      Blob<Dtype> bottom, scale_input(scale_shape);
      bottom.CopyFrom(x_blob, false, true);
      FillGaussian(&scale_input, 33);
      Blobs<Dtype> bottoms{&bottom};
      if (scale_bottom) bottoms.push_back(&scale_input);
      Blobs<Dtype> tops{in_place ? &bottom : &top};
      ScaleLayer<Dtype> layer(ParseLayerParam(std::string("name: 's' type: 'Scale' ") + c.param));
      layer.SetUp(bottoms, tops);
      for (auto& blob : layer.blobs()) caffe_set(blob->count(), Dtype(0), blob->mutable_cpu_diff());
      layer.Forward(bottoms, tops);
      Blob<Dtype>* y_blob = tops[0];
      const Dtype* y = y_blob->cpu_data();
      const Dtype* x = x_blob.cpu_data();
      const Dtype* dy = dy_blob.cpu_data();
      const Dtype* scale = scale_bottom ? scale_input.cpu_data() : layer.blobs()[0]->cpu_data();
      const Dtype* bias = layer.blobs().size() == 2 ? layer.blobs()[1]->cpu_data() : nullptr;
      for (int j = 0; j < x_blob.count(); ++j) {
        const int d = (j / inner) % dim;
        ASSERT_NEAR(y[j], x[j] * scale[d] + (bias ? bias[d] : 0), 1e-5) << j;
      }
      caffe_copy(dy_blob.count(), dy, y_blob->mutable_cpu_diff());
      layer.Backward(tops, {true, true}, bottoms);
      vector<double> scale_diff(dim, 0), bias_diff(dim, 0);
      for (int j = 0; j < x_blob.count(); ++j) {
        const int d = (j / inner) % dim;
        ASSERT_NEAR(bottom.cpu_diff()[j], dy[j] * scale[d], 1e-5) << j;
        scale_diff[d] += static_cast<double>(dy[j]) * x[j];
        bias_diff[d] += dy[j];
      }
      const Dtype* layer_scale_diff =
          scale_bottom ? scale_input.cpu_diff() : layer.blobs()[0]->cpu_diff();
      for (int d = 0; d < dim; ++d) {
        EXPECT_NEAR(layer_scale_diff[d], scale_diff[d], 1e-5 * (1 + std::abs(scale_diff[d]))) << d;
        if (bias) {
          EXPECT_NEAR(layer.blobs()[1]->cpu_diff()[d], bias_diff[d],
                      1e-5 * (1 + std::abs(bias_diff[d])))
              << d;
        }
      }
    }
  }
}

TYPED_TEST(ScaleLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{2, 3, 2, 2});
  FillGaussian(&bottom, 11);
  Blobs<Dtype> bottoms{&bottom};
  const char* params[] = {
      "scale_param { filler { type: 'gaussian' } }",
      "scale_param { filler { type: 'gaussian' } bias_term: true "
      "bias_filler { type: 'gaussian' } }",
      "scale_param { axis: 0 num_axes: -1 filler { type: 'gaussian' } bias_term: true }",
      "scale_param { num_axes: 0 filler { type: 'gaussian' } bias_term: true }",
      "scale_param { axis: -1 filler { type: 'gaussian' } }",
  };
  for (const char* param : params) {
    SCOPED_TRACE(param);
    ScaleLayer<Dtype> layer(ParseLayerParam(std::string("name: 's' type: 'Scale' ") + param));
    GradientChecker<Dtype> checker(/*stepsize=*/1e-2, /*threshold=*/1e-2);
    checker.CheckGradientExhaustive(&layer, bottoms, this->top_vec_);
  }
}

TYPED_TEST(ScaleLayerTest, SecondBottomGradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{2, 3, 2, 2}), scale(vector<int>{3, 2}), scalar((vector<int>()));
  FillGaussian(&bottom, 12);
  FillGaussian(&scale, 13);
  FillGaussian(&scalar, 14);
  for (const char* param :
       {"", "scale_param { bias_term: true bias_filler { type: 'gaussian' } }"}) {
    SCOPED_TRACE(param);
    Blobs<Dtype> bottoms{&bottom, &scale};
    ScaleLayer<Dtype> layer(ParseLayerParam(std::string("name: 's' type: 'Scale' ") + param));
    GradientChecker<Dtype> checker(/*stepsize=*/1e-2, /*threshold=*/1e-2);
    checker.CheckGradientExhaustive(&layer, bottoms, this->top_vec_);
    Blobs<Dtype> with_scalar{&bottom, &scalar};
    ScaleLayer<Dtype> scalar_layer(
        ParseLayerParam(std::string("name: 's' type: 'Scale' ") + param));
    checker.CheckGradientExhaustive(&scalar_layer, with_scalar, this->top_vec_);
  }
}

TYPED_TEST(ScaleLayerTest, RejectsMismatchedScaleAndBadAxes) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> wrong(vector<int>{3, 5});
  Blobs<Dtype> bottoms{&this->bottom_, &wrong};
  ScaleLayer<Dtype> layer(ParseLayerParam("name: 's1' type: 'Scale'"));
  try {
    layer.SetUp(bottoms, this->top_vec_);
    FAIL() << "expected caffe::Error";
  } catch (const caffe::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("Scale layer 's1'"), std::string::npos) << message;
    EXPECT_NE(message.find("3 5 (15)"), std::string::npos) << message;
    EXPECT_NE(message.find("2 3 4 5 (120)"), std::string::npos) << message;
  }
  Blob<Dtype> too_long(vector<int>{4, 5, 1});
  Blobs<Dtype> past_end{&this->bottom_, &too_long};
  ScaleLayer<Dtype> past(ParseLayerParam("name: 's1' type: 'Scale' scale_param { axis: 2 }"));
  EXPECT_THROW(past.SetUp(past_end, this->top_vec_), caffe::Error);
  for (const char* param : {"scale_param { axis: 4 }", "scale_param { axis: 2 num_axes: 3 }",
                            "scale_param { num_axes: -2 }"}) {
    ScaleLayer<Dtype> bad(ParseLayerParam(std::string("name: 's1' type: 'Scale' ") + param));
    EXPECT_THROW(bad.SetUp(this->bottom_vec_, this->top_vec_), caffe::Error) << param;
  }
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class ScaleLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(ScaleLayerGpuTest, TestDtypes);

TYPED_TEST(ScaleLayerGpuTest, ScaleLearned) {
  const char* const kParams[] = {
      "bias_term: true",                       // per channel, with a bias
      "",                                      // per channel
      "num_axes: 2 bias_term: true",           // (C, H)
      "axis: 0 num_axes: -1 bias_term: true",  // D = count, inner 1
      "num_axes: 0 bias_term: true",           // scalars
  };
  for (const char* params : kParams) {
    SCOPED_TRACE(params);
    GpuLayerCase<TypeParam> test_case = MakeGpuCase<TypeParam>(
        std::string("name: 'scale' type: 'Scale' scale_param { ") + params +
            " filler { type: 'gaussian' } bias_filler { type: 'gaussian' } } "
            "bottom: 'x' top: 'y'",
        {kGpuCheckShape}, GpuSumTolerance<TypeParam>());
    ExpectGpuMatchesCpu(test_case);
  }
  GpuLayerCase<TypeParam> large = MakeGpuCase<TypeParam>(
      "name: 'scale' type: 'Scale' scale_param { bias_term: true filler { type: 'gaussian' } "
      "bias_filler { type: 'gaussian' } } bottom: 'x' top: 'y'",
      {kGpuCheckLargeShape}, GpuSumTolerance<TypeParam>());
  ExpectGpuMatchesCpu(large);
}

TYPED_TEST(ScaleLayerGpuTest, ScaleFromSecondBottom) {
  GpuLayerCase<TypeParam> test_case = MakeGpuCase<TypeParam>(
      "name: 'scale' type: 'Scale' scale_param { bias_term: true "
      "bias_filler { type: 'gaussian' } } bottom: 'x' bottom: 's' top: 'y'",
      {kGpuCheckShape, {3, 17}}, GpuSumTolerance<TypeParam>());
  ExpectGpuMatchesCpu(test_case);
  test_case.propagate_down = {true, false};
  ExpectGpuMatchesCpu(test_case);
  test_case.propagate_down = {false, true};
  ExpectGpuMatchesCpu(test_case);
  GpuLayerCase<TypeParam> no_bias = MakeGpuCase<TypeParam>(
      "name: 'scale' type: 'Scale' scale_param { axis: 0 } bottom: 'x' bottom: 's' top: 'y'",
      {kGpuCheckLargeShape, {3, 5}}, GpuSumTolerance<TypeParam>());
  ExpectGpuMatchesCpu(no_bias);
  // A scalar second bottom.
  no_bias.bottom_shapes = {kGpuCheckShape, {}};
  ExpectGpuMatchesCpu(no_bias);
}

TYPED_TEST(ScaleLayerGpuTest, ScaleInPlace) {
  GpuLayerCase<TypeParam> learned = MakeGpuCase<TypeParam>(
      "name: 'scale' type: 'Scale' scale_param { bias_term: true filler { type: 'gaussian' } "
      "bias_filler { type: 'gaussian' } } bottom: 'x' top: 'x'",
      {kGpuCheckShape}, GpuSumTolerance<TypeParam>());
  ExpectInPlaceGpuMatchesCpu(learned);
  GpuLayerCase<TypeParam> second_bottom =
      MakeGpuCase<TypeParam>("name: 'scale' type: 'Scale' bottom: 'x' bottom: 's' top: 'x'",
                             {kGpuCheckShape, {3}}, GpuSumTolerance<TypeParam>());
  ExpectInPlaceGpuMatchesCpu(second_bottom);
}

}  // namespace caffe
