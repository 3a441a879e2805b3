// SilenceLayer: takes any bottoms and no tops; backward zeroes exactly the diffs asked for.
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/silence_layer.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class SilenceLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  SilenceLayerTest() : bottom_0_(vector<int>{2, 3}), bottom_1_(vector<int>{4}) {
    FillGaussian(&bottom_0_, 1701);
    FillGaussian(&bottom_1_, 1702);
  }
  Blob<Dtype> bottom_0_, bottom_1_;
  Blobs<Dtype> bottom_vec_{&bottom_0_, &bottom_1_};
  Blobs<Dtype> no_tops_;
};
TYPED_TEST_SUITE(SilenceLayerTest, TestDtypesAndDevices);

TYPED_TEST(SilenceLayerTest, ForwardLeavesTheBottomsUnchanged) {
  using Dtype = typename TypeParam::Dtype;
  SilenceLayer<Dtype> layer(ParseLayerParam("name: 's' type: 'Silence'"));
  layer.SetUp(this->bottom_vec_, this->no_tops_);
  Blob<Dtype> before;
  before.CopyFrom(this->bottom_0_, false, true);
  EXPECT_EQ(layer.Forward(this->bottom_vec_, this->no_tops_), Dtype(0));
  for (int i = 0; i < before.count(); ++i) {
    EXPECT_EQ(this->bottom_0_.cpu_data()[i], before.cpu_data()[i]);
  }
}

TYPED_TEST(SilenceLayerTest, BackwardZeroesOnlyTheRequestedDiffs) {
  using Dtype = typename TypeParam::Dtype;
  SilenceLayer<Dtype> layer(ParseLayerParam("name: 's' type: 'Silence'"));
  layer.SetUp(this->bottom_vec_, this->no_tops_);
  layer.Forward(this->bottom_vec_, this->no_tops_);
  caffe_set(this->bottom_0_.count(), Dtype(3), this->bottom_0_.mutable_cpu_diff());
  caffe_set(this->bottom_1_.count(), Dtype(4), this->bottom_1_.mutable_cpu_diff());
  layer.Backward(this->no_tops_, {true, false}, this->bottom_vec_);
  for (int i = 0; i < this->bottom_0_.count(); ++i) {
    EXPECT_EQ(this->bottom_0_.cpu_diff()[i], Dtype(0));
  }
  for (int i = 0; i < this->bottom_1_.count(); ++i) {
    EXPECT_EQ(this->bottom_1_.cpu_diff()[i], Dtype(4));
  }
}

TYPED_TEST(SilenceLayerTest, RejectsTopsAndMissingBottoms) {
  using Dtype = typename TypeParam::Dtype;
  SilenceLayer<Dtype> layer(ParseLayerParam("name: 's' type: 'Silence'"));
  Blob<Dtype> top;
  Blobs<Dtype> tops{&top};
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, tops), caffe::Error);
  Blobs<Dtype> no_bottoms;
  SilenceLayer<Dtype> other(ParseLayerParam("name: 's' type: 'Silence'"));
  EXPECT_THROW(other.SetUp(no_bottoms, this->no_tops_), caffe::Error);
}

}  // namespace caffe
