// InfogainLoss: hand-computed loss and gradient, identity H = SoftmaxWithLoss, H from a
// .binaryproto file or bottom[2], the axis, every normalization with ignore_label, the
// probability top, finite-difference gradients, loss weights, and errors.
#include <cmath>
#include <string>
#include <vector>

#include "caffe/io/io.hpp"
#include "caffe/layers/infogain_loss_layer.hpp"
#include "caffe/layers/softmax_with_loss_layer.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

// Legend: N batch, K classes (axis 1), H/W spatial; labels are (N, 1, H, W); H_ is K x K.
template <typename TypeParam>
class InfogainLossLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  static constexpr int kClasses = 4;
  static constexpr int kIgnored = 2;  // the class the ignore_label tests drop

  InfogainLossLayerTest()
      : scores_(vector<int>{2, kClasses, 2, 3}),
        labels_(vector<int>{2, 1, 2, 3}),
        infogain_(vector<int>{1, 1, kClasses, kClasses}) {
    FillGaussian<Dtype>(&scores_, 1701, Dtype(2));
    const Dtype labels[] = {0, 1, 3, 2, 1, 2, 3, 0, 2, 1, 3, 3};
    caffe_copy(12, labels, labels_.mutable_cpu_data());
    FillUniform<Dtype>(&infogain_, 1702, Dtype(0), Dtype(1));
  }

  // -sum H[label, k] log softmax(scores)[k] over positions (skipping kIgnored if asked), in
  // double; `valid` receives the number of positions summed.
  double ReferenceLossSum(bool skip_ignored, int* valid) const {
    const int inner = scores_.count(2);
    double sum = 0;
    *valid = 0;
    for (int n = 0; n < 2; ++n) {
      for (int i = 0; i < inner; ++i) {
        const int label = static_cast<int>(labels_.cpu_data()[n * inner + i]);
        if (skip_ignored && label == kIgnored) continue;
        double norm = 0;
        for (int k = 0; k < kClasses; ++k) {
          norm += std::exp(double(scores_.cpu_data()[(n * kClasses + k) * inner + i]));
        }
        for (int k = 0; k < kClasses; ++k) {
          const double p = std::exp(double(scores_.cpu_data()[(n * kClasses + k) * inner + i]));
          sum -= infogain_.cpu_data()[label * kClasses + k] * std::log(p / norm);
        }
        ++*valid;
      }
    }
    return sum;
  }

  Dtype ForwardLoss(const std::string& text) {
    InfogainLossLayer<Dtype> layer(ParseLayerParam(text));
    layer.SetUp(bottom_vec_, top_vec_);
    layer.Forward(bottom_vec_, top_vec_);
    return loss_.cpu_data()[0];
  }

  // Writes infogain_ (or `matrix`) as a BlobProto file; returns its path.
  std::string WriteMatrix(const Blob<Dtype>& matrix) {
    const std::string path = MakeTempDir("caffe_test_infogain") + "/H.binaryproto";
    BlobProto proto;
    matrix.ToProto(&proto);
    WriteProtoToBinaryFile(proto, path);
    return path;
  }

  Blob<Dtype> scores_, labels_, infogain_, loss_;
  Blobs<Dtype> bottom_vec_{&scores_, &labels_, &infogain_}, top_vec_{&loss_};
};
TYPED_TEST_SUITE(InfogainLossLayerTest, TestDtypesAndDevices);

TYPED_TEST(InfogainLossLayerTest, IsRegisteredAndSecondTopHoldsProbabilities) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("type: 'InfogainLoss'"));
  EXPECT_STREQ(layer->type(), "InfogainLoss");
  Blob<Dtype> prob;
  Blobs<Dtype> tops{&this->loss_, &prob};
  layer->SetUp(this->bottom_vec_, tops);
  EXPECT_EQ(this->loss_.num_axes(), 0);
  EXPECT_EQ(prob.shape(), this->scores_.shape());
  EXPECT_EQ(layer->loss(0), Dtype(1));
  EXPECT_EQ(layer->loss(1), Dtype(0));
  EXPECT_TRUE(layer->AllowForceBackward(0));
  EXPECT_FALSE(layer->AllowForceBackward(1));
  EXPECT_FALSE(layer->AllowForceBackward(2));
  layer->Forward(this->bottom_vec_, tops);
  for (int n = 0; n < 2; ++n) {
    for (int i = 0; i < 6; ++i) {
      double sum = 0;
      for (int k = 0; k < 4; ++k) sum += prob.cpu_data()[(n * 4 + k) * 6 + i];
      EXPECT_NEAR(sum, 1, 1e-6);
    }
  }
}

TYPED_TEST(InfogainLossLayerTest, ForwardAndBackwardMatchHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> scores(vector<int>{2, 3}), labels(vector<int>{2}), infogain(vector<int>{3, 3});
  Blob<Dtype> loss;
  const Dtype x[] = {1, 2, 3, 1, 1, 1};
  const Dtype h[] = {1, Dtype(0.5), 0, 0, 1, 0, Dtype(0.2), Dtype(0.3), 1};
  caffe_copy(6, x, scores.mutable_cpu_data());
  caffe_copy(9, h, infogain.mutable_cpu_data());
  labels.mutable_cpu_data()[0] = 2;
  labels.mutable_cpu_data()[1] = 0;
  Blobs<Dtype> bottom{&scores, &labels, &infogain}, top{&loss};
  InfogainLossLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(bottom, top);
  layer.Forward(bottom, top);
  // p0 = softmax(1, 2, 3) = (0.0900306, 0.2447285, 0.6652410), p1 = 1/3 each;
  // -(0.2 log p0[0] + 0.3 log p0[1] + log p0[2] + 1.5 log(1/3)) / 2.
  EXPECT_NEAR(loss.cpu_data()[0], 1.4796636898, 1e-6);
  layer.Backward(top, {true, false, false}, bottom);
  // (p_k sum_j H[label, j] - H[label, k]) / 2.
  const double expected[] = {-0.0324770701, 0.0335463533, -0.0010692832, -0.25, 0, 0.25};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(scores.cpu_diff()[i], expected[i], 1e-6) << i;
}

TYPED_TEST(InfogainLossLayerTest, IdentityMatrixEqualsSoftmaxWithLoss) {
  using Dtype = typename TypeParam::Dtype;
  caffe_set(this->infogain_.count(), Dtype(0), this->infogain_.mutable_cpu_data());
  for (int k = 0; k < this->kClasses; ++k) this->infogain_.mutable_cpu_data()[k * 5] = 1;
  InfogainLossLayer<Dtype> infogain(LayerParameter{});
  infogain.SetUp(this->bottom_vec_, this->top_vec_);
  infogain.Forward(this->bottom_vec_, this->top_vec_);
  const Dtype infogain_loss = this->loss_.cpu_data()[0];
  infogain.Backward(this->top_vec_, {true, false, false}, this->bottom_vec_);
  vector<Dtype> infogain_diff(this->scores_.cpu_diff(),
                              this->scores_.cpu_diff() + this->scores_.count());

  Blobs<Dtype> softmax_bottom{&this->scores_, &this->labels_};
  SoftmaxWithLossLayer<Dtype> softmax(LayerParameter{});
  softmax.SetUp(softmax_bottom, this->top_vec_);
  softmax.Forward(softmax_bottom, this->top_vec_);
  EXPECT_NEAR(infogain_loss, this->loss_.cpu_data()[0], 1e-5);
  softmax.Backward(this->top_vec_, {true, false}, softmax_bottom);
  for (int i = 0; i < this->scores_.count(); ++i) {
    EXPECT_NEAR(infogain_diff[i], this->scores_.cpu_diff()[i], 1e-6) << i;
  }
}

TYPED_TEST(InfogainLossLayerTest, MatrixFromSourceFileEqualsMatrixFromBottom) {
  using Dtype = typename TypeParam::Dtype;
  const Dtype from_bottom = this->ForwardLoss("");
  const std::string path = this->WriteMatrix(this->infogain_);
  Blobs<Dtype> two_bottoms{&this->scores_, &this->labels_};
  InfogainLossLayer<Dtype> layer(ParseLayerParam("infogain_loss_param { source: '" + path + "' }"));
  layer.SetUp(two_bottoms, this->top_vec_);
  layer.Forward(two_bottoms, this->top_vec_);
  EXPECT_NEAR(this->loss_.cpu_data()[0], from_bottom, 1e-6);
  // The file's matrix also drives the gradient.
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-2), 1701);
  checker.CheckGradientExhaustive(&layer, two_bottoms, this->top_vec_, 0);
}

TYPED_TEST(InfogainLossLayerTest, EachNormalizationDividesByItsCount) {
  int valid = 0;
  const double sum = this->ReferenceLossSum(true, &valid);
  ASSERT_EQ(valid, 9);  // three positions are labelled 2
  const std::string ignore = "loss_param { ignore_label: 2 ";
  EXPECT_NEAR(this->ForwardLoss(ignore + "}"), sum / 9, 1e-5);  // VALID is the default
  EXPECT_NEAR(this->ForwardLoss(ignore + "normalization: VALID }"), sum / 9, 1e-5);
  EXPECT_NEAR(this->ForwardLoss(ignore + "normalization: FULL }"), sum / 12, 1e-5);
  EXPECT_NEAR(this->ForwardLoss(ignore + "normalization: BATCH_SIZE }"), sum / 2, 1e-5);
  EXPECT_NEAR(this->ForwardLoss(ignore + "normalization: NONE }"), sum, 1e-4);
  int all = 0;
  const double full_sum = this->ReferenceLossSum(false, &all);
  EXPECT_NEAR(this->ForwardLoss(""), full_sum / 12, 1e-5);
}

TYPED_TEST(InfogainLossLayerTest, AxisSelectsTheClassAxis) {
  using Dtype = typename TypeParam::Dtype;
  // Classes on the last axis: (N=2, T=3, K=4), one label per (n, t).
  Blob<Dtype> scores(vector<int>{2, 3, 4}), labels(vector<int>{2, 3}), loss;
  FillGaussian<Dtype>(&scores, 3);
  const Dtype label_values[] = {0, 3, 1, 2, 2, 0};
  caffe_copy(6, label_values, labels.mutable_cpu_data());
  Blobs<Dtype> bottom{&scores, &labels, &this->infogain_}, top{&loss};
  InfogainLossLayer<Dtype> layer(ParseLayerParam("infogain_loss_param { axis: -1 }"));
  layer.SetUp(bottom, top);
  layer.Forward(bottom, top);
  double expected = 0;
  for (int row = 0; row < 6; ++row) {
    double norm = 0;
    for (int k = 0; k < 4; ++k) norm += std::exp(double(scores.cpu_data()[row * 4 + k]));
    const int label = static_cast<int>(label_values[row]);
    for (int k = 0; k < 4; ++k) {
      expected -= this->infogain_.cpu_data()[label * 4 + k] *
                  std::log(std::exp(double(scores.cpu_data()[row * 4 + k])) / norm);
    }
  }
  EXPECT_NEAR(loss.cpu_data()[0], expected / 6, 1e-5);
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-2), 1701);
  checker.CheckGradientExhaustive(&layer, bottom, top, 0);
}

TYPED_TEST(InfogainLossLayerTest, IgnoredPositionsGetZeroGradient) {
  using Dtype = typename TypeParam::Dtype;
  InfogainLossLayer<Dtype> layer(ParseLayerParam("loss_param { ignore_label: 2 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  layer.Backward(this->top_vec_, {true, false, false}, this->bottom_vec_);
  for (int n = 0; n < 2; ++n) {
    for (int i = 0; i < 6; ++i) {
      const bool ignored = this->labels_.cpu_data()[n * 6 + i] == this->kIgnored;
      double abs_sum = 0;
      for (int k = 0; k < 4; ++k)
        abs_sum += std::fabs(this->scores_.cpu_diff()[(n * 4 + k) * 6 + i]);
      EXPECT_EQ(abs_sum == 0, ignored) << "n=" << n << " i=" << i;
    }
  }
}

TYPED_TEST(InfogainLossLayerTest, LossWeightScalesLossAndGradient) {
  using Dtype = typename TypeParam::Dtype;
  InfogainLossLayer<Dtype> unit(LayerParameter{});
  unit.SetUp(this->bottom_vec_, this->top_vec_);
  const Dtype unit_loss = unit.Forward(this->bottom_vec_, this->top_vec_);
  unit.Backward(this->top_vec_, {true, false, false}, this->bottom_vec_);
  vector<Dtype> unit_diff(this->scores_.cpu_diff(),
                          this->scores_.cpu_diff() + this->scores_.count());
  InfogainLossLayer<Dtype> weighted(ParseLayerParam("loss_weight: 0.3"));
  weighted.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_NEAR(weighted.Forward(this->bottom_vec_, this->top_vec_), Dtype(0.3) * unit_loss, 1e-5);
  weighted.Backward(this->top_vec_, {true, false, false}, this->bottom_vec_);
  for (int i = 0; i < this->scores_.count(); ++i) {
    EXPECT_NEAR(this->scores_.cpu_diff()[i], Dtype(0.3) * unit_diff[i], 1e-6) << i;
  }
}

TYPED_TEST(InfogainLossLayerTest, GradientsMatchFiniteDifferencesInEveryNormalization) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* mode : {"FULL", "VALID", "BATCH_SIZE", "NONE"}) {
    SCOPED_TRACE(mode);
    InfogainLossLayer<Dtype> layer(ParseLayerParam(
        std::string("loss_weight: 2.5 loss_param { ignore_label: 2 normalization: ") + mode +
        " }"));
    GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-2), 1701);
    checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_, 0);
  }
}

// Runs SetUp and Forward and expects a caffe::Error whose message contains every part.
template <typename Dtype>
void ExpectInfogainError(const std::string& param, const Blobs<Dtype>& bottom,
                         const Blobs<Dtype>& top, const vector<std::string>& parts) {
  InfogainLossLayer<Dtype> layer(ParseLayerParam("name: 'info' " + param));
  try {
    layer.SetUp(bottom, top);
    layer.Forward(bottom, top);
    ADD_FAILURE() << "expected caffe::Error for " << param;
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("InfogainLoss layer 'info': "), std::string::npos) << message;
    for (const auto& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message;
  }
}

TYPED_TEST(InfogainLossLayerTest, RejectsMissingOrUnreadableMatrix) {
  using Dtype = typename TypeParam::Dtype;
  Blobs<Dtype> two_bottoms{&this->scores_, &this->labels_};
  ExpectInfogainError<Dtype>("", two_bottoms, this->top_vec_, {"infogain_loss_param.source"});
  const std::string missing = MakeTempDir("caffe_test_infogain") + "/missing.binaryproto";
  ExpectInfogainError<Dtype>("infogain_loss_param { source: '" + missing + "' }", two_bottoms,
                             this->top_vec_, {missing});
}

TYPED_TEST(InfogainLossLayerTest, RejectsMatrixOfWrongSizeNamingBothSizes) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> small(vector<int>{3, 3});
  Blobs<Dtype> bottom{&this->scores_, &this->labels_, &small};
  ExpectInfogainError<Dtype>("", bottom, this->top_vec_,
                             {"must be 4 x 4", "bottom[2] has shape 3 3 (9)", "(9 vs. 16)"});
  const std::string path = this->WriteMatrix(small);
  Blobs<Dtype> two_bottoms{&this->scores_, &this->labels_};
  ExpectInfogainError<Dtype>("infogain_loss_param { source: '" + path + "' }", two_bottoms,
                             this->top_vec_, {"must be 4 x 4", path, "(9 vs. 16)"});
}

TYPED_TEST(InfogainLossLayerTest, RejectsBadLabelsLabelCountAndDeprecatedNormalize) {
  using Dtype = typename TypeParam::Dtype;
  this->labels_.mutable_cpu_data()[7] = 4;
  ExpectInfogainError<Dtype>("", this->bottom_vec_, this->top_vec_,
                             {"label 4 at position 7", "[0, 4)"});
  this->labels_.mutable_cpu_data()[7] = 0;
  ExpectInfogainError<Dtype>("loss_param { normalize: true }", this->bottom_vec_, this->top_vec_,
                             {"normalize is deprecated"});
  Blob<Dtype> few(vector<int>{2, 5});
  Blobs<Dtype> bottom{&this->scores_, &few, &this->infogain_};
  ExpectInfogainError<Dtype>("", bottom, this->top_vec_, {"holds 10 labels"});
}

TYPED_TEST(InfogainLossLayerTest, RejectsGradientForLabelsOrMatrix) {
  using Dtype = typename TypeParam::Dtype;
  InfogainLossLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_THROW(layer.Backward(this->top_vec_, {true, true, false}, this->bottom_vec_), Error);
  EXPECT_THROW(layer.Backward(this->top_vec_, {true, false, true}, this->bottom_vec_), Error);
}

}  // namespace caffe
