// InputLayer: tops shaped by one shared shape, one shape per top, or left alone; forward keeps
// the caller's values; bad shape counts and bottoms are rejected.
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/input_layer.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class InputLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> top_0_, top_1_;
  Blobs<Dtype> no_bottoms_;
  Blobs<Dtype> top_vec_{&top_0_, &top_1_};
};
TYPED_TEST_SUITE(InputLayerTest, TestDtypesAndDevices);

TYPED_TEST(InputLayerTest, OneShapeForAllTops) {
  using Dtype = typename TypeParam::Dtype;
  InputLayer<Dtype> layer(ParseLayerParam(
      "name: 'in' type: 'Input' input_param { shape { dim: 2 dim: 3 dim: 8 dim: 8 } }"));
  layer.SetUp(this->no_bottoms_, this->top_vec_);
  EXPECT_EQ(this->top_0_.shape(), (vector<int>{2, 3, 8, 8}));
  EXPECT_EQ(this->top_1_.shape(), (vector<int>{2, 3, 8, 8}));
}

TYPED_TEST(InputLayerTest, OneShapePerTopAndForwardKeepsValues) {
  using Dtype = typename TypeParam::Dtype;
  InputLayer<Dtype> layer(ParseLayerParam(
      "name: 'in' type: 'Input' input_param { shape { dim: 4 dim: 5 } shape { dim: 4 } }"));
  layer.SetUp(this->no_bottoms_, this->top_vec_);
  EXPECT_EQ(this->top_0_.shape(), (vector<int>{4, 5}));
  EXPECT_EQ(this->top_1_.shape(), (vector<int>{4}));
  FillGaussian(&this->top_0_, 3);
  const Dtype before = this->top_0_.cpu_data()[7];
  EXPECT_EQ(layer.Forward(this->no_bottoms_, this->top_vec_), Dtype(0));
  EXPECT_EQ(this->top_0_.cpu_data()[7], before);
  EXPECT_EQ(this->top_0_.shape(), (vector<int>{4, 5}));
}

TYPED_TEST(InputLayerTest, NoShapeLeavesTopsAsTheyAre) {
  using Dtype = typename TypeParam::Dtype;
  this->top_0_.Reshape({1, 7});
  InputLayer<Dtype> layer(ParseLayerParam("name: 'in' type: 'Input'"));
  Blobs<Dtype> one{&this->top_0_};
  layer.SetUp(this->no_bottoms_, one);
  EXPECT_EQ(this->top_0_.shape(), (vector<int>{1, 7}));
}

TYPED_TEST(InputLayerTest, RejectsWrongShapeCountAndBottoms) {
  using Dtype = typename TypeParam::Dtype;
  InputLayer<Dtype> layer(
      ParseLayerParam("name: 'in' type: 'Input' input_param { shape { dim: 1 } shape { dim: 2 } "
                      "shape { dim: 3 } }"));
  EXPECT_THROW(layer.SetUp(this->no_bottoms_, this->top_vec_), caffe::Error);
  Blob<Dtype> bottom(vector<int>{1});
  Blobs<Dtype> bottoms{&bottom};
  InputLayer<Dtype> with_bottom(
      ParseLayerParam("name: 'in' type: 'Input' input_param { shape { dim: 1 } }"));
  EXPECT_THROW(with_bottom.SetUp(bottoms, this->top_vec_), caffe::Error);
  InputLayer<Dtype> negative(
      ParseLayerParam("name: 'in' type: 'Input' input_param { shape { dim: -1 } }"));
  EXPECT_THROW(negative.SetUp(this->no_bottoms_, this->top_vec_), caffe::Error);
}

}  // namespace caffe
