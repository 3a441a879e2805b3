// ReshapeLayer: BVLC's shape rules (0 copies a dim, one -1 is inferred, axis / num_axes select
// the replaced range, negative axes count from the end), the top as a view of the bottom, shapes
// that follow the bottom on a later Reshape, finite-difference gradients, and impossible shapes.
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/reshape_layer.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class ReshapeLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  ReshapeLayerTest() : bottom_(vector<int>{2, 3, 6, 5}) { FillGaussian(&bottom_, 1701); }
  vector<int> TopShape(const std::string& param) {
    ReshapeLayer<Dtype> layer(ParseLayerParam("name: 'r' type: 'Reshape' " + param));
    layer.SetUp(bottom_vec_, top_vec_);
    return top_.shape();
  }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_};
  Blobs<Dtype> top_vec_{&top_};
};
TYPED_TEST_SUITE(ReshapeLayerTest, TestDtypesAndDevices);

TYPED_TEST(ReshapeLayerTest, ExplicitCopiedAndInferredDims) {
  EXPECT_EQ(this->TopShape("reshape_param { shape { dim: 6 dim: 2 dim: 3 dim: 5 } }"),
            (vector<int>{6, 2, 3, 5}));
  EXPECT_EQ(this->TopShape("reshape_param { shape { dim: 0 dim: -1 } }"), (vector<int>{2, 90}));
  EXPECT_EQ(this->TopShape("reshape_param { shape { dim: -1 dim: 5 } }"), (vector<int>{36, 5}));
  EXPECT_EQ(this->TopShape("reshape_param { shape { dim: 0 dim: 0 dim: 0 dim: 0 } }"),
            (vector<int>{2, 3, 6, 5}));
  EXPECT_EQ(this->TopShape("reshape_param { shape { dim: 0 dim: 3 dim: -1 dim: 1 dim: 5 } }"),
            (vector<int>{2, 3, 6, 1, 5}));
}

TYPED_TEST(ReshapeLayerTest, AxisAndNumAxesSelectTheReplacedRange) {
  // Replace axis 1 only.
  EXPECT_EQ(this->TopShape("reshape_param { axis: 1 num_axes: 1 shape { dim: 1 dim: 3 } }"),
            (vector<int>{2, 1, 3, 6, 5}));
  // num_axes 0 inserts dims before the axis.
  EXPECT_EQ(this->TopShape("reshape_param { axis: 0 num_axes: 0 shape { dim: 1 } }"),
            (vector<int>{1, 2, 3, 6, 5}));
  // axis -1 is after the last axis: append.
  EXPECT_EQ(this->TopShape("reshape_param { axis: -1 num_axes: 0 shape { dim: 1 dim: 1 } }"),
            (vector<int>{2, 3, 6, 5, 1, 1}));
  // axis -2 with num_axes -1: replace the last axis.
  EXPECT_EQ(this->TopShape("reshape_param { axis: -2 shape { dim: 5 dim: 1 } }"),
            (vector<int>{2, 3, 6, 5, 1}));
  // Inference and copies are relative to the replaced range.
  EXPECT_EQ(this->TopShape("reshape_param { axis: 2 shape { dim: -1 } }"), (vector<int>{2, 3, 30}));
  EXPECT_EQ(this->TopShape("reshape_param { axis: 1 num_axes: 2 shape { dim: 0 dim: -1 dim: 2 } }"),
            (vector<int>{2, 3, 3, 2, 5}));
  // An empty shape replacing no axes changes nothing.
  EXPECT_EQ(this->TopShape("reshape_param { axis: 1 num_axes: 0 shape { } }"),
            (vector<int>{2, 3, 6, 5}));
}

TYPED_TEST(ReshapeLayerTest, TopSharesDataAndDiffWithTheBottom) {
  using Dtype = typename TypeParam::Dtype;
  ReshapeLayer<Dtype> layer(
      ParseLayerParam("name: 'r' type: 'Reshape' reshape_param { shape { dim: -1 dim: 6 } }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{30, 6}));
  EXPECT_EQ(this->top_.cpu_data(), this->bottom_.cpu_data());
  EXPECT_EQ(this->top_.data_at({7, 4}), this->bottom_.cpu_data()[7 * 6 + 4]);
  this->top_.mutable_cpu_diff()[11] = Dtype(3);
  layer.Backward(this->top_vec_, {true}, this->bottom_vec_);
  EXPECT_EQ(this->bottom_.cpu_diff(), this->top_.cpu_diff());
  EXPECT_EQ(this->bottom_.cpu_diff()[11], Dtype(3));
}

TYPED_TEST(ReshapeLayerTest, InferredDimFollowsTheBottom) {
  using Dtype = typename TypeParam::Dtype;
  ReshapeLayer<Dtype> layer(
      ParseLayerParam("name: 'r' type: 'Reshape' reshape_param { shape { dim: 0 dim: -1 } }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  this->bottom_.Reshape({4, 7, 2});
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{4, 14}));
}

TYPED_TEST(ReshapeLayerTest, RejectsImpossibleShapes) {
  using Dtype = typename TypeParam::Dtype;
  const char* cases[] = {
      "reshape_param { shape { dim: -1 dim: -1 } }",                     // two inferred dims
      "reshape_param { shape { dim: -1 dim: 7 } }",                      // 180 not divisible by 7
      "reshape_param { shape { dim: 2 dim: 3 } }",                       // count 6 vs. 180
      "reshape_param { shape { dim: 0 dim: 0 dim: 0 dim: 0 dim: 0 } }",  // no axis 4 to copy
      "reshape_param { shape { dim: -2 dim: -90 } }",                    // negative dims
      "reshape_param { axis: 5 shape { dim: 1 } }",                      // axis out of range
      "reshape_param { axis: -6 shape { dim: 1 } }",                     // axis out of range
      "reshape_param { axis: 2 num_axes: 3 shape { dim: -1 } }",         // range past the end
      "reshape_param { num_axes: -2 shape { dim: -1 } }",                // bad num_axes
  };
  for (const char* param : cases) {
    ReshapeLayer<Dtype> layer(ParseLayerParam(std::string("name: 'r1' type: 'Reshape' ") + param));
    EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), caffe::Error) << param;
  }
  ReshapeLayer<Dtype> layer(
      ParseLayerParam("name: 'r1' type: 'Reshape' reshape_param { shape { dim: -1 dim: 7 } }"));
  try {
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    FAIL() << "expected caffe::Error";
  } catch (const caffe::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("Reshape layer 'r1'"), std::string::npos) << message;
    EXPECT_NE(message.find("2 3 6 5"), std::string::npos) << message;
  }
  ReshapeLayer<Dtype> in_place(
      ParseLayerParam("name: 'r1' type: 'Reshape' reshape_param { shape { dim: -1 } }"));
  EXPECT_THROW(in_place.SetUp(this->bottom_vec_, this->bottom_vec_), caffe::Error);
}

TYPED_TEST(ReshapeLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{2, 3, 4});
  FillGaussian(&bottom, 9);
  Blobs<Dtype> bottoms{&bottom};
  ReshapeLayer<Dtype> layer(ParseLayerParam(
      "name: 'r' type: 'Reshape' reshape_param { shape { dim: 0 dim: 2 dim: -1 } }"));
  GradientChecker<Dtype> checker(/*stepsize=*/1e-2, /*threshold=*/1e-2);
  checker.CheckGradientEltwise(&layer, bottoms, this->top_vec_);
}

}  // namespace caffe
