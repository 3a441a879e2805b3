// SilenceLayer: takes any bottoms and no tops; backward zeroes exactly the diffs asked for.
// SilenceLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/silence_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
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

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----
// Silence has no top, so it is not checked through ExpectGpuMatchesCpu.

template <typename Dtype>
class SilenceLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(SilenceLayerGpuTest, TestDtypes);

TYPED_TEST(SilenceLayerGpuTest, SilenceZeroesOnlyTheAskedForDiffs) {
  Caffe::set_mode(Caffe::GPU);
  auto layer = LayerRegistry<TypeParam>::CreateLayer(
      ParseLayerParam("name: 'silence' type: 'Silence' bottom: 'a' bottom: 'b'"));
  Blob<TypeParam> a(vector<int>{3, 5, 71}), b(vector<int>{1100});
  FillGaussian(&a, 25);
  FillGaussian(&b, 26);
  caffe_copy(a.count(), a.cpu_data(), a.mutable_cpu_diff());
  caffe_copy(b.count(), b.cpu_data(), b.mutable_cpu_diff());
  const Blobs<TypeParam> bottom{&a, &b};
  const Blobs<TypeParam> top;
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  layer->Backward(top, {true, false}, bottom);
  Caffe::set_mode(Caffe::CPU);
  for (int i = 0; i < a.count(); ++i) ASSERT_EQ(a.cpu_diff()[i], TypeParam(0)) << i;
  for (int i = 0; i < b.count(); ++i) ASSERT_EQ(b.cpu_diff()[i], b.cpu_data()[i]) << i;
}

}  // namespace caffe
