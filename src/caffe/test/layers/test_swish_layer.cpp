// SwishLayer: shape, hand-computed values and gradients, in place against out of place, finite
// differences for two betas, and arity errors.
// SwishLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <vector>

#include "caffe/layers/swish_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class SwishLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  SwishLayerTest() : bottom_(vector<int>{2, 3, 4, 5}) { FillGaussian<Dtype>(&bottom_, 1701); }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(SwishLayerTest, TestDtypesAndDevices);

TYPED_TEST(SwishLayerTest, IsRegisteredAsSwish) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("name: 's' type: 'Swish'"));
  EXPECT_STREQ(layer->type(), "Swish");
}

TYPED_TEST(SwishLayerTest, TopHasBottomShape) {
  using Dtype = typename TypeParam::Dtype;
  SwishLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
}

TYPED_TEST(SwishLayerTest, ForwardAndBackwardMatchHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{4}), top;
  const Dtype x[] = {-2, 0, 1, 50};
  caffe_copy(4, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  SwishLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  // x * sigmoid(x)
  const double expected[] = {-0.238405844044, 0, 0.731058578630, 50};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(top.cpu_data()[i], expected[i], 1e-5) << i;
  caffe_set(4, Dtype(1), top.mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  // s + x s (1 - s)
  const double expected_dx[] = {-0.090784248785, 0.5, 0.927670511264, 1};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(bottom.cpu_diff()[i], expected_dx[i], 1e-5) << i;
}

TYPED_TEST(SwishLayerTest, BetaScalesTheSigmoidInput) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{2}), top;
  const Dtype x[] = {-1, 1};
  caffe_copy(2, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  SwishLayer<Dtype> layer(ParseLayerParam("swish_param { beta: 2 }"));
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  // x * sigmoid(2x): sigmoid(2) = 0.880797077978
  EXPECT_NEAR(top.cpu_data()[0], -0.119202922022, 1e-5);
  EXPECT_NEAR(top.cpu_data()[1], 0.880797077978, 1e-5);
}

TYPED_TEST(SwishLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  const LayerParameter param = ParseLayerParam("swish_param { beta: 1.5 }");
  SwishLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  caffe_set(this->top_.count(), Dtype(0.7), this->top_.mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true}, this->bottom_vec_);
  Blob<Dtype> blob;
  blob.CopyFrom(this->bottom_, false, true);
  Blobs<Dtype> in_place{&blob};
  SwishLayer<Dtype> in_place_layer(param);
  in_place_layer.SetUp(in_place, in_place);
  in_place_layer.Forward(in_place, in_place);
  caffe_set(blob.count(), Dtype(0.7), blob.mutable_cpu_diff());
  in_place_layer.Backward(in_place, {true}, in_place);
  for (int i = 0; i < blob.count(); ++i) {
    EXPECT_EQ(blob.cpu_data()[i], this->top_.cpu_data()[i]) << i;
    EXPECT_EQ(blob.cpu_diff()[i], this->bottom_.cpu_diff()[i]) << i;
  }
}

TYPED_TEST(SwishLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* text : {"", "swish_param { beta: 1.5 }"}) {
    SCOPED_TRACE(text);
    SwishLayer<Dtype> layer(ParseLayerParam(text));
    GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3));
    checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
  }
}

TYPED_TEST(SwishLayerTest, RejectsTwoBottoms) {
  using Dtype = typename TypeParam::Dtype;
  SwishLayer<Dtype> layer(LayerParameter{});
  Blobs<Dtype> two{&this->bottom_, &this->bottom_};
  EXPECT_THROW(layer.SetUp(two, this->top_vec_), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class SwishLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(SwishLayerGpuTest, TestDtypes);

TYPED_TEST(SwishLayerGpuTest, Swish) {
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>("name: 'swish' type: 'Swish' bottom: 'x' top: 'y'", {kGpuCheckShape}));
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'swish' type: 'Swish' swish_param { beta: 1.5 } bottom: 'x' top: 'y'",
      {kGpuCheckLargeShape}));
  ExpectInPlaceGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'swish' type: 'Swish' swish_param { beta: 0.7 } bottom: 'x' top: 'x'",
      {kGpuCheckShape}));
}

}  // namespace caffe
