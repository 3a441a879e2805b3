// DummyDataLayer: shapes (BlobShape or legacy 4-D, once or per top), the default constant 0,
// constant fillers filled once at setup and never refilled, random fillers refilled on every
// forward, one filler per top, and bad parameter counts.
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/dummy_data_layer.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class DummyDataLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> top_0_, top_1_, top_2_;
  Blobs<Dtype> no_bottoms_;
  Blobs<Dtype> top_vec_{&top_0_, &top_1_, &top_2_};
};
TYPED_TEST_SUITE(DummyDataLayerTest, TestDtypesAndDevices);

TYPED_TEST(DummyDataLayerTest, LegacyDimsAndDefaultZeroFill) {
  using Dtype = typename TypeParam::Dtype;
  DummyDataLayer<Dtype> layer(ParseLayerParam(
      "name: 'd' type: 'DummyData' dummy_data_param { num: 5 num: 8 num: 2 channels: 3 "
      "height: 2 width: 4 width: 1 width: 6 }"));
  // Leftover values in the top's memory, which setup must overwrite.
  this->top_0_.Reshape(vector<int>{5, 3, 2, 4});
  FillGaussian(&this->top_0_, 1);
  layer.SetUp(this->no_bottoms_, this->top_vec_);
  EXPECT_EQ(this->top_0_.shape(), (vector<int>{5, 3, 2, 4}));
  EXPECT_EQ(this->top_1_.shape(), (vector<int>{8, 3, 2, 1}));
  EXPECT_EQ(this->top_2_.shape(), (vector<int>{2, 3, 2, 6}));
  layer.Forward(this->no_bottoms_, this->top_vec_);
  for (auto* top : this->top_vec_) EXPECT_EQ(top->asum_data(), Dtype(0));
}

TYPED_TEST(DummyDataLayerTest, ConstantFillsOnceAtSetUp) {
  using Dtype = typename TypeParam::Dtype;
  DummyDataLayer<Dtype> layer(
      ParseLayerParam("name: 'd' type: 'DummyData' dummy_data_param { shape { dim: 2 dim: 3 } "
                      "data_filler { type: 'constant' value: 7 } }"));
  layer.SetUp(this->no_bottoms_, this->top_vec_);
  for (auto* top : this->top_vec_) {
    ASSERT_EQ(top->shape(), (vector<int>{2, 3}));
    for (int i = 0; i < top->count(); ++i) EXPECT_EQ(top->cpu_data()[i], Dtype(7));
  }
  // Forward does not refill a constant top: a change made by someone else survives.
  this->top_1_.mutable_cpu_data()[4] = Dtype(-1);
  layer.Forward(this->no_bottoms_, this->top_vec_);
  EXPECT_EQ(this->top_1_.cpu_data()[4], Dtype(-1));
}

TYPED_TEST(DummyDataLayerTest, RandomFillersRefillEveryForwardAndPerTopFillers) {
  using Dtype = typename TypeParam::Dtype;
  DummyDataLayer<Dtype> layer(ParseLayerParam(
      "name: 'd' type: 'DummyData' dummy_data_param { shape { dim: 10 } shape { dim: 4 dim: 5 } "
      "shape { dim: 3 } data_filler { type: 'constant' value: 2 } "
      "data_filler { type: 'uniform' min: 1 max: 2 } data_filler { type: 'gaussian' } }"));
  layer.SetUp(this->no_bottoms_, this->top_vec_);
  EXPECT_EQ(this->top_1_.shape(), (vector<int>{4, 5}));
  layer.Forward(this->no_bottoms_, this->top_vec_);
  Blob<Dtype> first;
  first.CopyFrom(this->top_1_, false, true);
  for (int i = 0; i < first.count(); ++i) {
    EXPECT_GE(first.cpu_data()[i], Dtype(1));
    EXPECT_LE(first.cpu_data()[i], Dtype(2));
  }
  layer.Forward(this->no_bottoms_, this->top_vec_);
  int changed = 0;
  for (int i = 0; i < first.count(); ++i)
    changed += first.cpu_data()[i] != this->top_1_.cpu_data()[i];
  EXPECT_GT(changed, 0);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(this->top_0_.cpu_data()[i], Dtype(2));
}

TYPED_TEST(DummyDataLayerTest, RejectsBadCounts) {
  using Dtype = typename TypeParam::Dtype;
  const char* cases[] = {
      // two fillers for three tops
      "dummy_data_param { shape { dim: 1 } data_filler { type: 'constant' } "
      "data_filler { type: 'constant' } }",
      // two shapes for three tops
      "dummy_data_param { shape { dim: 1 } shape { dim: 2 } }",
      // no shape at all
      "dummy_data_param { }",
      // both shape and legacy dims
      "dummy_data_param { shape { dim: 1 } num: 1 channels: 1 height: 1 width: 1 }",
      // two nums for three tops
      "dummy_data_param { num: 1 num: 2 channels: 1 height: 1 width: 1 }",
      // legacy dims with width missing
      "dummy_data_param { num: 1 channels: 1 height: 1 }",
  };
  for (const char* param : cases) {
    DummyDataLayer<Dtype> layer(
        ParseLayerParam(std::string("name: 'd' type: 'DummyData' ") + param));
    EXPECT_THROW(layer.SetUp(this->no_bottoms_, this->top_vec_), caffe::Error) << param;
  }
}

}  // namespace caffe
