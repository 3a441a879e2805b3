// HingeLoss: hand-computed L1 and L2 losses and gradients, finite-difference gradients away from
// the hinge, loss weights, and label errors.
#include <cmath>
#include <string>
#include <vector>

#include "caffe/layers/hinge_loss_layer.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

// Legend: N items, K classes.
template <typename TypeParam>
class HingeLossLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  static constexpr int kNum = 6, kClasses = 5;

  HingeLossLayerTest() : scores_(vector<int>{kNum, kClasses, 1, 1}), labels_(vector<int>{kNum}) {
    FillGaussian<Dtype>(&scores_, 1701, Dtype(2));
    const Dtype labels[kNum] = {0, 4, 2, 2, 1, 3};
    caffe_copy(kNum, labels, labels_.mutable_cpu_data());
  }

  Blob<Dtype> scores_, labels_, loss_;
  Blobs<Dtype> bottom_vec_{&scores_, &labels_}, top_vec_{&loss_};
};
TYPED_TEST_SUITE(HingeLossLayerTest, TestDtypesAndDevices);

TYPED_TEST(HingeLossLayerTest, IsRegisteredWithScalarTop) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("type: 'HingeLoss'"));
  EXPECT_STREQ(layer->type(), "HingeLoss");
  layer->SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->loss_.num_axes(), 0);
  EXPECT_EQ(layer->loss(0), Dtype(1));
  EXPECT_FALSE(layer->AllowForceBackward(1));
}

TYPED_TEST(HingeLossLayerTest, ForwardAndBackwardMatchHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> scores(vector<int>{2, 3}), labels(vector<int>{2, 1}), loss;
  const Dtype x[] = {Dtype(0.5), -2, Dtype(0.3), 2, 0, Dtype(-0.5)};
  caffe_copy(6, x, scores.mutable_cpu_data());
  labels.mutable_cpu_data()[0] = 0;
  labels.mutable_cpu_data()[1] = 2;
  Blobs<Dtype> bottom{&scores, &labels}, top{&loss};
  // Margins max(0, 1 - t x): item 0 (t = +,-,-): 0.5, 0, 1.3; item 1 (t = -,-,+): 3, 1, 1.5.
  HingeLossLayer<Dtype> l1(LayerParameter{});
  l1.SetUp(bottom, top);
  l1.Forward(bottom, top);
  EXPECT_NEAR(loss.cpu_data()[0], 7.3 / 2, 1e-5);
  l1.Backward(top, {true, false}, bottom);
  const double expected_l1[] = {-0.5, 0, 0.5, 0.5, 0.5, -0.5};  // -t [margin > 0] / N
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(scores.cpu_diff()[i], expected_l1[i], 1e-6) << i;

  HingeLossLayer<Dtype> l2(ParseLayerParam("hinge_loss_param { norm: L2 }"));
  l2.SetUp(bottom, top);
  l2.Forward(bottom, top);
  EXPECT_NEAR(loss.cpu_data()[0], 14.19 / 2, 1e-5);
  l2.Backward(top, {true, false}, bottom);
  const double expected_l2[] = {-0.5, 0, 1.3, 3, 1, -1.5};  // -2 t margin / N
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(scores.cpu_diff()[i], expected_l2[i], 1e-5) << i;
}

TYPED_TEST(HingeLossLayerTest, LossWeightScalesLossAndGradient) {
  using Dtype = typename TypeParam::Dtype;
  HingeLossLayer<Dtype> unit(ParseLayerParam("hinge_loss_param { norm: L2 }"));
  unit.SetUp(this->bottom_vec_, this->top_vec_);
  const Dtype unit_loss = unit.Forward(this->bottom_vec_, this->top_vec_);
  unit.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  vector<Dtype> unit_diff(this->scores_.cpu_diff(),
                          this->scores_.cpu_diff() + this->scores_.count());
  HingeLossLayer<Dtype> weighted(
      ParseLayerParam("loss_weight: 0.25 hinge_loss_param { norm: L2 }"));
  weighted.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_NEAR(weighted.Forward(this->bottom_vec_, this->top_vec_), Dtype(0.25) * unit_loss, 1e-5);
  weighted.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  for (int i = 0; i < this->scores_.count(); ++i) {
    EXPECT_NEAR(this->scores_.cpu_diff()[i], Dtype(0.25) * unit_diff[i], 1e-5) << i;
  }
}

TYPED_TEST(HingeLossLayerTest, GradientsMatchFiniteDifferencesForBothNorms) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* norm : {"L1", "L2"}) {
    SCOPED_TRACE(norm);
    HingeLossLayer<Dtype> layer(
        ParseLayerParam(std::string("loss_weight: 3 hinge_loss_param { norm: ") + norm + " }"));
    // The hinge is at |x| = 1; scores within 0.02 of it are not differenced.
    GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(2e-3), 1701, Dtype(1), Dtype(0.02));
    checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_, 0);
  }
}

TYPED_TEST(HingeLossLayerTest, RejectsLabelOutOfRangeNamingItAndTheClassCount) {
  using Dtype = typename TypeParam::Dtype;
  for (Dtype bad : {Dtype(5), Dtype(-1)}) {
    this->labels_.mutable_cpu_data()[3] = bad;
    HingeLossLayer<Dtype> layer(ParseLayerParam("name: 'svm'"));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    try {
      layer.Forward(this->bottom_vec_, this->top_vec_);
      ADD_FAILURE() << "expected caffe::Error for label " << bad;
    } catch (const Error& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("HingeLoss layer 'svm': label " +
                             std::to_string(static_cast<int>(bad)) + " of item 3"),
                std::string::npos)
          << message;
      EXPECT_NE(message.find("[0, 5)"), std::string::npos) << message;
    }
  }
}

TYPED_TEST(HingeLossLayerTest, RejectsWrongLabelCountAndGradientForLabels) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> two_per_item(vector<int>{6, 2});
  Blobs<Dtype> bottom{&this->scores_, &two_per_item};
  HingeLossLayer<Dtype> layer(LayerParameter{});
  try {
    layer.SetUp(bottom, this->top_vec_);
    ADD_FAILURE() << "expected caffe::Error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("holds 12 labels"), std::string::npos) << error.what();
  }
  HingeLossLayer<Dtype> ok(LayerParameter{});
  ok.SetUp(this->bottom_vec_, this->top_vec_);
  ok.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_THROW(ok.Backward(this->top_vec_, {true, true}, this->bottom_vec_), Error);
}

}  // namespace caffe
