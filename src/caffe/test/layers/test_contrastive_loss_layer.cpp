// ContrastiveLoss: shapes, hand-computed forward and backward (current and legacy forms), the
// gradient of both feature bottoms, loss weights, and shape errors.
// ContrastiveLossLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <cmath>
#include <string>
#include <vector>

#include "caffe/layers/contrastive_loss_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

// Legend: N pairs, C feature dimension.
template <typename TypeParam>
class ContrastiveLossLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  static constexpr int kNum = 6, kChannels = 3;

  ContrastiveLossLayerTest()
      : a_(vector<int>{kNum, kChannels, 1, 1}),
        b_(vector<int>{kNum, kChannels, 1, 1}),
        similar_(vector<int>{kNum, 1, 1, 1}) {
    FillUniform<Dtype>(&a_, 1701, Dtype(-1), Dtype(1));
    FillUniform<Dtype>(&b_, 1702, Dtype(-1), Dtype(1));
    const Dtype similar[kNum] = {1, 0, 0, 1, 0, 1};
    caffe_copy(kNum, similar, similar_.mutable_cpu_data());
    // Dissimilar pairs at chosen distances, inside and outside the default margin 1 (and its
    // legacy form d^2 < 1), away from the hinge.
    const double distance[kNum] = {0, 0.5, 1.5, 0, 0.8, 0};
    for (int n = 0; n < kNum; ++n) {
      if (similar[n] != 0) continue;
      Dtype* a = a_.mutable_cpu_data() + n * kChannels;
      Dtype* b = b_.mutable_cpu_data() + n * kChannels;
      double norm = 0;
      for (int c = 0; c < kChannels; ++c) norm += double(b[c] - a[c]) * (b[c] - a[c]);
      for (int c = 0; c < kChannels; ++c) {
        b[c] = a[c] + Dtype((b[c] - a[c]) * distance[n] / std::sqrt(norm));
      }
    }
  }

  // The loss in double, straight from the definition.
  double ReferenceLoss(double margin, bool legacy) const {
    double loss = 0;
    for (int n = 0; n < kNum; ++n) {
      double dist_sq = 0;
      for (int c = 0; c < kChannels; ++c) {
        const double d = a_.cpu_data()[n * kChannels + c] - b_.cpu_data()[n * kChannels + c];
        dist_sq += d * d;
      }
      if (similar_.cpu_data()[n] != 0) {
        loss += dist_sq;
      } else if (legacy) {
        loss += std::max(margin - dist_sq, 0.0);
      } else {
        const double shortfall = std::max(margin - std::sqrt(dist_sq), 0.0);
        loss += shortfall * shortfall;
      }
    }
    return loss / kNum / 2;
  }

  Blob<Dtype> a_, b_, similar_, loss_;
  Blobs<Dtype> bottom_vec_{&a_, &b_, &similar_}, top_vec_{&loss_};
};
TYPED_TEST_SUITE(ContrastiveLossLayerTest, TestDtypesAndDevices);

TYPED_TEST(ContrastiveLossLayerTest, IsRegisteredWithScalarTopAndNoGradientForLabels) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("type: 'ContrastiveLoss'"));
  EXPECT_STREQ(layer->type(), "ContrastiveLoss");
  layer->SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->loss_.num_axes(), 0);
  EXPECT_EQ(layer->loss(0), Dtype(1));
  EXPECT_TRUE(layer->AllowForceBackward(0));
  EXPECT_TRUE(layer->AllowForceBackward(1));
  EXPECT_FALSE(layer->AllowForceBackward(2));
}

TYPED_TEST(ContrastiveLossLayerTest, ForwardAndBackwardMatchHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  // Pairs: similar at distance 1; dissimilar at distance 0.5 (inside the margin); dissimilar at
  // distance 3 (outside it).
  Blob<Dtype> a(vector<int>{3, 2}), b(vector<int>{3, 2}), similar(vector<int>{3}), loss;
  const Dtype a_values[] = {1, 0, 0, 0, 0, 0};
  const Dtype b_values[] = {0, 0, Dtype(0.3), Dtype(0.4), 3, 0};
  const Dtype similar_values[] = {1, 0, 0};
  caffe_copy(6, a_values, a.mutable_cpu_data());
  caffe_copy(6, b_values, b.mutable_cpu_data());
  caffe_copy(3, similar_values, similar.mutable_cpu_data());
  Blobs<Dtype> bottom{&a, &b, &similar}, top{&loss};
  ContrastiveLossLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(bottom, top);
  layer.Forward(bottom, top);
  EXPECT_NEAR(loss.cpu_data()[0], (1 + 0.25 + 0) / 6.0, 1e-6);  // (d^2 + (m - d)^2 + 0) / 2N
  layer.Backward(top, {true, true, false}, bottom);
  // Similar: (a - b) / N. Inside the margin: -(m - d) / (d + 1e-4) (a - b) / N. Outside: 0.
  const double inside = 0.5 / (0.5 + 1e-4) / 3;
  const double expected[] = {1.0 / 3, 0, 0.3 * inside, 0.4 * inside, 0, 0};
  for (int i = 0; i < 6; ++i) {
    EXPECT_NEAR(a.cpu_diff()[i], expected[i], 1e-6) << i;
    EXPECT_NEAR(b.cpu_diff()[i], -expected[i], 1e-6) << i;
  }

  // Legacy: the dissimilar term is max(m - d^2, 0), with gradient -(a - b) / N inside.
  ContrastiveLossLayer<Dtype> legacy(
      ParseLayerParam("contrastive_loss_param { legacy_version: true }"));
  legacy.SetUp(bottom, top);
  legacy.Forward(bottom, top);
  EXPECT_NEAR(loss.cpu_data()[0], (1 + 0.75 + 0) / 6.0, 1e-6);
  legacy.Backward(top, {true, false, false}, bottom);
  const double expected_legacy[] = {1.0 / 3, 0, 0.1, 0.4 / 3, 0, 0};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(a.cpu_diff()[i], expected_legacy[i], 1e-6) << i;
}

TYPED_TEST(ContrastiveLossLayerTest, ForwardMatchesDefinitionForMarginAndLegacy) {
  using Dtype = typename TypeParam::Dtype;
  for (const double margin : {1.0, 2.0}) {
    for (const bool legacy : {false, true}) {
      ContrastiveLossLayer<Dtype> layer(
          ParseLayerParam("contrastive_loss_param { margin: " + std::to_string(margin) +
                          " legacy_version: " + (legacy ? "true" : "false") + " }"));
      layer.SetUp(this->bottom_vec_, this->top_vec_);
      layer.Forward(this->bottom_vec_, this->top_vec_);
      EXPECT_NEAR(this->loss_.cpu_data()[0], this->ReferenceLoss(margin, legacy), 1e-5)
          << "margin " << margin << " legacy " << legacy;
    }
  }
}

TYPED_TEST(ContrastiveLossLayerTest, AnyNonzeroIntegerLabelMeansSimilar) {
  using Dtype = typename TypeParam::Dtype;
  ContrastiveLossLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  const Dtype reference = this->loss_.cpu_data()[0];
  // BVLC tests static_cast<int>(label): 2 is similar like 1, 0.7 is dissimilar like 0.
  this->similar_.mutable_cpu_data()[0] = 2;
  this->similar_.mutable_cpu_data()[1] = Dtype(0.7);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_NEAR(this->loss_.cpu_data()[0], reference, 1e-6);
}

TYPED_TEST(ContrastiveLossLayerTest, LossWeightScalesLossAndGradient) {
  using Dtype = typename TypeParam::Dtype;
  ContrastiveLossLayer<Dtype> unit(LayerParameter{});
  unit.SetUp(this->bottom_vec_, this->top_vec_);
  const Dtype unit_loss = unit.Forward(this->bottom_vec_, this->top_vec_);
  unit.Backward(this->top_vec_, {true, true, false}, this->bottom_vec_);
  vector<Dtype> unit_diff(this->b_.cpu_diff(), this->b_.cpu_diff() + this->b_.count());
  ContrastiveLossLayer<Dtype> weighted(ParseLayerParam("loss_weight: 2.5"));
  weighted.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_NEAR(weighted.Forward(this->bottom_vec_, this->top_vec_), Dtype(2.5) * unit_loss, 1e-5);
  EXPECT_NEAR(this->loss_.cpu_data()[0], unit_loss, 1e-6);
  weighted.Backward(this->top_vec_, {true, true, false}, this->bottom_vec_);
  for (int i = 0; i < this->b_.count(); ++i) {
    EXPECT_NEAR(this->b_.cpu_diff()[i], Dtype(2.5) * unit_diff[i], 1e-5) << i;
  }
}

TYPED_TEST(ContrastiveLossLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  // Finite differences straddle the hinge when a dissimilar pair's distance is near the margin;
  // the data must also put dissimilar pairs on both sides of it.
  int inside = 0, outside = 0;
  for (int n = 0; n < this->kNum; ++n) {
    if (this->similar_.cpu_data()[n] != 0) continue;
    double dist_sq = 0;
    for (int c = 0; c < this->kChannels; ++c) {
      const double d = this->a_.cpu_data()[n * 3 + c] - this->b_.cpu_data()[n * 3 + c];
      dist_sq += d * d;
    }
    ASSERT_GT(std::fabs(std::sqrt(dist_sq) - 1), 0.05) << "pair " << n << " is at the margin";
    ASSERT_GT(std::fabs(dist_sq - 1), 0.05) << "pair " << n << " is at the legacy margin";
    ++(dist_sq < 1 ? inside : outside);
  }
  ASSERT_GT(inside, 0);
  ASSERT_GT(outside, 0);
  for (const char* legacy : {"false", "true"}) {
    SCOPED_TRACE(legacy);
    ContrastiveLossLayer<Dtype> layer(ParseLayerParam(
        std::string("loss_weight: 3 contrastive_loss_param { legacy_version: ") + legacy + " }"));
    GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-2), 1701);
    checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_, 0);
    checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_, 1);
  }
}

TYPED_TEST(ContrastiveLossLayerTest, RejectsMismatchedFeaturesAndLabels) {
  using Dtype = typename TypeParam::Dtype;
  auto expect_error = [this](Blob<Dtype>* a, Blob<Dtype>* b, Blob<Dtype>* similar,
                             const std::string& part) {
    Blobs<Dtype> bottom{a, b, similar};
    ContrastiveLossLayer<Dtype> layer(ParseLayerParam("name: 'siamese'"));
    try {
      layer.SetUp(bottom, this->top_vec_);
      ADD_FAILURE() << "expected caffe::Error mentioning " << part;
    } catch (const Error& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("ContrastiveLoss layer 'siamese': "), std::string::npos) << message;
      EXPECT_NE(message.find(part), std::string::npos) << message;
    }
  };
  Blob<Dtype> wide(vector<int>{6, 4}), spatial(vector<int>{6, 3, 2, 1});
  Blob<Dtype> few_labels(vector<int>{5}), wide_labels(vector<int>{6, 2});
  expect_error(&this->a_, &wide, &this->similar_, "(3 vs. 4)");
  expect_error(&spatial, &spatial, &this->similar_, "got 6 3 2 1 (36)");
  expect_error(&this->a_, &this->b_, &few_labels, "bottom[2]");
  expect_error(&this->a_, &this->b_, &wide_labels, "got 6 2 (12)");
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

namespace {

// 29 pairs of 17 features, similarity 0/1; the margin is near the typical distance (squared
// distance when legacy), so dissimilar pairs fall on both sides of it.
template <typename Dtype>
GpuLayerCase<Dtype> ContrastiveCase(const std::string& param) {
  GpuLayerCase<Dtype> c;
  c.layer = "name: 'loss' type: 'ContrastiveLoss' contrastive_loss_param { " + param +
            " } bottom: 'a' bottom: 'b' bottom: 'similar' top: 'loss'";
  c.bottom_shapes = {{29, 17}, {29, 17, 1, 1}, {29}};
  c.fill = [](const Blobs<Dtype>& bottom) {
    FillGaussian(bottom[0], 15);
    FillGaussian(bottom[1], 16);
    FillZeroOne(bottom[2]);
  };
  c.propagate_down = {true, true, false};
  return c;
}

}  // namespace

template <typename Dtype>
class ContrastiveLossLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(ContrastiveLossLayerGpuTest, TestDtypes);

TYPED_TEST(ContrastiveLossLayerGpuTest, ContrastiveLoss) {
  ExpectGpuMatchesCpu(ContrastiveCase<TypeParam>("margin: 6"));
}

TYPED_TEST(ContrastiveLossLayerGpuTest, ContrastiveLossLegacyVersion) {
  ExpectGpuMatchesCpu(ContrastiveCase<TypeParam>("margin: 34 legacy_version: true"));
}

}  // namespace caffe
