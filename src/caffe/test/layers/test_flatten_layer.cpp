// FlattenLayer: shapes for axis/end_axis ranges, the top as a view of the bottom (data and diff
// shared), a view of a view, finite-difference gradients, and bad axes.
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/flatten_layer.hpp"
#include "caffe/layers/reshape_layer.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class FlattenLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  FlattenLayerTest() : bottom_(vector<int>{2, 3, 6, 5}) { FillGaussian(&bottom_, 1701); }
  vector<int> TopShape(const std::string& param) {
    FlattenLayer<Dtype> layer(ParseLayerParam("name: 'f' type: 'Flatten' " + param));
    layer.SetUp(bottom_vec_, top_vec_);
    return top_.shape();
  }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_};
  Blobs<Dtype> top_vec_{&top_};
};
TYPED_TEST_SUITE(FlattenLayerTest, TestDtypesAndDevices);

TYPED_TEST(FlattenLayerTest, TopShapeMergesTheAxisRange) {
  EXPECT_EQ(this->TopShape(""), (vector<int>{2, 90}));
  EXPECT_EQ(this->TopShape("flatten_param { axis: 2 }"), (vector<int>{2, 3, 30}));
  EXPECT_EQ(this->TopShape("flatten_param { end_axis: -2 }"), (vector<int>{2, 18, 5}));
  EXPECT_EQ(this->TopShape("flatten_param { axis: 0 end_axis: 1 }"), (vector<int>{6, 6, 5}));
  EXPECT_EQ(this->TopShape("flatten_param { axis: 3 }"), (vector<int>{2, 3, 6, 5}));
  EXPECT_EQ(this->TopShape("flatten_param { axis: 0 }"), (vector<int>{180}));
}

TYPED_TEST(FlattenLayerTest, TopIsAViewOfTheBottom) {
  using Dtype = typename TypeParam::Dtype;
  FlattenLayer<Dtype> layer(ParseLayerParam("name: 'f' type: 'Flatten'"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.cpu_data(), this->bottom_.cpu_data());
  for (int c = 0; c < 90; ++c) {
    EXPECT_EQ(this->top_.data_at({1, c}), this->bottom_.data_at(1, c / 30, (c / 5) % 6, c % 5));
  }
  for (int i = 0; i < this->top_.count(); ++i) this->top_.mutable_cpu_diff()[i] = Dtype(i);
  layer.Backward(this->top_vec_, {true}, this->bottom_vec_);
  EXPECT_EQ(this->bottom_.cpu_diff(), this->top_.cpu_diff());
  EXPECT_EQ(this->bottom_.diff_at(1, 2, 3, 4), Dtype(90 + 60 + 15 + 4));
}

// A Flatten after a Reshape (both views) passes the gradient down to the Reshape's bottom: BVLC's
// Flatten gave the Reshape's top a diff of its own, so it never did.
TYPED_TEST(FlattenLayerTest, AFlattenAfterAReshapePassesTheGradientThrough) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> view, flat;
  Blobs<Dtype> views{&view}, flats{&flat};
  ReshapeLayer<Dtype> reshape(
      ParseLayerParam("name: 'r' type: 'Reshape' reshape_param { shape { dim: 0 dim: -1 } }"));
  FlattenLayer<Dtype> flatten(ParseLayerParam("name: 'f' type: 'Flatten'"));
  reshape.SetUp(this->bottom_vec_, views);
  flatten.SetUp(views, flats);
  for (int pass = 0; pass < 2; ++pass) {
    reshape.Forward(this->bottom_vec_, views);
    flatten.Forward(views, flats);
    for (int i = 0; i < flat.count(); ++i) flat.mutable_cpu_diff()[i] = Dtype(i + pass);
    flatten.Backward(flats, {true}, views);
    reshape.Backward(views, {true}, this->bottom_vec_);
    for (int i = 0; i < flat.count(); ++i) {
      ASSERT_EQ(Dtype(i + pass), this->bottom_.cpu_diff()[i]) << i << ", pass " << pass;
    }
  }
}

TYPED_TEST(FlattenLayerTest, RejectsBadAxesAndInPlace) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* param : {"flatten_param { axis: 4 }", "flatten_param { end_axis: -5 }",
                            "flatten_param { axis: 2 end_axis: 1 }"}) {
    FlattenLayer<Dtype> layer(ParseLayerParam(std::string("name: 'f' type: 'Flatten' ") + param));
    EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), caffe::Error) << param;
  }
  FlattenLayer<Dtype> layer(ParseLayerParam("name: 'f' type: 'Flatten'"));
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->bottom_vec_), caffe::Error);
}

TYPED_TEST(FlattenLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{2, 3, 2, 2});
  FillGaussian(&bottom, 7);
  Blobs<Dtype> bottoms{&bottom};
  FlattenLayer<Dtype> layer(ParseLayerParam("name: 'f' type: 'Flatten'"));
  GradientChecker<Dtype> checker(/*stepsize=*/1e-2, /*threshold=*/1e-2);
  checker.CheckGradientEltwise(&layer, bottoms, this->top_vec_);
}

}  // namespace caffe
