// ELULayer: shape, hand-computed values and BVLC's backward (y + alpha for x <= 0), finite
// differences, and arity errors.
// ELULayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <vector>

#include "caffe/layers/elu_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class ELULayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  ELULayerTest() : bottom_(vector<int>{2, 3, 4, 5}) { FillGaussian<Dtype>(&bottom_, 1701); }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(ELULayerTest, TestDtypesAndDevices);

TYPED_TEST(ELULayerTest, IsRegisteredAsELU) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("name: 'e' type: 'ELU'"));
  EXPECT_STREQ(layer->type(), "ELU");
}

TYPED_TEST(ELULayerTest, TopHasBottomShape) {
  using Dtype = typename TypeParam::Dtype;
  ELULayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
}

TYPED_TEST(ELULayerTest, ForwardAndBackwardMatchHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{5}), top;
  const Dtype x[] = {-2, Dtype(-0.5), 0, Dtype(0.5), 3};
  caffe_copy(5, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  ELULayer<Dtype> layer(ParseLayerParam("elu_param { alpha: 0.5 }"));
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  // 0.5 * (e^x - 1) for x <= 0.
  const double expected[] = {-0.432332358382, -0.196734670144, 0, 0.5, 3};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(top.cpu_data()[i], expected[i], 1e-6) << i;
  caffe_set(5, Dtype(2), top.mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  // 2 * (y + alpha) = 2 * 0.5 * e^x for x <= 0 (x = 0 included), 2 for x > 0.
  const double expected_dx[] = {0.135335283237, 0.606530659713, 1, 2, 2};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(bottom.cpu_diff()[i], expected_dx[i], 1e-6) << i;
}

TYPED_TEST(ELULayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  ELULayer<Dtype> layer(ParseLayerParam("elu_param { alpha: 0.5 }"));
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3), 1701, /*kink=*/0, /*kink_range=*/0.02);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ELULayerTest, DefaultAlphaGradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  ELULayer<Dtype> layer(LayerParameter{});
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3), 1701, /*kink=*/0, /*kink_range=*/0.02);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ELULayerTest, RejectsTwoTops) {
  using Dtype = typename TypeParam::Dtype;
  ELULayer<Dtype> layer(LayerParameter{});
  Blob<Dtype> other;
  Blobs<Dtype> two{&this->top_, &other};
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, two), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class ELULayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(ELULayerGpuTest, TestDtypes);

TYPED_TEST(ELULayerGpuTest, ELU) {
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>("name: 'elu' type: 'ELU' bottom: 'x' top: 'y'", {kGpuCheckShape}));
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'elu' type: 'ELU' elu_param { alpha: 0.4 } bottom: 'x' top: 'y'",
      {kGpuCheckLargeShape}));
}

}  // namespace caffe
