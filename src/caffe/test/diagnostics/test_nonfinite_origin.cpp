#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>

#include "caffe/diagnostics/nonfinite_origin.hpp"
#include "caffe/io/io.hpp"
#include "caffe/kernels/bf16_gemm.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class NonFiniteOriginTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;

  // A net on an Input layer: `layers` between the input ("data" 2x3, "target" 2x2) and a
  // Euclidean loss on "out" and "target". The input is 1..6 and the targets 0.
  void Build(const std::string& layers) {
    NetParameter param;
    ParseProtoFromText(R"(
      name: "NonFinite"
      layer { name: "input" type: "Input" top: "data" top: "target"
        input_param { shape { dim: 2 dim: 3 } shape { dim: 2 dim: 2 } } }
      )" + layers + R"(
      layer { name: "loss" type: "EuclideanLoss" bottom: "out" bottom: "target" top: "loss" })",
                       "test net", &param);
    net_ = std::make_unique<Net<Dtype>>(param);
    Blob<Dtype>& data = *net_->blob_by_name("data");
    for (int k = 0; k < data.count(); ++k) data.mutable_cpu_data()[k] = k + 1;
    caffe_set(4, Dtype(0), net_->blob_by_name("target")->mutable_cpu_data());
  }
  // Two fully connected layers, "ip1" (6 -> 4 weights, 4 biases) and "out" (4 -> 2).
  void BuildTwoLayers() {
    Build(R"(
      layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
        inner_product_param { num_output: 4 weight_filler { type: "constant" value: 0.1 } } }
      layer { name: "out" type: "InnerProduct" bottom: "ip1" top: "out"
        inner_product_param { num_output: 2 weight_filler { type: "constant" value: 0.1 } } })");
  }
  NonFiniteOrigin ForwardAndFind() {
    net_->Forward();
    return FindNonFiniteOrigin(*net_);
  }
  void SetValue(Blob<Dtype>* blob, int index, Dtype value) {
    blob->mutable_cpu_data()[index] = value;
  }
  Blob<Dtype>* Weights(const std::string& layer, int param = 0) {
    return net_->layer_by_name(layer)->blobs()[param].get();
  }

  static constexpr Dtype kNaN = std::numeric_limits<Dtype>::quiet_NaN();
  static constexpr Dtype kInf = std::numeric_limits<Dtype>::infinity();
  std::unique_ptr<Net<Dtype>> net_;
};

TYPED_TEST_SUITE(NonFiniteOriginTest, TestDtypesAndDevices);

TYPED_TEST(NonFiniteOriginTest, AFiniteNetHasNone) {
  this->BuildTwoLayers();
  const NonFiniteOrigin origin = this->ForwardAndFind();
  EXPECT_EQ(origin.source, NonFiniteSource::kNone);
  EXPECT_EQ(origin.layer, -1);
  EXPECT_EQ(origin.description, "every blob the loss depends on is finite");
}

TYPED_TEST(NonFiniteOriginTest, NonFiniteInputIsNamedAtItsDataLayer) {
  this->BuildTwoLayers();
  this->SetValue(this->net_->blob_by_name("data").get(), 4, this->kNaN);
  const NonFiniteOrigin origin = this->ForwardAndFind();
  EXPECT_EQ(origin.source, NonFiniteSource::kInputData);
  EXPECT_EQ(origin.layer, 0);
  EXPECT_EQ(origin.blob, "data");
  EXPECT_EQ(origin.description,
            "the data layer 'input' (Input) made 1 of 6 values of its top 'data' non-finite");
}

TYPED_TEST(NonFiniteOriginTest, NonFiniteWeightsAreNamedWithTheOtherLayersHoldingThem) {
  this->BuildTwoLayers();
  this->SetValue(this->Weights("ip1"), 3, this->kNaN);
  this->SetValue(this->Weights("ip1", 1), 0, this->kInf);
  this->SetValue(this->Weights("out"), 0, -this->kInf);
  const NonFiniteOrigin origin = this->ForwardAndFind();
  EXPECT_EQ(origin.source, NonFiniteSource::kWeights);
  EXPECT_EQ(origin.layer, 1);
  EXPECT_EQ(origin.blob, "ip1");
  // Weight 3 (output 1's first) and bias 0 make outputs 0 and 1 of both rows non-finite.
  EXPECT_EQ(origin.description,
            "layer 'ip1' (InnerProduct) made 4 of 8 values of its top 'ip1' non-finite; the "
            "weights of 'ip1' are not finite (param 0: 1 of 12 values, param 1: 1 of 4 values); "
            "so are those of 'out'");
}

TYPED_TEST(NonFiniteOriginTest, OfManyOtherLayersWithNonFiniteWeightsTheLastIsNamed) {
  // Eight fully connected layers in a chain, each holding a NaN weight.
  std::string layers;
  for (int k = 1; k <= 8; ++k) {
    layers += "layer { name: 'fc" + std::to_string(k) + "' type: 'InnerProduct' bottom: '" +
              (k == 1 ? std::string("data") : "fc" + std::to_string(k - 1)) + "' top: '" +
              (k == 8 ? std::string("out") : "fc" + std::to_string(k)) +
              "' inner_product_param { num_output: 2 } }\n";
  }
  this->Build(layers);
  for (int k = 1; k <= 8; ++k) {
    this->SetValue(this->Weights("fc" + std::to_string(k)), 0, this->kNaN);
  }
  const NonFiniteOrigin origin = this->ForwardAndFind();
  const std::string others = "; so are those of 'fc2', 'fc3', 'fc4', 'fc5', 2 more, 'fc8'";
  ASSERT_GE(origin.description.size(), others.size());
  EXPECT_EQ(origin.description.substr(origin.description.size() - others.size()), others)
      << origin.description;
}

TYPED_TEST(NonFiniteOriginTest, ALayersOwnArithmeticIsNamedWithTheMagnitudesItWasGiven) {
  this->Build(R"(
      layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
        inner_product_param { num_output: 2 weight_filler { type: "constant" value: 0.5 } } }
      layer { name: "out" type: "Log" bottom: "ip1" top: "out" log_param { shift: -6 } })");
  // ip1 = 0.5 * (1 + 2 + 3) = 3 and 0.5 * (4 + 5 + 6) = 7.5: log(3 - 6) is NaN, log(1.5) is not.
  const NonFiniteOrigin origin = this->ForwardAndFind();
  EXPECT_EQ(origin.source, NonFiniteSource::kLayer);
  EXPECT_EQ(origin.blob, "out");
  EXPECT_EQ(origin.description,
            "layer 'out' (Log) made 2 of 4 values of its top 'out' non-finite from finite bottoms "
            "(largest magnitude 7.5)");
}

TYPED_TEST(NonFiniteOriginTest, InPlaceLayersAfterTheLayerThatMadeTheBlobAreNamed) {
  this->Build(R"(
      layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "out"
        inner_product_param { num_output: 2 weight_filler { type: "constant" value: -0.5 } } }
      layer { name: "scale" type: "Scale" bottom: "out" top: "out"
        scale_param { filler { type: "constant" value: 3 } } }
      layer { name: "exp" type: "Exp" bottom: "out" top: "out" exp_param { scale: -100 } })");
  const NonFiniteOrigin origin = this->ForwardAndFind();
  EXPECT_EQ(origin.source, NonFiniteSource::kLayer);
  EXPECT_EQ(origin.layer, 1);
  // The weights' largest magnitude covers the in-place Scale's (3).
  EXPECT_EQ(origin.description,
            "layer 'ip1' (InnerProduct) (then in place 'scale' (Scale) 'exp' (Exp)) made 4 "
            "of 4 values of its top 'out' non-finite from finite bottoms (largest magnitude 6) "
            "and finite weights (largest magnitude 3)");
}

TYPED_TEST(NonFiniteOriginTest, BlobsTheLossDoesNotNeedAreLeftOut) {
  // "side" is NaN (the log of -1) and comes first, but nothing the loss reads depends on it.
  this->Build(R"(
      layer { name: "side" type: "Log" bottom: "data" top: "side" log_param { shift: -2 } }
      layer { name: "silence" type: "Silence" bottom: "side" }
      layer { name: "out" type: "InnerProduct" bottom: "data" top: "out"
        inner_product_param { num_output: 2 weight_filler { type: "constant" value: 0.1 } } })");
  EXPECT_EQ(this->ForwardAndFind().source, NonFiniteSource::kNone);
  this->SetValue(this->Weights("out"), 0, this->kNaN);
  const NonFiniteOrigin origin = this->ForwardAndFind();
  EXPECT_EQ(origin.source, NonFiniteSource::kWeights);
  EXPECT_EQ(this->net_->layer_names()[origin.layer], "out");
}

// A layer computing in bf16 that overflows is named so, with what to try in 16 bits.
TEST(NonFiniteOriginBf16Test, ALayerInBf16IsNamedWithLossScalingAdvice) {
  if (!CpuHasBf16Math()) GTEST_SKIP() << "no bf16 arithmetic here: " << CpuBf16Explanation();
  Caffe::set_mode(Caffe::CPU);
  NetParameter param;
  ParseProtoFromText(R"(
      name: "Overflow" default_forward_type: BFLOAT16 default_backward_type: BFLOAT16
      layer { name: "input" type: "Input" top: "data" top: "target"
        input_param { shape { dim: 64 dim: 3 } shape { dim: 64 dim: 2 } } }
      layer { name: "out" type: "InnerProduct" bottom: "data" top: "out"
        inner_product_param { num_output: 2 weight_filler { type: "constant" value: 3e38 } } }
      layer { name: "loss" type: "EuclideanLoss" bottom: "out" bottom: "target" top: "loss" })",
                     "test net", &param);
  Net<float> net(param);
  caffe_set(net.blob_by_name("data")->count(), 1.f, net.blob_by_name("data")->mutable_cpu_data());
  net.Forward();
  const NonFiniteOrigin origin = FindNonFiniteOrigin(net);
  ASSERT_EQ(origin.source, NonFiniteSource::kLayer);
  EXPECT_EQ(origin.layer_math, BFLOAT16);
  EXPECT_NE(origin.description.find("'out' (InnerProduct) made 128 of 128 values"),
            std::string::npos)
      << origin.description;
  EXPECT_NE(origin.description.find(", computing in bf16"), std::string::npos)
      << origin.description;
  const std::string advice = ExplainNonFiniteOrigin(origin, 0.01);
  EXPECT_NE(advice.find("give the layer forward_type: FLOAT and backward_type: FLOAT"),
            std::string::npos)
      << advice;
  EXPECT_NE(advice.find("dynamic_loss_scale: true"), std::string::npos) << advice;
}

}  // namespace caffe
