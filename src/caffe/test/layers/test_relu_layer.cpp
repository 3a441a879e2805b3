#include <memory>
#include <string>

#include "caffe/layers/relu_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class ReLULayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  ReLULayerTest() : bottom_(vector<int>{2, 3, 4, 5}) { FillGaussian<Dtype>(&bottom_, 1701); }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(ReLULayerTest, TestDtypesAndDevices);

TYPED_TEST(ReLULayerTest, IsRegisteredAsReLU) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("name: 'r' type: 'ReLU'"));
  EXPECT_STREQ(layer->type(), "ReLU");
}

TYPED_TEST(ReLULayerTest, TopHasBottomShape) {
  using Dtype = typename TypeParam::Dtype;
  ReLULayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
}

TYPED_TEST(ReLULayerTest, ForwardAndBackwardMatchHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{5}), top;
  const Dtype x[] = {-2, Dtype(-0.5), 0, Dtype(0.5), 3};
  caffe_copy(5, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  ReLULayer<Dtype> layer(LayerParameter{});
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  const Dtype expected[] = {0, 0, 0, Dtype(0.5), 3};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(top.cpu_data()[i], expected[i]) << i;
  const Dtype dy[] = {1, 2, 3, 4, 5};
  caffe_copy(5, dy, top.mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  const Dtype expected_dx[] = {0, 0, 0, 4, 5};  // x == 0 takes no gradient, as in BVLC
  for (int i = 0; i < 5; ++i) EXPECT_EQ(bottom.cpu_diff()[i], expected_dx[i]) << i;
}

TYPED_TEST(ReLULayerTest, LeakyForwardAndBackwardMatchHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{5}), top;
  const Dtype x[] = {-2, Dtype(-0.5), 0, Dtype(0.5), 3};
  caffe_copy(5, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  ReLULayer<Dtype> layer(ParseLayerParam("relu_param { negative_slope: 0.25 }"));
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  const Dtype expected[] = {Dtype(-0.5), Dtype(-0.125), 0, Dtype(0.5), 3};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(top.cpu_data()[i], expected[i]) << i;
  caffe_set(5, Dtype(2), top.mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  const Dtype expected_dx[] = {Dtype(0.5), Dtype(0.5), Dtype(0.5), 2, 2};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(bottom.cpu_diff()[i], expected_dx[i]) << i;
}

TYPED_TEST(ReLULayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  ReLULayer<Dtype> layer(ParseLayerParam("relu_param { negative_slope: 0.1 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  Blob<Dtype> top_diff(this->top_.shape());
  FillGaussian<Dtype>(&top_diff, 7);
  caffe_copy(top_diff.count(), top_diff.cpu_data(), this->top_.mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true}, this->bottom_vec_);

  Blob<Dtype> blob;
  blob.CopyFrom(this->bottom_, false, true);
  Blobs<Dtype> in_place{&blob};
  ReLULayer<Dtype> in_place_layer(ParseLayerParam("relu_param { negative_slope: 0.1 }"));
  in_place_layer.SetUp(in_place, in_place);
  in_place_layer.Forward(in_place, in_place);
  for (int i = 0; i < blob.count(); ++i) EXPECT_EQ(blob.cpu_data()[i], this->top_.cpu_data()[i]);
  caffe_copy(top_diff.count(), top_diff.cpu_data(), blob.mutable_cpu_diff());
  in_place_layer.Backward(in_place, {true}, in_place);
  for (int i = 0; i < blob.count(); ++i) {
    EXPECT_EQ(blob.cpu_diff()[i], this->bottom_.cpu_diff()[i]) << i;
  }
}

TYPED_TEST(ReLULayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  ReLULayer<Dtype> layer(LayerParameter{});
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3), 1701, /*kink=*/0, /*kink_range=*/0.01);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ReLULayerTest, LeakyGradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  ReLULayer<Dtype> layer(ParseLayerParam("relu_param { negative_slope: 0.01 }"));
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3), 1701, /*kink=*/0, /*kink_range=*/0.01);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ReLULayerTest, RejectsTwoBottoms) {
  using Dtype = typename TypeParam::Dtype;
  ReLULayer<Dtype> layer(LayerParameter{});
  Blobs<Dtype> two{&this->bottom_, &this->bottom_};
  EXPECT_THROW(layer.SetUp(two, this->top_vec_), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----
// The cases name engine CAFFE: in GPU mode the default engine may be cuDNN's, which has its own
// tests (layers/cudnn/); these check ReLULayer's kernels.
// In-place runs (top[0] is bottom[0]) have their own check, ExpectInPlaceGpuMatchesCpu.

namespace {

const char kReLU[] = "name: 'relu' type: 'ReLU' relu_param { engine: CAFFE } ";
const char kLeakyReLU[] =
    "name: 'leaky' type: 'ReLU' relu_param { engine: CAFFE negative_slope: 0.1 } ";
const char kOutOfPlace[] = "bottom: 'x' top: 'y'";
const char kInPlace[] = "bottom: 'x' top: 'x'";

}  // namespace

template <typename Dtype>
class ReLULayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(ReLULayerGpuTest, TestDtypes);

TYPED_TEST(ReLULayerGpuTest, ReLU) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(std::string(kReLU) + kOutOfPlace, {kGpuCheckShape}));
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>(std::string(kReLU) + kOutOfPlace, {kGpuCheckLargeShape}));
}

TYPED_TEST(ReLULayerGpuTest, LeakyReLU) {
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>(std::string(kLeakyReLU) + kOutOfPlace, {kGpuCheckShape}));
}

TYPED_TEST(ReLULayerGpuTest, ReLUInPlace) {
  ExpectInPlaceGpuMatchesCpu(
      MakeGpuCase<TypeParam>(std::string(kReLU) + kInPlace, {kGpuCheckShape}));
  ExpectInPlaceGpuMatchesCpu(
      MakeGpuCase<TypeParam>(std::string(kLeakyReLU) + kInPlace, {kGpuCheckShape}));
}

}  // namespace caffe
