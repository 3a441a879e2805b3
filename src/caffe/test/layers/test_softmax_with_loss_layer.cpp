#include <cmath>
#include <string>
#include <vector>

#include "caffe/layers/softmax_with_loss_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

// Legend: N batch, C classes (axis 1), H/W spatial; labels are (N, 1, H, W).
template <typename TypeParam>
class SoftmaxWithLossLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  static constexpr int kIgnored = 1;  // the class the ignore_label tests drop

  SoftmaxWithLossLayerTest() : scores_(vector<int>{2, 5, 2, 3}), labels_(vector<int>{2, 1, 2, 3}) {
    FillGaussian<Dtype>(&scores_, 1701, Dtype(2));
    const Dtype labels[] = {0, 1, 4, 2, 1, 3, 3, 0, 1, 4, 2, 2};
    caffe_copy(12, labels, labels_.mutable_cpu_data());
  }

  // -log(softmax(scores)[label]) summed over positions (those labelled kIgnored skipped if asked),
  // in double; `valid` receives the number of positions summed.
  double ReferenceLossSum(bool skip_ignored, int* valid) const {
    const int channels = scores_.shape(1), inner = scores_.count(2);
    double sum = 0;
    *valid = 0;
    for (int n = 0; n < scores_.shape(0); ++n) {
      for (int i = 0; i < inner; ++i) {
        const int label = static_cast<int>(labels_.cpu_data()[n * inner + i]);
        if (skip_ignored && label == kIgnored) continue;
        double norm = 0;
        for (int c = 0; c < channels; ++c) {
          norm += std::exp(static_cast<double>(scores_.cpu_data()[(n * channels + c) * inner + i]));
        }
        sum -= std::log(
            std::exp(static_cast<double>(scores_.cpu_data()[(n * channels + label) * inner + i])) /
            norm);
        ++*valid;
      }
    }
    return sum;
  }

  // Sets up a layer from prototxt text and returns its forward loss (top[0], unweighted).
  Dtype ForwardLoss(const std::string& text) {
    SoftmaxWithLossLayer<Dtype> layer(ParseLayerParam(text));
    layer.SetUp(bottom_vec_, top_vec_);
    layer.Forward(bottom_vec_, top_vec_);
    return loss_.cpu_data()[0];
  }

  Blob<Dtype> scores_, labels_, loss_;
  Blobs<Dtype> bottom_vec_{&scores_, &labels_}, top_vec_{&loss_};
};
TYPED_TEST_SUITE(SoftmaxWithLossLayerTest, TestDtypesAndDevices);

TYPED_TEST(SoftmaxWithLossLayerTest, IsRegisteredAndCreatesItsSoftmaxThroughTheRegistry) {
  using Dtype = typename TypeParam::Dtype;
  auto layer =
      LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("name: 'loss' type: 'SoftmaxWithLoss'"));
  EXPECT_STREQ(layer->type(), "SoftmaxWithLoss");
  layer->SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(layer->loss(0), Dtype(1));  // loss layers default to loss_weight 1
  EXPECT_FALSE(layer->AllowForceBackward(1));
  EXPECT_TRUE(layer->AllowForceBackward(0));
}

TYPED_TEST(SoftmaxWithLossLayerTest, TopIsScalarAndSecondTopHoldsProbabilities) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> prob;
  Blobs<Dtype> tops{&this->loss_, &prob};
  SoftmaxWithLossLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, tops);
  EXPECT_EQ(this->loss_.num_axes(), 0);
  EXPECT_EQ(prob.shape(), this->scores_.shape());
  EXPECT_EQ(layer.loss(0), Dtype(1));
  EXPECT_EQ(layer.loss(1), Dtype(0));  // the probabilities are an output, not a loss
  const Dtype weighted = layer.Forward(this->bottom_vec_, tops);
  EXPECT_EQ(weighted, this->loss_.cpu_data()[0]);
  for (int n = 0; n < 2; ++n) {
    for (int i = 0; i < 6; ++i) {
      double sum = 0;
      for (int c = 0; c < 5; ++c) sum += prob.cpu_data()[(n * 5 + c) * 6 + i];
      EXPECT_NEAR(sum, 1, 1e-6);
    }
  }
}

TYPED_TEST(SoftmaxWithLossLayerTest, ForwardMatchesHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> scores(vector<int>{2, 3}), labels(vector<int>{2}), loss;
  const Dtype x[] = {1, 2, 3, 1, 1, 1};
  caffe_copy(6, x, scores.mutable_cpu_data());
  labels.mutable_cpu_data()[0] = 2;
  labels.mutable_cpu_data()[1] = 0;
  Blobs<Dtype> bottom{&scores, &labels}, top{&loss};
  SoftmaxWithLossLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(bottom, top);
  layer.Forward(bottom, top);
  // (-log 0.6652409558 - log(1/3)) / 2
  EXPECT_NEAR(loss.cpu_data()[0], 0.7531091266, 1e-6);
  // Backward: (p - onehot) / 2.
  layer.Backward(top, {true, false}, bottom);
  const double expected[] = {0.0450152866,  0.1223642356, -0.1673795221,
                             -0.3333333333, 0.1666666667, 0.1666666667};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(scores.cpu_diff()[i], expected[i], 1e-6) << i;
}

TYPED_TEST(SoftmaxWithLossLayerTest, EachNormalizationDividesByItsCount) {
  int valid = 0;
  const double sum = this->ReferenceLossSum(true, &valid);
  ASSERT_EQ(valid, 9);  // three positions are labelled 1
  const std::string ignore = "loss_param { ignore_label: 1 ";
  EXPECT_NEAR(this->ForwardLoss(ignore + "normalization: FULL }"), sum / 12, 1e-5);
  EXPECT_NEAR(this->ForwardLoss(ignore + "normalization: VALID }"), sum / 9, 1e-5);
  EXPECT_NEAR(this->ForwardLoss(ignore + "}"), sum / 9, 1e-5);  // VALID is the default
  EXPECT_NEAR(this->ForwardLoss(ignore + "normalization: BATCH_SIZE }"), sum / 2, 1e-5);
  EXPECT_NEAR(this->ForwardLoss(ignore + "normalization: NONE }"), sum, 1e-4);
}

TYPED_TEST(SoftmaxWithLossLayerTest, DeprecatedNormalizeMapsToValidOrBatchSize) {
  int valid = 0;
  const double sum = this->ReferenceLossSum(true, &valid);
  const std::string ignore = "loss_param { ignore_label: 1 ";
  EXPECT_NEAR(this->ForwardLoss(ignore + "normalize: false }"), sum / 2, 1e-5);
  EXPECT_NEAR(this->ForwardLoss(ignore + "normalize: true }"), sum / 9, 1e-5);
  // An explicit normalization wins over the deprecated flag.
  EXPECT_NEAR(this->ForwardLoss(ignore + "normalize: false normalization: NONE }"), sum, 1e-4);
}

TYPED_TEST(SoftmaxWithLossLayerTest, ValidWithoutIgnoreLabelCountsEveryPosition) {
  int valid = 0;
  const double sum = this->ReferenceLossSum(false, &valid);
  ASSERT_EQ(valid, 12);
  EXPECT_NEAR(this->ForwardLoss(""), sum / 12, 1e-5);
  EXPECT_NEAR(this->ForwardLoss("loss_param { normalization: FULL }"), sum / 12, 1e-5);
}

TYPED_TEST(SoftmaxWithLossLayerTest, AllLabelsIgnoredGiveZeroLossAndGradient) {
  using Dtype = typename TypeParam::Dtype;
  caffe_set(this->labels_.count(), Dtype(3), this->labels_.mutable_cpu_data());
  SoftmaxWithLossLayer<Dtype> layer(ParseLayerParam("loss_param { ignore_label: 3 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->loss_.cpu_data()[0], Dtype(0));
  layer.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  for (int i = 0; i < this->scores_.count(); ++i) EXPECT_EQ(this->scores_.cpu_diff()[i], Dtype(0));
}

TYPED_TEST(SoftmaxWithLossLayerTest, IgnoredPositionsGetZeroGradient) {
  using Dtype = typename TypeParam::Dtype;
  SoftmaxWithLossLayer<Dtype> layer(ParseLayerParam("loss_param { ignore_label: 1 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  layer.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  for (int n = 0; n < 2; ++n) {
    for (int i = 0; i < 6; ++i) {
      const bool ignored = this->labels_.cpu_data()[n * 6 + i] == this->kIgnored;
      double abs_sum = 0;
      for (int c = 0; c < 5; ++c)
        abs_sum += std::fabs(this->scores_.cpu_diff()[(n * 5 + c) * 6 + i]);
      if (ignored) {
        EXPECT_EQ(abs_sum, 0) << "n=" << n << " i=" << i;
      } else {
        EXPECT_GT(abs_sum, 0) << "n=" << n << " i=" << i;
      }
    }
  }
}

TYPED_TEST(SoftmaxWithLossLayerTest, LossWeightScalesLossAndGradient) {
  using Dtype = typename TypeParam::Dtype;
  SoftmaxWithLossLayer<Dtype> unit(LayerParameter{});
  unit.SetUp(this->bottom_vec_, this->top_vec_);
  const Dtype unit_loss = unit.Forward(this->bottom_vec_, this->top_vec_);
  unit.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  vector<Dtype> unit_diff(this->scores_.cpu_diff(),
                          this->scores_.cpu_diff() + this->scores_.count());

  SoftmaxWithLossLayer<Dtype> weighted(ParseLayerParam("loss_weight: 3"));
  weighted.SetUp(this->bottom_vec_, this->top_vec_);
  const Dtype weighted_loss = weighted.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_NEAR(weighted_loss, 3 * unit_loss, 1e-5);
  EXPECT_NEAR(this->loss_.cpu_data()[0], unit_loss, 1e-6);  // top holds the unweighted loss
  weighted.Backward(this->top_vec_, {true, false}, this->bottom_vec_);
  for (int i = 0; i < this->scores_.count(); ++i) {
    EXPECT_NEAR(this->scores_.cpu_diff()[i], 3 * unit_diff[i], 1e-6) << i;
  }
}

TYPED_TEST(SoftmaxWithLossLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  SoftmaxWithLossLayer<Dtype> layer(ParseLayerParam("loss_weight: 0.5"));
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-2), 1701);
  checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_, 0);
}

TYPED_TEST(SoftmaxWithLossLayerTest, GradientsMatchFiniteDifferencesInEveryNormalization) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* mode : {"FULL", "VALID", "BATCH_SIZE", "NONE"}) {
    SCOPED_TRACE(mode);
    SoftmaxWithLossLayer<Dtype> layer(ParseLayerParam(
        std::string("loss_weight: 2.5 loss_param { ignore_label: 1 normalization: ") + mode +
        " }"));
    GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-2), 1701);
    checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_, 0);
  }
}

TYPED_TEST(SoftmaxWithLossLayerTest, SoftmaxAxisSelectsTheClassAxis) {
  using Dtype = typename TypeParam::Dtype;
  // Classes on the last axis: (N=2, T=3, C=4), one label per (n, t).
  Blob<Dtype> scores(vector<int>{2, 3, 4}), labels(vector<int>{2, 3}), loss;
  FillGaussian<Dtype>(&scores, 3);
  const Dtype label_values[] = {0, 3, 1, 2, 2, 0};
  caffe_copy(6, label_values, labels.mutable_cpu_data());
  Blobs<Dtype> bottom{&scores, &labels}, top{&loss};
  SoftmaxWithLossLayer<Dtype> layer(ParseLayerParam("softmax_param { axis: -1 }"));
  layer.SetUp(bottom, top);
  layer.Forward(bottom, top);
  double expected = 0;
  for (int row = 0; row < 6; ++row) {
    double norm = 0;
    for (int c = 0; c < 4; ++c)
      norm += std::exp(static_cast<double>(scores.cpu_data()[row * 4 + c]));
    const int label = static_cast<int>(label_values[row]);
    expected -= std::log(std::exp(static_cast<double>(scores.cpu_data()[row * 4 + label])) / norm);
  }
  EXPECT_NEAR(loss.cpu_data()[0], expected / 6, 1e-5);
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-2), 1701);
  checker.CheckGradientExhaustive(&layer, bottom, top, 0);
}

TYPED_TEST(SoftmaxWithLossLayerTest, RejectsLabelOutOfRangeNamingLayerLabelAndClasses) {
  using Dtype = typename TypeParam::Dtype;
  for (Dtype bad : {Dtype(5), Dtype(-1)}) {
    this->labels_.mutable_cpu_data()[4] = bad;
    SoftmaxWithLossLayer<Dtype> layer(ParseLayerParam("name: 'loss'"));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    try {
      layer.Forward(this->bottom_vec_, this->top_vec_);
      FAIL() << "expected caffe::Error for label " << bad;
    } catch (const Error& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("SoftmaxWithLoss layer 'loss': "), std::string::npos) << message;
      EXPECT_NE(message.find("label " + std::to_string(static_cast<int>(bad))), std::string::npos)
          << message;
      EXPECT_NE(message.find("5 classes"), std::string::npos) << message;
    }
  }
}

TYPED_TEST(SoftmaxWithLossLayerTest, RejectsWrongLabelCountAndBatch) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> few_labels(vector<int>{2, 5});
  Blobs<Dtype> bottom{&this->scores_, &few_labels};
  SoftmaxWithLossLayer<Dtype> layer(LayerParameter{});
  EXPECT_THROW(layer.SetUp(bottom, this->top_vec_), Error);
  Blob<Dtype> other_batch(vector<int>{3, 1, 2, 2});  // 12 labels, but batch 3
  Blobs<Dtype> bottom2{&this->scores_, &other_batch};
  SoftmaxWithLossLayer<Dtype> layer2(LayerParameter{});
  EXPECT_THROW(layer2.SetUp(bottom2, this->top_vec_), Error);
}

TYPED_TEST(SoftmaxWithLossLayerTest, RejectsGradientForLabels) {
  using Dtype = typename TypeParam::Dtype;
  SoftmaxWithLossLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_THROW(layer.Backward(this->top_vec_, {true, true}, this->bottom_vec_), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----
// These cases test Caffe's own softmax kernels: in cuDNN builds the DEFAULT engine is cuDNN's
// (tested with the cuDNN layers). SoftmaxWithLoss passes the engine to its inner Softmax layer.

namespace {

const std::string kCaffeSoftmax = "softmax_param { engine: CAFFE }";

// Scores (10, 7, 3, 5): 150 positions of 7 classes; labels one per position.
template <typename Dtype>
GpuLayerCase<Dtype> SoftmaxLossCase(const std::string& loss_param, int ignore_every = 0,
                                    int ignore_value = -1) {
  GpuLayerCase<Dtype> c;
  c.layer = "name: 'loss' type: 'SoftmaxWithLoss' " + kCaffeSoftmax + " " + loss_param +
            " bottom: 'score' bottom: 'label' top: 'loss'";
  c.bottom_shapes = {{10, 7, 3, 5}, {10, 1, 3, 5}};
  c.fill = [=](const Blobs<Dtype>& bottom) {
    FillGaussian(bottom[0], 11, Dtype(2));
    FillLabels(bottom[1], 7, ignore_every, ignore_value);
  };
  c.propagate_down = {true, false};
  return c;
}

}  // namespace

template <typename Dtype>
class SoftmaxWithLossLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(SoftmaxWithLossLayerGpuTest, TestDtypes);

TYPED_TEST(SoftmaxWithLossLayerGpuTest, SoftmaxWithLossDefaultValidNormalization) {
  ExpectGpuMatchesCpu(SoftmaxLossCase<TypeParam>(""));
}

TYPED_TEST(SoftmaxWithLossLayerGpuTest, SoftmaxWithLossEachNormalizationMode) {
  for (const char* mode : {"FULL", "VALID", "BATCH_SIZE", "NONE"}) {
    SCOPED_TRACE(mode);
    ExpectGpuMatchesCpu(
        SoftmaxLossCase<TypeParam>(std::string("loss_param { normalization: ") + mode + " }"));
  }
}

TYPED_TEST(SoftmaxWithLossLayerGpuTest, SoftmaxWithLossLegacyNormalizeFlag) {
  for (const char* normalize : {"true", "false"}) {
    SCOPED_TRACE(normalize);
    ExpectGpuMatchesCpu(
        SoftmaxLossCase<TypeParam>(std::string("loss_param { normalize: ") + normalize + " }"));
  }
}

TYPED_TEST(SoftmaxWithLossLayerGpuTest, SoftmaxWithLossIgnoreLabelInEachMode) {
  // Label 1 is a real class here: the ignored positions are its own and every fourth one.
  for (const char* mode : {"FULL", "VALID", "BATCH_SIZE", "NONE"}) {
    SCOPED_TRACE(mode);
    ExpectGpuMatchesCpu(SoftmaxLossCase<TypeParam>(
        std::string("loss_param { ignore_label: 1 normalization: ") + mode + " }", 4, 1));
  }
}

TYPED_TEST(SoftmaxWithLossLayerGpuTest, SoftmaxWithLossNegativeIgnoreLabelAndLossWeight) {
  GpuLayerCase<TypeParam> c = SoftmaxLossCase<TypeParam>("loss_param { ignore_label: -1 }", 3);
  c.layer = "loss_weight: 2.5 " + c.layer;
  ExpectGpuMatchesCpu(c);
}

// The default engine here: cuDNN's softmax inside, where the build has it.
TYPED_TEST(SoftmaxWithLossLayerGpuTest, SoftmaxWithLossClassifierWithProbabilityTop) {
  GpuLayerCase<TypeParam> c;
  c.layer =
      "name: 'loss' type: 'SoftmaxWithLoss' loss_weight: 1 loss_weight: 0 "
      "bottom: 'score' bottom: 'label' top: 'loss' top: 'prob'";
  c.bottom_shapes = {{64, 1000}, {64}};
  c.fill = [](const Blobs<TypeParam>& bottom) {
    FillGaussian(bottom[0], 12, TypeParam(3));
    FillLabels(bottom[1], 1000);
  };
  c.propagate_down = {true, false};
  ExpectGpuMatchesCpu(c);
}

}  // namespace caffe
