// ClipLayer: shape, hand-computed clamping and gradient (the bounds pass it), finite differences
// away from the bounds, and parameter errors.
// ClipLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <cmath>
#include <vector>

#include "caffe/layers/clip_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class ClipLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  ClipLayerTest() : bottom_(vector<int>{2, 3, 4, 5}) { FillGaussian<Dtype>(&bottom_, 1701); }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(ClipLayerTest, TestDtypesAndDevices);

TYPED_TEST(ClipLayerTest, IsRegisteredAsClip) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(
      ParseLayerParam("name: 'c' type: 'Clip' clip_param { min: -1 max: 2 }"));
  EXPECT_STREQ(layer->type(), "Clip");
}

TYPED_TEST(ClipLayerTest, TopHasBottomShape) {
  using Dtype = typename TypeParam::Dtype;
  ClipLayer<Dtype> layer(ParseLayerParam("clip_param { min: -1 max: 2 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
}

TYPED_TEST(ClipLayerTest, ForwardAndBackwardMatchHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{6}), top;
  const Dtype x[] = {-3, -1, Dtype(0.5), 2, 5, Dtype(-1.5)};
  caffe_copy(6, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  ClipLayer<Dtype> layer(ParseLayerParam("clip_param { min: -1 max: 2 }"));
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  const Dtype expected[] = {-1, -1, Dtype(0.5), 2, 2, -1};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(top.cpu_data()[i], expected[i]) << i;
  const Dtype dy[] = {1, 2, 3, 4, 5, 6};
  caffe_copy(6, dy, top.mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  const Dtype expected_dx[] = {0, 2, 3, 4, 0, 0};  // min <= x <= max passes the gradient
  for (int i = 0; i < 6; ++i) EXPECT_EQ(bottom.cpu_diff()[i], expected_dx[i]) << i;
}

TYPED_TEST(ClipLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  // Symmetric bounds, so the kink check (on |x|) skips inputs near both.
  ClipLayer<Dtype> layer(ParseLayerParam("clip_param { min: -1 max: 1 }"));
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3), 1701, /*kink=*/1, /*kink_range=*/0.02);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ClipLayerTest, RejectsMinAboveMax) {
  using Dtype = typename TypeParam::Dtype;
  ClipLayer<Dtype> layer(ParseLayerParam("name: 'c' clip_param { min: 2 max: 1 }"));
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), Error);
}

TYPED_TEST(ClipLayerTest, RejectsMissingBound) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param;
  param.mutable_clip_param()->set_min(-1);  // max is required too
  ClipLayer<Dtype> layer(param);
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class ClipLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(ClipLayerGpuTest, TestDtypes);

TYPED_TEST(ClipLayerGpuTest, Clip) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'clip' type: 'Clip' clip_param { min: -0.5 max: 0.8 } bottom: 'x' top: 'y'",
      {kGpuCheckShape}));
  // Values on the bounds pass the gradient.
  GpuLayerCase<TypeParam> on_bounds = MakeGpuCase<TypeParam>(
      "name: 'clip' type: 'Clip' clip_param { min: -1 max: 1 } bottom: 'x' top: 'y'", {{5, 41}});
  on_bounds.fill = [](const Blobs<TypeParam>& bottoms) {
    FillUniform<TypeParam>(bottoms[0], 6, -3, 3);
    TypeParam* data = bottoms[0]->mutable_cpu_data();
    for (int i = 0; i < bottoms[0]->count(); i += 4) data[i] = std::round(data[i]);
  };
  ExpectGpuMatchesCpu(on_bounds);
}

}  // namespace caffe
