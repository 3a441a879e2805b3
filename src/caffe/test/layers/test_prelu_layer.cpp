// PReLULayer: slope blob shapes and default filler, hand-computed forward and backward (slopes
// per channel and shared, slope gradient), in place against out of place, finite differences
// for bottom and slopes, and shape errors.
// PReLULayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "caffe/layers/prelu_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class PReLULayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  PReLULayerTest() : bottom_(vector<int>{2, 3, 2, 2}) { FillGaussian<Dtype>(&bottom_, 1701); }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(PReLULayerTest, TestDtypesAndDevices);

TYPED_TEST(PReLULayerTest, IsRegisteredAsPReLU) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("name: 'p' type: 'PReLU'"));
  EXPECT_STREQ(layer->type(), "PReLU");
}

TYPED_TEST(PReLULayerTest, SlopesHaveOneValuePerChannelAndDefaultToAQuarter) {
  using Dtype = typename TypeParam::Dtype;
  PReLULayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
  ASSERT_EQ(layer.blobs().size(), 1u);
  EXPECT_EQ(layer.blobs()[0]->shape(), (vector<int>{3}));
  for (int c = 0; c < 3; ++c) EXPECT_EQ(layer.blobs()[0]->cpu_data()[c], Dtype(0.25));
}

TYPED_TEST(PReLULayerTest, SharedSlopeIsAScalar) {
  using Dtype = typename TypeParam::Dtype;
  PReLULayer<Dtype> layer(ParseLayerParam(
      "prelu_param { channel_shared: true filler { type: 'constant' value: 0.75 } }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(layer.blobs()[0]->num_axes(), 0);
  EXPECT_EQ(layer.blobs()[0]->count(), 1);
  EXPECT_EQ(layer.blobs()[0]->cpu_data()[0], Dtype(0.75));
}

TYPED_TEST(PReLULayerTest, ForwardAndBackwardMatchHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{1, 2, 3}), top;
  const Dtype x[] = {-2, 0, 3, -1, 2, -4};  // channel 0, then channel 1
  caffe_copy(6, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  PReLULayer<Dtype> layer(LayerParameter{});
  layer.SetUp(bottom_vec, top_vec);
  layer.blobs()[0]->mutable_cpu_data()[0] = Dtype(0.5);
  layer.blobs()[0]->mutable_cpu_data()[1] = -1;
  layer.Forward(bottom_vec, top_vec);
  const Dtype expected[] = {-1, 0, 3, 1, 2, 4};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(top.cpu_data()[i], expected[i]) << i;
  caffe_set(6, Dtype(1), top.mutable_cpu_diff());
  caffe_set(2, Dtype(0), layer.blobs()[0]->mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  const Dtype expected_dx[] = {Dtype(0.5), Dtype(0.5), 1, -1, 1, -1};  // x = 0 takes the slope
  for (int i = 0; i < 6; ++i) EXPECT_EQ(bottom.cpu_diff()[i], expected_dx[i]) << i;
  // d slope_c = sum of dy * x over x <= 0.
  EXPECT_EQ(layer.blobs()[0]->cpu_diff()[0], Dtype(-2));
  EXPECT_EQ(layer.blobs()[0]->cpu_diff()[1], Dtype(-5));
}

TYPED_TEST(PReLULayerTest, SharedSlopeForwardAndBackward) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{1, 2, 2}), top;
  const Dtype x[] = {-2, 1, -4, 3};
  caffe_copy(4, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  PReLULayer<Dtype> layer(ParseLayerParam(
      "prelu_param { channel_shared: true filler { type: 'constant' value: 0.5 } }"));
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  const Dtype expected[] = {-1, 1, -2, 3};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(top.cpu_data()[i], expected[i]) << i;
  const Dtype dy[] = {1, 2, 3, 4};
  caffe_copy(4, dy, top.mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  EXPECT_EQ(layer.blobs()[0]->cpu_diff()[0], Dtype(-2 - 12));  // both channels accumulate
  const Dtype expected_dx[] = {Dtype(0.5), 2, Dtype(1.5), 4};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(bottom.cpu_diff()[i], expected_dx[i]) << i;
}

TYPED_TEST(PReLULayerTest, NaNInputsGiveBvlcsValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{1, 1, 3}), top;
  const Dtype x[] = {std::numeric_limits<Dtype>::quiet_NaN(), -1, 2};
  caffe_copy(3, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  PReLULayer<Dtype> layer(
      ParseLayerParam("prelu_param { filler { type: 'constant' value: 0.5 } }"));
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  EXPECT_TRUE(std::isnan(top.cpu_data()[0]));
  EXPECT_EQ(top.cpu_data()[1], Dtype(-0.5));
  caffe_set(3, Dtype(1), top.mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  EXPECT_EQ(bottom.cpu_diff()[0], Dtype(0));  // BVLC's (x > 0) + slope * (x <= 0) at NaN
  EXPECT_EQ(bottom.cpu_diff()[1], Dtype(0.5));
  EXPECT_EQ(bottom.cpu_diff()[2], Dtype(1));
  EXPECT_TRUE(std::isnan(layer.blobs()[0]->cpu_diff()[0]));
}

// Planes of 22,500 values (two pieces of the CPU's passes each), 15 of them, over the threads:
// the output and the bottom gradient exactly, the slope gradient (added to what the diff held)
// within rounding of a sum in double.
TYPED_TEST(PReLULayerTest, LargeBlobsMatchAReferenceComputedHere) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{3, 5, 150, 150}), top;
  FillGaussian<Dtype>(&bottom, 11);
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  PReLULayer<Dtype> layer(
      ParseLayerParam("prelu_param { filler { type: 'uniform' min: -0.5 max: 0.5 } }"));
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  Blob<Dtype> dy(bottom.shape());
  FillGaussian<Dtype>(&dy, 12);
  caffe_copy(dy.count(), dy.cpu_data(), top.mutable_cpu_diff());
  caffe_set(5, Dtype(1), layer.blobs()[0]->mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);

  const int inner = 150 * 150;
  const Dtype* x = bottom.cpu_data();
  const Dtype* slope = layer.blobs()[0]->cpu_data();
  std::vector<double> slope_diff(5, 1.0);
  for (int i = 0; i < bottom.count(); ++i) {
    const int c = (i / inner) % 5;
    const Dtype g = dy.cpu_data()[i];
    ASSERT_EQ(top.cpu_data()[i], std::max(x[i], Dtype(0)) + slope[c] * std::min(x[i], Dtype(0)))
        << i;
    ASSERT_EQ(bottom.cpu_diff()[i], x[i] > 0 ? g : g * slope[c]) << i;
    if (x[i] <= 0) slope_diff[c] += static_cast<double>(g) * x[i];
  }
  for (int c = 0; c < 5; ++c) {
    EXPECT_NEAR(layer.blobs()[0]->cpu_diff()[c], slope_diff[c],
                1e-3 + 1e-5 * std::abs(slope_diff[c]))
        << c;
  }
}

TYPED_TEST(PReLULayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  const LayerParameter param =
      ParseLayerParam("prelu_param { filler { type: 'uniform' min: -0.5 max: 0.5 } }");
  PReLULayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  Blob<Dtype> top_diff(this->top_.shape());
  FillGaussian<Dtype>(&top_diff, 7);
  caffe_copy(top_diff.count(), top_diff.cpu_data(), this->top_.mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true}, this->bottom_vec_);

  Blob<Dtype> blob;
  blob.CopyFrom(this->bottom_, false, true);
  Blobs<Dtype> in_place{&blob};
  PReLULayer<Dtype> in_place_layer(param);
  in_place_layer.SetUp(in_place, in_place);
  in_place_layer.blobs()[0]->CopyFrom(*layer.blobs()[0]);
  in_place_layer.Forward(in_place, in_place);
  for (int i = 0; i < blob.count(); ++i) EXPECT_EQ(blob.cpu_data()[i], this->top_.cpu_data()[i]);
  caffe_copy(top_diff.count(), top_diff.cpu_data(), blob.mutable_cpu_diff());
  in_place_layer.Backward(in_place, {true}, in_place);
  for (int i = 0; i < blob.count(); ++i) {
    EXPECT_EQ(blob.cpu_diff()[i], this->bottom_.cpu_diff()[i]) << i;
  }
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(in_place_layer.blobs()[0]->cpu_diff()[c], layer.blobs()[0]->cpu_diff()[c]) << c;
  }
}

TYPED_TEST(PReLULayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  PReLULayer<Dtype> layer(
      ParseLayerParam("prelu_param { filler { type: 'uniform' min: -0.5 max: 0.5 } }"));
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3), 1701, /*kink=*/0, /*kink_range=*/0.02);
  checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(PReLULayerTest, SharedSlopeGradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  PReLULayer<Dtype> layer(ParseLayerParam("prelu_param { channel_shared: true }"));
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3), 1701, /*kink=*/0, /*kink_range=*/0.02);
  checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(PReLULayerTest, RejectsBottomWithoutChannels) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> flat(vector<int>{6});
  Blobs<Dtype> bottom_vec{&flat};
  PReLULayer<Dtype> layer(ParseLayerParam("name: 'p'"));
  EXPECT_THROW(layer.SetUp(bottom_vec, this->top_vec_), Error);
}

TYPED_TEST(PReLULayerTest, RejectsGivenSlopesOfWrongSize) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = ParseLayerParam("name: 'p'");
  BlobProto* slopes = param.add_blobs();
  slopes->mutable_shape()->add_dim(4);  // bottom has 3 channels
  for (int i = 0; i < 4; ++i) slopes->add_data(0.1f);
  PReLULayer<Dtype> layer(param);
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class PReLULayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(PReLULayerGpuTest, TestDtypes);

TYPED_TEST(PReLULayerGpuTest, PReLU) {
  const std::string random_slopes = "filler { type: 'uniform' min: -0.6 max: 0.6 }";
  GpuLayerCase<TypeParam> per_channel = MakeGpuCase<TypeParam>(
      "name: 'prelu' type: 'PReLU' prelu_param { " + random_slopes + " } bottom: 'x' top: 'y'",
      {kGpuCheckShape}, GpuSumTolerance<TypeParam>());
  ExpectGpuMatchesCpu(per_channel);
  per_channel.bottom_shapes = {kGpuCheckLargeShape};
  ExpectGpuMatchesCpu(per_channel);
  // Two axes: one value per channel (S = 1).
  per_channel.bottom_shapes = {{37, 11}};
  ExpectGpuMatchesCpu(per_channel);
  GpuLayerCase<TypeParam> shared =
      MakeGpuCase<TypeParam>("name: 'prelu' type: 'PReLU' prelu_param { channel_shared: true " +
                                 random_slopes + " } bottom: 'x' top: 'y'",
                             {kGpuCheckLargeShape}, GpuSumTolerance<TypeParam>());
  ExpectGpuMatchesCpu(shared);
  // The default slopes (a constant 0.25).
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>("name: 'prelu' type: 'PReLU' bottom: 'x' top: 'y'", {{2, 5, 7}}));
}

TYPED_TEST(PReLULayerGpuTest, PReLUOnlyParamGradient) {
  GpuLayerCase<TypeParam> test_case = MakeGpuCase<TypeParam>(
      "name: 'prelu' type: 'PReLU' prelu_param { filler { type: 'gaussian' } } "
      "bottom: 'x' top: 'y'",
      {kGpuCheckShape});
  test_case.propagate_down = {false};
  test_case.tolerance = GpuSumTolerance<TypeParam>();
  ExpectGpuMatchesCpu(test_case);
}

TYPED_TEST(PReLULayerGpuTest, PReLUInPlace) {
  GpuLayerCase<TypeParam> per_channel = MakeGpuCase<TypeParam>(
      "name: 'prelu' type: 'PReLU' prelu_param { filler { type: 'gaussian' } } "
      "bottom: 'x' top: 'x'",
      {kGpuCheckShape}, GpuSumTolerance<TypeParam>());
  ExpectInPlaceGpuMatchesCpu(per_channel);
  GpuLayerCase<TypeParam> shared = MakeGpuCase<TypeParam>(
      "name: 'prelu' type: 'PReLU' prelu_param { channel_shared: true filler { value: -0.3 } } "
      "bottom: 'x' top: 'x'",
      {kGpuCheckShape}, GpuSumTolerance<TypeParam>());
  ExpectInPlaceGpuMatchesCpu(shared);
}

}  // namespace caffe
