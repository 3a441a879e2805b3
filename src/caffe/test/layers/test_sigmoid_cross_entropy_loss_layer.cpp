// SigmoidCrossEntropyLoss: hand-computed loss and gradient, the stable form at large scores,
// every normalization (BATCH_SIZE by default) with ignore_label, finite-difference gradients,
// loss weights, and errors.
// SigmoidCrossEntropyLossLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <cmath>
#include <string>
#include <vector>

#include "caffe/layers/sigmoid_cross_entropy_loss_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

// Legend: N batch, D values per item.
template <typename TypeParam>
class SigmoidCrossEntropyLossLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  static constexpr int kNum = 3, kDim = 4;
  static constexpr int kIgnored = -1;  // the target value the ignore_label tests drop

  SigmoidCrossEntropyLossLayerTest()
      : scores_(vector<int>{kNum, 2, 2}), targets_(vector<int>{kNum, 2, 2}) {
    FillGaussian<Dtype>(&scores_, 1701, Dtype(2));
    // Hard labels, soft targets, and three ignored values.
    const Dtype targets[kNum * kDim] = {1, 0, 0, 1, Dtype(0.25), -1, 1, Dtype(0.5), -1, 0, 1, -1};
    caffe_copy(kNum * kDim, targets, targets_.mutable_cpu_data());
  }

  // sum of -[t log s + (1 - t) log(1 - s)] in double, skipping kIgnored if asked.
  double ReferenceLossSum(bool skip_ignored, int* valid) const {
    double sum = 0;
    *valid = 0;
    for (int i = 0; i < scores_.count(); ++i) {
      const double x = scores_.cpu_data()[i], t = targets_.cpu_data()[i];
      if (skip_ignored && t == kIgnored) continue;
      const double s = 1 / (1 + std::exp(-x));
      sum -= t * std::log(s) + (1 - t) * std::log(1 - s);
      ++*valid;
    }
    return sum;
  }

  Dtype ForwardLoss(const std::string& text) {
    SigmoidCrossEntropyLossLayer<Dtype> layer(ParseLayerParam(text));
    layer.SetUp(bottom_vec_, top_vec_);
    layer.Forward(bottom_vec_, top_vec_);
    return loss_.cpu_data()[0];
  }

  Blob<Dtype> scores_, targets_, loss_;
  Blobs<Dtype> bottom_vec_{&scores_, &targets_}, top_vec_{&loss_};
};
TYPED_TEST_SUITE(SigmoidCrossEntropyLossLayerTest, TestDtypesAndDevices);

TYPED_TEST(SigmoidCrossEntropyLossLayerTest, IsRegisteredWithScalarTop) {
  using Dtype = typename TypeParam::Dtype;
  auto layer =
      LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("type: 'SigmoidCrossEntropyLoss'"));
  EXPECT_STREQ(layer->type(), "SigmoidCrossEntropyLoss");
  layer->SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->loss_.num_axes(), 0);
  EXPECT_EQ(layer->loss(0), Dtype(1));
  EXPECT_FALSE(layer->AllowForceBackward(1));
}

TYPED_TEST(SigmoidCrossEntropyLossLayerTest, ForwardAndBackwardMatchHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> scores(vector<int>{2, 2}), targets(vector<int>{2, 2}), loss;
  const Dtype x[] = {0, 2, -3, 1}, t[] = {1, 0, 1, 1};
  caffe_copy(4, x, scores.mutable_cpu_data());
  caffe_copy(4, t, targets.mutable_cpu_data());
  Blobs<Dtype> bottom{&scores, &targets}, top{&loss};
  SigmoidCrossEntropyLossLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(bottom, top);
  layer.Forward(bottom, top);
  // (log 2 + log(1 + e^2) + log(1 + e^-3) + 3 + log(1 + e) - 1) / N, N = 2 (BATCH_SIZE).
  EXPECT_NEAR(loss.cpu_data()[0], 3.0909621153, 1e-6);
  layer.Backward(top, {true, false}, bottom);
  const double expected[] = {-0.25, 0.4403985390, -0.4762870634, -0.1344707107};  // (s - t) / N
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(scores.cpu_diff()[i], expected[i], 1e-6) << i;
}

TYPED_TEST(SigmoidCrossEntropyLossLayerTest, LargeScoresStayFinite) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> scores(vector<int>{1, 4}), targets(vector<int>{1, 4}), loss;
  const Dtype x[] = {200, -200, 200, -200}, t[] = {1, 0, 0, 1};
  caffe_copy(4, x, scores.mutable_cpu_data());
  caffe_copy(4, t, targets.mutable_cpu_data());
  Blobs<Dtype> bottom{&scores, &targets}, top{&loss};
  SigmoidCrossEntropyLossLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(bottom, top);
  layer.Forward(bottom, top);
  // Right with full confidence costs 0, wrong costs |x| each.
  EXPECT_NEAR(loss.cpu_data()[0], 400, 1e-3);
  layer.Backward(top, {true, false}, bottom);
  const double expected[] = {0, 0, 1, -1};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(scores.cpu_diff()[i], expected[i], 1e-6) << i;
}

TYPED_TEST(SigmoidCrossEntropyLossLayerTest, EachNormalizationDividesByItsCount) {
  int valid = 0;
  const double sum = this->ReferenceLossSum(true, &valid);
  ASSERT_EQ(valid, 9);
  const std::string ignore = "loss_param { ignore_label: -1 ";
  EXPECT_NEAR(this->ForwardLoss(ignore + "}"), sum / 3, 1e-5);  // BATCH_SIZE is the default
  EXPECT_NEAR(this->ForwardLoss(ignore + "normalization: BATCH_SIZE }"), sum / 3, 1e-5);
  EXPECT_NEAR(this->ForwardLoss(ignore + "normalization: FULL }"), sum / 12, 1e-5);
  EXPECT_NEAR(this->ForwardLoss(ignore + "normalization: VALID }"), sum / 9, 1e-5);
  EXPECT_NEAR(this->ForwardLoss(ignore + "normalization: NONE }"), sum, 1e-4);
  // The deprecated flag: true means VALID, false BATCH_SIZE; normalization wins over it.
  EXPECT_NEAR(this->ForwardLoss(ignore + "normalize: true }"), sum / 9, 1e-5);
  EXPECT_NEAR(this->ForwardLoss(ignore + "normalize: false }"), sum / 3, 1e-5);
  EXPECT_NEAR(this->ForwardLoss(ignore + "normalize: true normalization: NONE }"), sum, 1e-4);
}

TYPED_TEST(SigmoidCrossEntropyLossLayerTest, WithoutIgnoreLabelEveryTargetCounts) {
  using Dtype = typename TypeParam::Dtype;
  // -1 is then an (unusual) target like any other; VALID counts every value.
  int valid = 0;
  const double sum = this->ReferenceLossSum(false, &valid);
  ASSERT_EQ(valid, 12);
  EXPECT_NEAR(this->ForwardLoss(""), Dtype(sum / 3), 1e-5);
  EXPECT_NEAR(this->ForwardLoss("loss_param { normalization: VALID }"), Dtype(sum / 12), 1e-5);
}

TYPED_TEST(SigmoidCrossEntropyLossLayerTest, IgnoredTargetsGetZeroGradientAndAllIgnoredGiveZero) {
  using Dtype = typename TypeParam::Dtype;
  SigmoidCrossEntropyLossLayer<Dtype> layer(ParseLayerParam("loss_param { ignore_label: -1 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  layer.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  for (int i = 0; i < this->scores_.count(); ++i) {
    const bool ignored = this->targets_.cpu_data()[i] == this->kIgnored;
    if (ignored) {
      EXPECT_EQ(this->scores_.cpu_diff()[i], Dtype(0)) << i;
    } else {
      EXPECT_NE(this->scores_.cpu_diff()[i], Dtype(0)) << i;
    }
  }
  caffe_set(this->targets_.count(), Dtype(-1), this->targets_.mutable_cpu_data());
  SigmoidCrossEntropyLossLayer<Dtype> valid(
      ParseLayerParam("loss_param { ignore_label: -1 normalization: VALID }"));
  valid.SetUp(this->bottom_vec_, this->top_vec_);
  valid.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->loss_.cpu_data()[0], Dtype(0));  // normalizer max(1, 0): no NaN
  valid.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  EXPECT_EQ(this->scores_.asum_diff(), Dtype(0));
}

TYPED_TEST(SigmoidCrossEntropyLossLayerTest, LossWeightScalesLossAndGradient) {
  using Dtype = typename TypeParam::Dtype;
  SigmoidCrossEntropyLossLayer<Dtype> unit(LayerParameter{});
  unit.SetUp(this->bottom_vec_, this->top_vec_);
  const Dtype unit_loss = unit.Forward(this->bottom_vec_, this->top_vec_);
  unit.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  vector<Dtype> unit_diff(this->scores_.cpu_diff(),
                          this->scores_.cpu_diff() + this->scores_.count());
  SigmoidCrossEntropyLossLayer<Dtype> weighted(ParseLayerParam("loss_weight: 3"));
  weighted.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_NEAR(weighted.Forward(this->bottom_vec_, this->top_vec_), 3 * unit_loss, 1e-5);
  EXPECT_NEAR(this->loss_.cpu_data()[0], unit_loss, 1e-6);
  weighted.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  for (int i = 0; i < this->scores_.count(); ++i) {
    EXPECT_NEAR(this->scores_.cpu_diff()[i], 3 * unit_diff[i], 1e-5) << i;
  }
}

TYPED_TEST(SigmoidCrossEntropyLossLayerTest, GradientsMatchFiniteDifferencesInEveryNormalization) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* mode : {"FULL", "VALID", "BATCH_SIZE", "NONE"}) {
    SCOPED_TRACE(mode);
    SigmoidCrossEntropyLossLayer<Dtype> layer(ParseLayerParam(
        std::string("loss_weight: 2 loss_param { ignore_label: -1 normalization: ") + mode + " }"));
    GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-2), 1701);
    checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_, 0);
  }
}

TYPED_TEST(SigmoidCrossEntropyLossLayerTest, RejectsTargetCountMismatchAndGradientForTargets) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> few(vector<int>{3, 3});
  Blobs<Dtype> bottom{&this->scores_, &few};
  SigmoidCrossEntropyLossLayer<Dtype> layer(ParseLayerParam("name: 'sce'"));
  try {
    layer.SetUp(bottom, this->top_vec_);
    ADD_FAILURE() << "expected caffe::Error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("SigmoidCrossEntropyLoss layer 'sce': "), std::string::npos) << message;
    EXPECT_NE(message.find("(12 vs. 9)"), std::string::npos) << message;
  }
  SigmoidCrossEntropyLossLayer<Dtype> ok(LayerParameter{});
  ok.SetUp(this->bottom_vec_, this->top_vec_);
  ok.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_THROW(ok.Backward(this->top_vec_, {true, true}, this->bottom_vec_), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

namespace {

// Scores (9, 131); targets 0/1 (every fifth -1 when ignoring), or fractions in [0, 1].
template <typename Dtype>
GpuLayerCase<Dtype> SigmoidLossCase(const std::string& loss_param, bool ignore,
                                    bool fractional_targets = false) {
  GpuLayerCase<Dtype> c;
  c.layer = "name: 'loss' type: 'SigmoidCrossEntropyLoss' " + loss_param +
            " bottom: 'score' bottom: 'target' top: 'loss'";
  c.bottom_shapes = {{9, 131}, {9, 131}};
  c.fill = [=](const Blobs<Dtype>& bottom) {
    FillGaussian(bottom[0], 13, Dtype(4));  // large scores of both signs
    if (fractional_targets) {
      FillUniform(bottom[1], 14, Dtype(0), Dtype(1));
    } else {
      FillLabels(bottom[1], 2, ignore ? 5 : 0, -1);
    }
  };
  c.propagate_down = {true, false};
  return c;
}

}  // namespace

template <typename Dtype>
class SigmoidCrossEntropyLossLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(SigmoidCrossEntropyLossLayerGpuTest, TestDtypes);

TYPED_TEST(SigmoidCrossEntropyLossLayerGpuTest, SigmoidCrossEntropyLossDefaultBatchSize) {
  ExpectGpuMatchesCpu(SigmoidLossCase<TypeParam>("", false));
  ExpectGpuMatchesCpu(SigmoidLossCase<TypeParam>("", false, true));
}

TYPED_TEST(SigmoidCrossEntropyLossLayerGpuTest, SigmoidCrossEntropyLossIgnoreLabelInEachMode) {
  for (const char* mode : {"FULL", "VALID", "BATCH_SIZE", "NONE"}) {
    SCOPED_TRACE(mode);
    ExpectGpuMatchesCpu(SigmoidLossCase<TypeParam>(
        std::string("loss_param { ignore_label: -1 normalization: ") + mode + " }", true));
  }
}

TYPED_TEST(SigmoidCrossEntropyLossLayerGpuTest, SigmoidCrossEntropyLossLegacyNormalize) {
  ExpectGpuMatchesCpu(
      SigmoidLossCase<TypeParam>("loss_param { ignore_label: -1 normalize: true }", true));
}

}  // namespace caffe
