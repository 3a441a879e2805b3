#include <cmath>
#include <string>

#include "caffe/layers/sigmoid_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class SigmoidLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  SigmoidLayerTest() : bottom_(vector<int>{2, 3, 4, 5}) { FillGaussian<Dtype>(&bottom_, 1701); }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(SigmoidLayerTest, TestDtypesAndDevices);

TYPED_TEST(SigmoidLayerTest, TopHasBottomShape) {
  using Dtype = typename TypeParam::Dtype;
  SigmoidLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
}

TYPED_TEST(SigmoidLayerTest, ForwardAndBackwardMatchHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{5}), top;
  const Dtype x[] = {-2, 0, 2, 100, -100};
  caffe_copy(5, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  SigmoidLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  // 1 / (1 + e^2) = 0.119202922; saturated inputs give exactly 1 and 0, not NaN.
  const double expected[] = {0.119202922, 0.5, 0.880797078, 1, 0};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(top.cpu_data()[i], expected[i], 1e-6) << i;
  caffe_set(5, Dtype(2), top.mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  // 2 * s * (1 - s)
  const double expected_dx[] = {0.209987170, 0.5, 0.209987170, 0, 0};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(bottom.cpu_diff()[i], expected_dx[i], 1e-6) << i;
}

TYPED_TEST(SigmoidLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  SigmoidLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  caffe_set(this->top_.count(), Dtype(1.5), this->top_.mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true}, this->bottom_vec_);
  Blob<Dtype> blob;
  blob.CopyFrom(this->bottom_, false, true);
  Blobs<Dtype> in_place{&blob};
  SigmoidLayer<Dtype> in_place_layer(LayerParameter{});
  in_place_layer.SetUp(in_place, in_place);
  in_place_layer.Forward(in_place, in_place);
  caffe_set(blob.count(), Dtype(1.5), blob.mutable_cpu_diff());
  in_place_layer.Backward(in_place, {true}, in_place);
  for (int i = 0; i < blob.count(); ++i) {
    EXPECT_EQ(blob.cpu_data()[i], this->top_.cpu_data()[i]) << i;
    EXPECT_EQ(blob.cpu_diff()[i], this->bottom_.cpu_diff()[i]) << i;
  }
}

TYPED_TEST(SigmoidLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  SigmoidLayer<Dtype> layer(LayerParameter{});
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3), 1701);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(SigmoidLayerTest, RejectsMissingTop) {
  using Dtype = typename TypeParam::Dtype;
  SigmoidLayer<Dtype> layer(LayerParameter{});
  Blobs<Dtype> no_tops;
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, no_tops), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----
// The cases name engine CAFFE: in GPU mode the default engine may be cuDNN's, which has its own
// tests (layers/cudnn/); these check SigmoidLayer's kernels.

namespace {

const char kSigmoid[] = "name: 'sigmoid' type: 'Sigmoid' sigmoid_param { engine: CAFFE } ";
const char kOutOfPlace[] = "bottom: 'x' top: 'y'";
const char kInPlace[] = "bottom: 'x' top: 'x'";

}  // namespace

template <typename Dtype>
class SigmoidLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(SigmoidLayerGpuTest, TestDtypes);

TYPED_TEST(SigmoidLayerGpuTest, Sigmoid) {
  // U(-20, 20) reaches the saturated tails.
  GpuLayerCase<TypeParam> wide =
      MakeGpuCase<TypeParam>(std::string(kSigmoid) + kOutOfPlace, {kGpuCheckShape});
  wide.fill = UniformFill<TypeParam>(-20, 20);
  ExpectGpuMatchesCpu(wide);
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>(std::string(kSigmoid) + kOutOfPlace, {kGpuCheckLargeShape}));
  ExpectInPlaceGpuMatchesCpu(
      MakeGpuCase<TypeParam>(std::string(kSigmoid) + kInPlace, {kGpuCheckShape}));
}

}  // namespace caffe
