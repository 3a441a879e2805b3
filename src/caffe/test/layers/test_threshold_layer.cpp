// ThresholdLayer: shape, hand-computed step values (strictly greater than the threshold), in
// place, and the missing backward (an error only when a bottom gradient is asked for).
// ThresholdLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <vector>

#include "caffe/layers/threshold_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class ThresholdLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  ThresholdLayerTest() : bottom_(vector<int>{2, 3, 4, 5}) { FillGaussian<Dtype>(&bottom_, 1701); }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(ThresholdLayerTest, TestDtypesAndDevices);

TYPED_TEST(ThresholdLayerTest, IsRegisteredAsThreshold) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("name: 't' type: 'Threshold'"));
  EXPECT_STREQ(layer->type(), "Threshold");
}

TYPED_TEST(ThresholdLayerTest, TopHasBottomShape) {
  using Dtype = typename TypeParam::Dtype;
  ThresholdLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
}

TYPED_TEST(ThresholdLayerTest, ForwardMatchesHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{5}), top;
  const Dtype x[] = {-1, 0, Dtype(0.5), Dtype(0.6), 3};
  caffe_copy(5, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  ThresholdLayer<Dtype> layer(ParseLayerParam("threshold_param { threshold: 0.5 }"));
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  const Dtype expected[] = {0, 0, 0, 1, 1};  // x == threshold gives 0
  for (int i = 0; i < 5; ++i) EXPECT_EQ(top.cpu_data()[i], expected[i]) << i;
}

TYPED_TEST(ThresholdLayerTest, DefaultThresholdIsZeroAndWorksInPlace) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> blob;
  blob.CopyFrom(this->bottom_, false, true);
  Blobs<Dtype> in_place{&blob};
  ThresholdLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(in_place, in_place);
  layer.Forward(in_place, in_place);
  for (int i = 0; i < blob.count(); ++i) {
    EXPECT_EQ(blob.cpu_data()[i], this->bottom_.cpu_data()[i] > 0 ? 1 : 0) << i;
  }
}

TYPED_TEST(ThresholdLayerTest, BackwardIsAnErrorOnlyWhenAGradientIsAskedFor) {
  using Dtype = typename TypeParam::Dtype;
  ThresholdLayer<Dtype> layer(ParseLayerParam("name: 't'"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  caffe_set(this->bottom_.count(), Dtype(3), this->bottom_.mutable_cpu_diff());
  EXPECT_NO_THROW(layer.Backward(this->top_vec_, {false}, this->bottom_vec_));
  EXPECT_EQ(this->bottom_.cpu_diff()[0], Dtype(3));  // untouched
  EXPECT_THROW(layer.Backward(this->top_vec_, {true}, this->bottom_vec_), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class ThresholdLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(ThresholdLayerGpuTest, TestDtypes);

TYPED_TEST(ThresholdLayerGpuTest, Threshold) {
  // No backward: the layer has none.
  GpuLayerCase<TypeParam> test_case = MakeGpuCase<TypeParam>(
      "name: 'step' type: 'Threshold' threshold_param { threshold: 0.3 } bottom: 'x' top: 'y'",
      {kGpuCheckShape});
  test_case.backward = false;
  ExpectGpuMatchesCpu(test_case);
  GpuLayerCase<TypeParam> in_place = MakeGpuCase<TypeParam>(
      "name: 'step' type: 'Threshold' bottom: 'x' top: 'x'", {kGpuCheckLargeShape});
  in_place.backward = false;
  ExpectInPlaceGpuMatchesCpu(in_place);
}

}  // namespace caffe
