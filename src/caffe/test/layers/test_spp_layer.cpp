// SPPLayer: top shapes (flattened pyramid; BVLC's unflattened single level), hand-computed MAX
// and AVE pyramids including BVLC's padding of sizes that do not divide evenly, reshaping to a
// new input size, finite differences, and parameter/shape errors.
#include <algorithm>
#include <vector>

#include "caffe/layers/spp_layer.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class SPPLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  SPPLayerTest() : bottom_(vector<int>{2, 3, 9, 8}) { FillGaussian<Dtype>(&bottom_, 1701); }
  // Forward of a (1, 1, side, side) bottom holding 0, 1, 2, ... in row-major order.
  vector<Dtype> ForwardRamp(int side, const char* text) {
    Blob<Dtype> bottom(vector<int>{1, 1, side, side}), top;
    for (int i = 0; i < bottom.count(); ++i) bottom.mutable_cpu_data()[i] = Dtype(i);
    Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
    SPPLayer<Dtype> layer(ParseLayerParam(text));
    layer.SetUp(bottom_vec, top_vec);
    layer.Forward(bottom_vec, top_vec);
    return vector<Dtype>(top.cpu_data(), top.cpu_data() + top.count());
  }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(SPPLayerTest, TestDtypesAndDevices);

TYPED_TEST(SPPLayerTest, IsRegisteredAsSPP) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(
      ParseLayerParam("name: 's' type: 'SPP' spp_param { pyramid_height: 2 }"));
  EXPECT_STREQ(layer->type(), "SPP");
}

TYPED_TEST(SPPLayerTest, TopConcatenatesTheFlattenedLevels) {
  using Dtype = typename TypeParam::Dtype;
  SPPLayer<Dtype> layer(ParseLayerParam("spp_param { pyramid_height: 3 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{2, 3 * (1 + 4 + 16)}));
}

TYPED_TEST(SPPLayerTest, SingleLevelKeepsThePoolingShape) {
  using Dtype = typename TypeParam::Dtype;
  SPPLayer<Dtype> layer(ParseLayerParam("spp_param { pyramid_height: 1 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{2, 3, 1, 1}));
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 3; ++c) {
      Dtype max = this->bottom_.data_at(n, c, 0, 0);
      for (int i = 0; i < 72; ++i)
        max = std::max(max, this->bottom_.cpu_data()[(n * 3 + c) * 72 + i]);
      EXPECT_EQ(this->top_.data_at(n, c, 0, 0), max);
    }
  }
}

TYPED_TEST(SPPLayerTest, MaxPyramidOfEvenSize) {
  // 4x4 ramp: level 0 = max of all; level 1 = 2x2 bins of 2x2.
  const auto y = this->ForwardRamp(4, "spp_param { pyramid_height: 2 pool: MAX }");
  const double expected[] = {15, 5, 7, 13, 15};
  ASSERT_EQ(y.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(y[i], expected[i]) << i;
}

TYPED_TEST(SPPLayerTest, AvePyramidOfEvenSize) {
  const auto y = this->ForwardRamp(4, "spp_param { pyramid_height: 2 pool: AVE }");
  const double expected[] = {7.5, 2.5, 4.5, 10.5, 12.5};
  ASSERT_EQ(y.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(y[i], expected[i], 1e-6) << i;
}

TYPED_TEST(SPPLayerTest, MaxPyramidPadsOddSizesAsBvlc) {
  // 3x3 ramp, level 1: kernel ceil(3/2) = 2, pad (2*2 - 3 + 1) / 2 = 1, stride 2: the bins are
  // rows {0}, {1, 2} by columns {0}, {1, 2}.
  const auto y = this->ForwardRamp(3, "spp_param { pyramid_height: 2 pool: MAX }");
  const double expected[] = {8, 0, 2, 6, 8};
  ASSERT_EQ(y.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(y[i], expected[i]) << i;
}

TYPED_TEST(SPPLayerTest, AvePyramidPadsOddSizesAsBvlc) {
  // As above; AVE divides by the window clipped to the padded input (2 x 2), padding as zeros.
  const auto y = this->ForwardRamp(3, "spp_param { pyramid_height: 2 pool: AVE }");
  const double expected[] = {4, 0, 0.75, 2.25, 6};
  ASSERT_EQ(y.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(y[i], expected[i], 1e-6) << i;
}

TYPED_TEST(SPPLayerTest, ReshapesForANewInputSize) {
  using Dtype = typename TypeParam::Dtype;
  SPPLayer<Dtype> layer(ParseLayerParam("spp_param { pyramid_height: 2 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  this->bottom_.Reshape(vector<int>{1, 1, 4, 4});
  for (int i = 0; i < 16; ++i) this->bottom_.mutable_cpu_data()[i] = Dtype(15 - i);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(this->top_.shape(), (vector<int>{1, 5}));
  const Dtype expected[] = {15, 15, 13, 7, 5};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(this->top_.cpu_data()[i], expected[i]) << i;
}

TYPED_TEST(SPPLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{2, 2, 5, 4});
  FillGaussian<Dtype>(&bottom, 1702);
  Blobs<Dtype> bottom_vec{&bottom};
  for (const char* text :
       {"spp_param { pyramid_height: 2 pool: MAX }", "spp_param { pyramid_height: 2 pool: AVE }",
        "spp_param { pyramid_height: 1 pool: AVE }"}) {
    SCOPED_TRACE(text);
    SPPLayer<Dtype> layer(ParseLayerParam(text));
    GradientChecker<Dtype> checker(Dtype(1e-3), Dtype(1e-2));
    checker.CheckGradientExhaustive(&layer, bottom_vec, this->top_vec_);
  }
}

TYPED_TEST(SPPLayerTest, RejectsBadPyramidHeight) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* text : {"name: 's'", "name: 's' spp_param { pyramid_height: 0 }"}) {
    SCOPED_TRACE(text);
    SPPLayer<Dtype> layer(ParseLayerParam(text));
    EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), Error);
  }
}

TYPED_TEST(SPPLayerTest, RejectsInputTooSmallForThePyramid) {
  using Dtype = typename TypeParam::Dtype;
  // Level 2 has 4 x 4 bins; a height of 2 would need pad 1 with kernel 1.
  Blob<Dtype> bottom(vector<int>{1, 1, 2, 8});
  Blobs<Dtype> bottom_vec{&bottom};
  SPPLayer<Dtype> layer(ParseLayerParam("name: 's' spp_param { pyramid_height: 3 }"));
  EXPECT_THROW(layer.SetUp(bottom_vec, this->top_vec_), Error);
}

TYPED_TEST(SPPLayerTest, RejectsBottomThatIsNot4D) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{2, 3, 8});
  Blobs<Dtype> bottom_vec{&bottom};
  SPPLayer<Dtype> layer(ParseLayerParam("name: 's' spp_param { pyramid_height: 2 }"));
  EXPECT_THROW(layer.SetUp(bottom_vec, this->top_vec_), Error);
}

}  // namespace caffe
