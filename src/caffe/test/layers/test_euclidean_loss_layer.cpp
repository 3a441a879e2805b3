#include <vector>

#include "caffe/layers/euclidean_loss_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class EuclideanLossLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  EuclideanLossLayerTest() : prediction_(vector<int>{5, 3, 2}), target_(vector<int>{5, 6}) {
    FillGaussian<Dtype>(&prediction_, 1701);
    FillGaussian<Dtype>(&target_, 1702);
  }
  Blob<Dtype> prediction_, target_, loss_;
  Blobs<Dtype> bottom_vec_{&prediction_, &target_}, top_vec_{&loss_};
};
TYPED_TEST_SUITE(EuclideanLossLayerTest, TestDtypesAndDevices);

TYPED_TEST(EuclideanLossLayerTest, TopIsScalarAndBothBottomsMayLearn) {
  using Dtype = typename TypeParam::Dtype;
  EuclideanLossLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->loss_.num_axes(), 0);
  EXPECT_EQ(layer.loss(0), Dtype(1));
  EXPECT_TRUE(layer.AllowForceBackward(0));
  EXPECT_TRUE(layer.AllowForceBackward(1));
}

TYPED_TEST(EuclideanLossLayerTest, ForwardAndBackwardMatchHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> a(vector<int>{2, 2}), b(vector<int>{2, 2}), loss;
  const Dtype x[] = {1, 2, 3, 4}, y[] = {0, 0, 1, 1};
  caffe_copy(4, x, a.mutable_cpu_data());
  caffe_copy(4, y, b.mutable_cpu_data());
  Blobs<Dtype> bottom{&a, &b}, top{&loss};
  EuclideanLossLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(bottom, top);
  layer.Forward(bottom, top);
  EXPECT_NEAR(loss.cpu_data()[0], Dtype(4.5), 1e-6);  // (1 + 4 + 4 + 9) / 2 items / 2
  layer.Backward(top, {true, true}, bottom);
  const Dtype expected[] = {0.5, 1, 1, 1.5};  // (a - b) / 2 items
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(a.cpu_diff()[i], expected[i], 1e-6) << i;
    EXPECT_NEAR(b.cpu_diff()[i], -expected[i], 1e-6) << i;
  }
}

TYPED_TEST(EuclideanLossLayerTest, LossWeightScalesLossAndGradient) {
  using Dtype = typename TypeParam::Dtype;
  EuclideanLossLayer<Dtype> unit(LayerParameter{});
  unit.SetUp(this->bottom_vec_, this->top_vec_);
  const Dtype unit_loss = unit.Forward(this->bottom_vec_, this->top_vec_);
  unit.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  vector<Dtype> unit_diff(this->prediction_.cpu_diff(),
                          this->prediction_.cpu_diff() + this->prediction_.count());
  EuclideanLossLayer<Dtype> weighted(ParseLayerParam("loss_weight: 3.7"));
  weighted.SetUp(this->bottom_vec_, this->top_vec_);
  const Dtype weighted_loss = weighted.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_NEAR(weighted_loss, Dtype(3.7) * unit_loss, 1e-5);
  weighted.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  for (int i = 0; i < this->prediction_.count(); ++i) {
    EXPECT_NEAR(this->prediction_.cpu_diff()[i], Dtype(3.7) * unit_diff[i], 1e-5) << i;
  }
}

TYPED_TEST(EuclideanLossLayerTest, GradientsMatchFiniteDifferencesForBothBottoms) {
  using Dtype = typename TypeParam::Dtype;
  EuclideanLossLayer<Dtype> layer(ParseLayerParam("loss_weight: 3"));
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-2), 1701);
  checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(EuclideanLossLayerTest, RejectsMismatchedBottoms) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> short_target(vector<int>{5, 5});
  Blobs<Dtype> bottom{&this->prediction_, &short_target};
  EuclideanLossLayer<Dtype> layer(LayerParameter{});
  EXPECT_THROW(layer.SetUp(bottom, this->top_vec_), Error);
  Blob<Dtype> other_batch(vector<int>{6, 6});
  Blobs<Dtype> bottom2{&this->prediction_, &other_batch};
  EuclideanLossLayer<Dtype> layer2(LayerParameter{});
  EXPECT_THROW(layer2.SetUp(bottom2, this->top_vec_), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class EuclideanLossLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(EuclideanLossLayerGpuTest, TestDtypes);

TYPED_TEST(EuclideanLossLayerGpuTest, EuclideanLossGradientsToBothBottoms) {
  GpuLayerCase<TypeParam> c;
  c.layer =
      "name: 'loss' type: 'EuclideanLoss' loss_weight: 0.7 bottom: 'a' bottom: 'b'"
      " top: 'loss'";
  c.bottom_shapes = {{13, 7, 11}, {13, 77}};
  ExpectGpuMatchesCpu(c);
}

}  // namespace caffe
