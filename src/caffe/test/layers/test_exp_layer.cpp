// ExpLayer: shape, hand-computed values for base e and base 2 with scale and shift, in-place
// use, finite differences, and rejected bases.
// ExpLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <cmath>
#include <vector>

#include "caffe/layers/exp_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class ExpLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  ExpLayerTest() : bottom_(vector<int>{2, 3, 4, 5}) { FillGaussian<Dtype>(&bottom_, 1701); }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(ExpLayerTest, TestDtypesAndDevices);

TYPED_TEST(ExpLayerTest, IsRegisteredAsExp) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("name: 'e' type: 'Exp'"));
  EXPECT_STREQ(layer->type(), "Exp");
}

TYPED_TEST(ExpLayerTest, TopHasBottomShape) {
  using Dtype = typename TypeParam::Dtype;
  ExpLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
}

TYPED_TEST(ExpLayerTest, DefaultIsNaturalExp) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{3}), top;
  const Dtype x[] = {-1, 0, 2};
  caffe_copy(3, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  ExpLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  const double expected[] = {0.367879441171, 1, 7.389056098931};
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(top.cpu_data()[i], expected[i], 1e-5) << i;
  caffe_set(3, Dtype(2), top.mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(bottom.cpu_diff()[i], 2 * expected[i], 1e-5) << i;
}

TYPED_TEST(ExpLayerTest, BaseScaleShiftMatchHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{3}), top;
  const Dtype x[] = {-2, 0, 2};
  caffe_copy(3, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  ExpLayer<Dtype> layer(ParseLayerParam("exp_param { base: 2 scale: 0.5 shift: 1 }"));
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  const double expected[] = {1, 2, 4};  // 2^(1 + x/2)
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(top.cpu_data()[i], expected[i], 1e-5) << i;
  caffe_set(3, Dtype(1), top.mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(bottom.cpu_diff()[i], expected[i] * std::log(2.0) * 0.5, 1e-5) << i;
  }
}

TYPED_TEST(ExpLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  const LayerParameter param = ParseLayerParam("exp_param { base: 3 scale: 0.7 shift: -0.2 }");
  ExpLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  caffe_set(this->top_.count(), Dtype(1.5), this->top_.mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true}, this->bottom_vec_);
  Blob<Dtype> blob;
  blob.CopyFrom(this->bottom_, false, true);
  Blobs<Dtype> in_place{&blob};
  ExpLayer<Dtype> in_place_layer(param);
  in_place_layer.SetUp(in_place, in_place);
  in_place_layer.Forward(in_place, in_place);
  caffe_set(blob.count(), Dtype(1.5), blob.mutable_cpu_diff());
  in_place_layer.Backward(in_place, {true}, in_place);
  for (int i = 0; i < blob.count(); ++i) {
    EXPECT_EQ(blob.cpu_data()[i], this->top_.cpu_data()[i]) << i;
    EXPECT_EQ(blob.cpu_diff()[i], this->bottom_.cpu_diff()[i]) << i;
  }
}

TYPED_TEST(ExpLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* text :
       {"", "exp_param { base: 2 scale: 0.5 shift: 1 }", "exp_param { scale: -0.7 shift: 0.3 }"}) {
    SCOPED_TRACE(text);
    ExpLayer<Dtype> layer(ParseLayerParam(text));
    GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3));
    checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
  }
}

TYPED_TEST(ExpLayerTest, RejectsNonPositiveBase) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* text : {"exp_param { base: -2 }", "exp_param { base: 0 }"}) {
    SCOPED_TRACE(text);
    ExpLayer<Dtype> layer(ParseLayerParam(text));
    EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), Error);
  }
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class ExpLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(ExpLayerGpuTest, TestDtypes);

TYPED_TEST(ExpLayerGpuTest, Exp) {
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>("name: 'exp' type: 'Exp' bottom: 'x' top: 'y'", {kGpuCheckShape}));
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'exp2' type: 'Exp' exp_param { base: 2 scale: 0.5 shift: 1 } bottom: 'x' top: 'y'",
      {kGpuCheckLargeShape}));
  ExpectInPlaceGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'exp' type: 'Exp' exp_param { scale: -0.7 shift: 0.2 } bottom: 'x' top: 'x'",
      {kGpuCheckShape}));
}

}  // namespace caffe
