// AbsValLayer: shape, hand-computed forward and backward (sign, 0 at 0), finite differences away
// from the kink, and the in-place rejection.
// AbsValLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <vector>

#include "caffe/layers/absval_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class AbsValLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  AbsValLayerTest() : bottom_(vector<int>{2, 3, 4, 5}) { FillGaussian<Dtype>(&bottom_, 1701); }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(AbsValLayerTest, TestDtypesAndDevices);

TYPED_TEST(AbsValLayerTest, IsRegisteredAsAbsVal) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("name: 'a' type: 'AbsVal'"));
  EXPECT_STREQ(layer->type(), "AbsVal");
}

TYPED_TEST(AbsValLayerTest, TopHasBottomShape) {
  using Dtype = typename TypeParam::Dtype;
  AbsValLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
}

TYPED_TEST(AbsValLayerTest, ForwardAndBackwardMatchHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{5}), top;
  const Dtype x[] = {-2, Dtype(-0.5), 0, Dtype(0.5), 3};
  caffe_copy(5, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  AbsValLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  const Dtype expected[] = {2, Dtype(0.5), 0, Dtype(0.5), 3};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(top.cpu_data()[i], expected[i]) << i;
  const Dtype dy[] = {1, 2, 3, 4, 5};
  caffe_copy(5, dy, top.mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  const Dtype expected_dx[] = {-1, -2, 0, 4, 5};  // sign(0) = 0
  for (int i = 0; i < 5; ++i) EXPECT_EQ(bottom.cpu_diff()[i], expected_dx[i]) << i;
}

TYPED_TEST(AbsValLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  AbsValLayer<Dtype> layer(LayerParameter{});
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3), 1701, /*kink=*/0, /*kink_range=*/0.02);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(AbsValLayerTest, RejectsInPlace) {
  using Dtype = typename TypeParam::Dtype;
  AbsValLayer<Dtype> layer(LayerParameter{});
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->bottom_vec_), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class AbsValLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(AbsValLayerGpuTest, TestDtypes);

TYPED_TEST(AbsValLayerGpuTest, AbsVal) {
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>("name: 'abs' type: 'AbsVal' bottom: 'x' top: 'y'", {kGpuCheckShape}));
  // Zeros take no gradient, on both paths.
  GpuLayerCase<TypeParam> with_zeros =
      MakeGpuCase<TypeParam>("name: 'abs' type: 'AbsVal' bottom: 'x' top: 'y'", {{7, 13}});
  with_zeros.fill = [](const Blobs<TypeParam>& bottoms) {
    FillGaussian(bottoms[0], 5);
    for (int i = 0; i < bottoms[0]->count(); i += 3) bottoms[0]->mutable_cpu_data()[i] = 0;
  };
  ExpectGpuMatchesCpu(with_zeros);
}

}  // namespace caffe
