// MultinomialLogisticLoss: hand-computed loss and gradient, the 1e-20 floor on probabilities,
// finite-difference gradients, loss weights, and label errors.
#include <cmath>
#include <string>
#include <vector>

#include "caffe/layers/multinomial_logistic_loss_layer.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

// Legend: N items, K classes.
template <typename TypeParam>
class MultinomialLogisticLossLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  static constexpr int kNum = 5, kClasses = 4;

  MultinomialLogisticLossLayerTest()
      : prob_(vector<int>{kNum, kClasses, 1, 1}), labels_(vector<int>{kNum, 1, 1, 1}) {
    // Away from 0, where -log p is too steep for finite differences.
    FillUniform<Dtype>(&prob_, 1701, Dtype(0.2), Dtype(1));
    const Dtype labels[kNum] = {3, 0, 1, 3, 2};
    caffe_copy(kNum, labels, labels_.mutable_cpu_data());
  }

  Blob<Dtype> prob_, labels_, loss_;
  Blobs<Dtype> bottom_vec_{&prob_, &labels_}, top_vec_{&loss_};
};
TYPED_TEST_SUITE(MultinomialLogisticLossLayerTest, TestDtypesAndDevices);

TYPED_TEST(MultinomialLogisticLossLayerTest, IsRegisteredWithScalarTop) {
  using Dtype = typename TypeParam::Dtype;
  auto layer =
      LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("type: 'MultinomialLogisticLoss'"));
  EXPECT_STREQ(layer->type(), "MultinomialLogisticLoss");
  layer->SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->loss_.num_axes(), 0);
  EXPECT_EQ(layer->loss(0), Dtype(1));
}

TYPED_TEST(MultinomialLogisticLossLayerTest, ForwardAndBackwardMatchHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> prob(vector<int>{2, 3}), labels(vector<int>{2}), loss;
  const Dtype p[] = {Dtype(0.2), Dtype(0.5), Dtype(0.3), Dtype(0.1), Dtype(0.1), Dtype(0.8)};
  caffe_copy(6, p, prob.mutable_cpu_data());
  labels.mutable_cpu_data()[0] = 1;
  labels.mutable_cpu_data()[1] = 2;
  Blobs<Dtype> bottom{&prob, &labels}, top{&loss};
  MultinomialLogisticLossLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(bottom, top);
  layer.Forward(bottom, top);
  EXPECT_NEAR(loss.cpu_data()[0], 0.4581453659, 1e-6);  // -(log 0.5 + log 0.8) / 2
  layer.Backward(top, {true, false}, bottom);
  const double expected[] = {0, -1, 0, 0, 0, -0.625};  // -1 / (N p) at the label
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(prob.cpu_diff()[i], expected[i], 1e-6) << i;
}

TYPED_TEST(MultinomialLogisticLossLayerTest, ZeroProbabilityIsFlooredAt1e20) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> prob(vector<int>{1, 2}), labels(vector<int>{1}), loss;
  prob.mutable_cpu_data()[0] = 0;
  prob.mutable_cpu_data()[1] = 1;
  labels.mutable_cpu_data()[0] = 0;
  Blobs<Dtype> bottom{&prob, &labels}, top{&loss};
  MultinomialLogisticLossLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(bottom, top);
  layer.Forward(bottom, top);
  EXPECT_NEAR(loss.cpu_data()[0], -std::log(double(1e-20f)), 1e-4);
  layer.Backward(top, {true, false}, bottom);
  EXPECT_NEAR(prob.cpu_diff()[0] / -1e20, 1, 1e-6);
  EXPECT_EQ(prob.cpu_diff()[1], Dtype(0));
}

TYPED_TEST(MultinomialLogisticLossLayerTest, LossWeightScalesLossAndGradient) {
  using Dtype = typename TypeParam::Dtype;
  MultinomialLogisticLossLayer<Dtype> unit(LayerParameter{});
  unit.SetUp(this->bottom_vec_, this->top_vec_);
  const Dtype unit_loss = unit.Forward(this->bottom_vec_, this->top_vec_);
  unit.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  vector<Dtype> unit_diff(this->prob_.cpu_diff(), this->prob_.cpu_diff() + this->prob_.count());
  MultinomialLogisticLossLayer<Dtype> weighted(ParseLayerParam("loss_weight: 4"));
  weighted.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_NEAR(weighted.Forward(this->bottom_vec_, this->top_vec_), 4 * unit_loss, 1e-5);
  weighted.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  for (int i = 0; i < this->prob_.count(); ++i) {
    EXPECT_NEAR(this->prob_.cpu_diff()[i], 4 * unit_diff[i], 1e-5) << i;
  }
}

TYPED_TEST(MultinomialLogisticLossLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  MultinomialLogisticLossLayer<Dtype> layer(ParseLayerParam("loss_weight: 0.5"));
  GradientChecker<Dtype> checker(Dtype(1e-3), Dtype(1e-2), 1701);
  checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_, 0);
}

TYPED_TEST(MultinomialLogisticLossLayerTest, RejectsBadLabels) {
  using Dtype = typename TypeParam::Dtype;
  this->labels_.mutable_cpu_data()[2] = 4;
  MultinomialLogisticLossLayer<Dtype> layer(ParseLayerParam("name: 'nll'"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  try {
    layer.Forward(this->bottom_vec_, this->top_vec_);
    ADD_FAILURE() << "expected caffe::Error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("MultinomialLogisticLoss layer 'nll': label 4 of item 2"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("[0, 4)"), std::string::npos) << message;
  }
  // More than one label per item.
  Blob<Dtype> wide_labels(vector<int>{5, 2});
  Blobs<Dtype> bottom{&this->prob_, &wide_labels};
  MultinomialLogisticLossLayer<Dtype> wide(LayerParameter{});
  EXPECT_THROW(wide.SetUp(bottom, this->top_vec_), Error);
  MultinomialLogisticLossLayer<Dtype> ok(LayerParameter{});
  this->labels_.mutable_cpu_data()[2] = 1;
  ok.SetUp(this->bottom_vec_, this->top_vec_);
  ok.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_THROW(ok.Backward(this->top_vec_, {true, true}, this->bottom_vec_), Error);
}

}  // namespace caffe
