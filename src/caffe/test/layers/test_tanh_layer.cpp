#include <cmath>
#include <string>

#include "caffe/layers/tanh_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class TanHLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  TanHLayerTest() : bottom_(vector<int>{2, 3, 4, 5}) { FillGaussian<Dtype>(&bottom_, 1701); }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(TanHLayerTest, TestDtypesAndDevices);

TYPED_TEST(TanHLayerTest, TopHasBottomShape) {
  using Dtype = typename TypeParam::Dtype;
  TanHLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
}

TYPED_TEST(TanHLayerTest, ForwardAndBackwardMatchHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{5}), top;
  const Dtype x[] = {-1, 0, Dtype(0.5), 50, -50};
  caffe_copy(5, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  TanHLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  const double expected[] = {-0.761594156, 0, 0.462117157, 1, -1};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(top.cpu_data()[i], expected[i], 1e-6) << i;
  caffe_set(5, Dtype(3), top.mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  // 3 * (1 - tanh^2)
  const double expected_dx[] = {1.259923025, 3, 2.359343199, 0, 0};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(bottom.cpu_diff()[i], expected_dx[i], 1e-5) << i;
}

TYPED_TEST(TanHLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  TanHLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  caffe_set(this->top_.count(), Dtype(-0.5), this->top_.mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true}, this->bottom_vec_);
  Blob<Dtype> blob;
  blob.CopyFrom(this->bottom_, false, true);
  Blobs<Dtype> in_place{&blob};
  TanHLayer<Dtype> in_place_layer(LayerParameter{});
  in_place_layer.SetUp(in_place, in_place);
  in_place_layer.Forward(in_place, in_place);
  caffe_set(blob.count(), Dtype(-0.5), blob.mutable_cpu_diff());
  in_place_layer.Backward(in_place, {true}, in_place);
  for (int i = 0; i < blob.count(); ++i) {
    EXPECT_EQ(blob.cpu_data()[i], this->top_.cpu_data()[i]) << i;
    EXPECT_EQ(blob.cpu_diff()[i], this->bottom_.cpu_diff()[i]) << i;
  }
}

TYPED_TEST(TanHLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  TanHLayer<Dtype> layer(LayerParameter{});
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3), 1701);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(TanHLayerTest, RejectsTwoTops) {
  using Dtype = typename TypeParam::Dtype;
  TanHLayer<Dtype> layer(LayerParameter{});
  Blob<Dtype> other;
  Blobs<Dtype> two_tops{&this->top_, &other};
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, two_tops), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----
// The cases name engine CAFFE: in GPU mode the default engine may be cuDNN's, which has its own
// tests (layers/cudnn/); these check TanHLayer's kernels.

namespace {

const char kTanH[] = "name: 'tanh' type: 'TanH' tanh_param { engine: CAFFE } ";
const char kOutOfPlace[] = "bottom: 'x' top: 'y'";
const char kInPlace[] = "bottom: 'x' top: 'x'";

}  // namespace

template <typename Dtype>
class TanHLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(TanHLayerGpuTest, TestDtypes);

TYPED_TEST(TanHLayerGpuTest, TanH) {
  GpuLayerCase<TypeParam> wide =
      MakeGpuCase<TypeParam>(std::string(kTanH) + kOutOfPlace, {kGpuCheckShape});
  wide.fill = UniformFill<TypeParam>(-10, 10);
  ExpectGpuMatchesCpu(wide);
  ExpectInPlaceGpuMatchesCpu(
      MakeGpuCase<TypeParam>(std::string(kTanH) + kInPlace, {kGpuCheckShape}));
}

}  // namespace caffe
