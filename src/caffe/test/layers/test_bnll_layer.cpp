// BNLLLayer: shape, hand-computed softplus values and gradients (including inputs large enough
// that the unguarded forms would overflow), and finite differences.
// BNLLLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <cmath>
#include <vector>

#include "caffe/layers/bnll_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class BNLLLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  BNLLLayerTest() : bottom_(vector<int>{2, 3, 4, 5}) { FillGaussian<Dtype>(&bottom_, 1701); }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(BNLLLayerTest, TestDtypesAndDevices);

TYPED_TEST(BNLLLayerTest, IsRegisteredAsBNLL) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("name: 'b' type: 'BNLL'"));
  EXPECT_STREQ(layer->type(), "BNLL");
}

TYPED_TEST(BNLLLayerTest, TopHasBottomShape) {
  using Dtype = typename TypeParam::Dtype;
  BNLLLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
}

TYPED_TEST(BNLLLayerTest, ForwardAndBackwardMatchHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{6}), top;
  const Dtype x[] = {-100, -1, 0, 1, 100, 1000};
  caffe_copy(6, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  BNLLLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  // log(1 + e^x); no overflow to inf for large x.
  const double expected[] = {3.720076e-44, 0.313261687518, 0.693147180560, 1.313261687518, 100,
                             1000};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(top.cpu_data()[i], expected[i], 1e-6) << i;
  caffe_set(6, Dtype(2), top.mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  // 2 * sigmoid(x); exp is capped at e^50, so large x gives 2, not inf / inf = NaN.
  const double expected_dx[] = {0, 0.537882842739, 1, 1.462117157261, 2, 2};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(bottom.cpu_diff()[i], expected_dx[i], 1e-6) << i;
}

TYPED_TEST(BNLLLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  BNLLLayer<Dtype> layer(LayerParameter{});
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3));
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(BNLLLayerTest, RejectsTwoBottoms) {
  using Dtype = typename TypeParam::Dtype;
  BNLLLayer<Dtype> layer(LayerParameter{});
  Blobs<Dtype> two{&this->bottom_, &this->bottom_};
  EXPECT_THROW(layer.SetUp(two, this->top_vec_), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class BNLLLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(BNLLLayerGpuTest, TestDtypes);

TYPED_TEST(BNLLLayerGpuTest, BNLL) {
  // U(-60, 60) crosses both the x > 0 form and the gradient's threshold of 50.
  GpuLayerCase<TypeParam> test_case =
      MakeGpuCase<TypeParam>("name: 'bnll' type: 'BNLL' bottom: 'x' top: 'y'", {kGpuCheckShape});
  test_case.fill = UniformFill<TypeParam>(-60, 60);
  ExpectGpuMatchesCpu(test_case);
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>("name: 'bnll' type: 'BNLL' bottom: 'x' top: 'y'",
                                             {kGpuCheckLargeShape}));
}

}  // namespace caffe
