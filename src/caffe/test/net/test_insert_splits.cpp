// Split insertion, compared with what BVLC's InsertSplits produces: split layers right after the
// producer, named "<blob>_<layer>_<top index>_split" with tops "..._split_<k>" handed to consumers
// in order; a top used as a loss counts as a consumer and its loss moves to the split's first top;
// in-place layers start a new producer; and a bottom nobody produced is a caffe::Error.
#include <string>
#include <vector>

#include "caffe/io/io.hpp"
#include "caffe/net/insert_splits.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

NetParameter ParseNet(const std::string& text) {
  NetParameter param;
  ParseProtoFromText(text, "test net", &param);
  return param;
}

NetParameter Split(const std::string& text) {
  NetParameter split;
  InsertSplits(ParseNet(text), &split);
  return split;
}

// Compares the split net with the expected one as text, which shows the difference on failure.
void ExpectNet(const NetParameter& actual, const std::string& expected_text) {
  EXPECT_EQ(actual.DebugString(), ParseNet(expected_text).DebugString());
}

}  // namespace

TEST(InsertSplitsTest, NetWithoutSharedBlobsIsUnchanged) {
  const std::string text = R"(
    name: "Chain" force_backward: true
    layer { name: "data" type: "Input" top: "data" top: "target" }
    layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip" }
    layer { name: "relu" type: "ReLU" bottom: "ip" top: "ip" }
    layer { name: "loss" type: "EuclideanLoss" bottom: "ip" bottom: "target" top: "loss" }
  )";
  ExpectNet(Split(text), text);
}

TEST(InsertSplitsTest, SharedTopGoesThroughASplitNamedAsInBvlc) {
  ExpectNet(Split(R"(
    name: "Fork"
    layer { name: "data" type: "Input" top: "data" top: "label" }
    layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1" }
    layer { name: "ip2" type: "InnerProduct" bottom: "data" top: "ip2" }
    layer { name: "loss1" type: "SoftmaxWithLoss" bottom: "ip1" bottom: "label" }
    layer { name: "loss2" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" }
  )"),
            R"(
    name: "Fork"
    layer { name: "data" type: "Input" top: "data" top: "label" }
    layer { name: "data_data_0_split" type: "Split" bottom: "data"
            top: "data_data_0_split_0" top: "data_data_0_split_1" }
    layer { name: "label_data_1_split" type: "Split" bottom: "label"
            top: "label_data_1_split_0" top: "label_data_1_split_1" }
    layer { name: "ip1" type: "InnerProduct" bottom: "data_data_0_split_0" top: "ip1" }
    layer { name: "ip2" type: "InnerProduct" bottom: "data_data_0_split_1" top: "ip2" }
    layer { name: "loss1" type: "SoftmaxWithLoss" bottom: "ip1" bottom: "label_data_1_split_0" }
    layer { name: "loss2" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label_data_1_split_1" }
  )");
}

TEST(InsertSplitsTest, SameBlobTwiceInOneLayerIsSplitToo) {
  ExpectNet(Split(R"(
    layer { name: "in" type: "Input" top: "x" }
    layer { name: "square" type: "Eltwise" bottom: "x" bottom: "x" top: "y"
            eltwise_param { operation: PROD } }
  )"),
            R"(
    layer { name: "in" type: "Input" top: "x" }
    layer { name: "x_in_0_split" type: "Split" bottom: "x"
            top: "x_in_0_split_0" top: "x_in_0_split_1" }
    layer { name: "square" type: "Eltwise" bottom: "x_in_0_split_0" bottom: "x_in_0_split_1"
            top: "y" eltwise_param { operation: PROD } }
  )");
}

TEST(InsertSplitsTest, TopUsedAsLossAndAsBottomMovesItsLossToTheSplit) {
  ExpectNet(Split(R"(
    layer { name: "in" type: "Input" top: "x" }
    layer { name: "enc" type: "InnerProduct" bottom: "x" top: "code" loss_weight: 0.3 }
    layer { name: "dec" type: "InnerProduct" bottom: "code" top: "out" }
  )"),
            R"(
    layer { name: "in" type: "Input" top: "x" }
    layer { name: "enc" type: "InnerProduct" bottom: "x" top: "code" }
    layer { name: "code_enc_0_split" type: "Split" bottom: "code"
            top: "code_enc_0_split_0" top: "code_enc_0_split_1"
            loss_weight: 0.3 loss_weight: 0 }
    layer { name: "dec" type: "InnerProduct" bottom: "code_enc_0_split_1" top: "out" }
  )");
}

TEST(InsertSplitsTest, ZeroLossWeightIsNotAConsumer) {
  const std::string text = R"(
    layer { name: "in" type: "Input" top: "x" }
    layer { name: "enc" type: "InnerProduct" bottom: "x" top: "code" loss_weight: 0 }
    layer { name: "dec" type: "InnerProduct" bottom: "code" top: "out" }
  )";
  ExpectNet(Split(text), text);
}

TEST(InsertSplitsTest, LossTopWithThreeConsumersKeepsTheLossOnSplitZero) {
  const NetParameter split = Split(R"(
    layer { name: "in" type: "Input" top: "x" }
    layer { name: "l" type: "EuclideanLoss" bottom: "x" bottom: "x" top: "loss" loss_weight: 2 }
    layer { name: "a" type: "Silence" bottom: "loss" }
    layer { name: "b" type: "Silence" bottom: "loss" }
  )");
  ASSERT_EQ(split.layer_size(), 6);
  const LayerParameter& loss_split = split.layer(3);
  EXPECT_EQ(loss_split.name(), "loss_l_0_split");
  ASSERT_EQ(loss_split.top_size(), 3);
  ASSERT_EQ(loss_split.loss_weight_size(), 3);
  EXPECT_EQ(loss_split.loss_weight(0), 2);
  EXPECT_EQ(loss_split.loss_weight(1), 0);
  EXPECT_EQ(loss_split.loss_weight(2), 0);
  EXPECT_EQ(split.layer(2).loss_weight_size(), 0);
  EXPECT_EQ(split.layer(4).bottom(0), "loss_l_0_split_1");
  EXPECT_EQ(split.layer(5).bottom(0), "loss_l_0_split_2");
}

TEST(InsertSplitsTest, InPlaceLayersStartANewProducer) {
  // conv1 feeds relu1 only (in place); the relu's output "conv1" feeds two layers, so the split
  // is named after relu1. "data" is read by pool and by the in-place scale, which therefore reads
  // a split top and writes a fresh "data" that the last layer reads without a split.
  ExpectNet(Split(R"(
    layer { name: "data" type: "Input" top: "data" }
    layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1" }
    layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
    layer { name: "p1" type: "Pooling" bottom: "conv1" top: "p1" }
    layer { name: "p2" type: "Pooling" bottom: "conv1" top: "p2" }
    layer { name: "scale" type: "Scale" bottom: "data" top: "data" }
    layer { name: "last" type: "Silence" bottom: "data" }
  )"),
            R"(
    layer { name: "data" type: "Input" top: "data" }
    layer { name: "data_data_0_split" type: "Split" bottom: "data"
            top: "data_data_0_split_0" top: "data_data_0_split_1" }
    layer { name: "conv1" type: "Convolution" bottom: "data_data_0_split_0" top: "conv1" }
    layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
    layer { name: "conv1_relu1_0_split" type: "Split" bottom: "conv1"
            top: "conv1_relu1_0_split_0" top: "conv1_relu1_0_split_1" }
    layer { name: "p1" type: "Pooling" bottom: "conv1_relu1_0_split_0" top: "p1" }
    layer { name: "p2" type: "Pooling" bottom: "conv1_relu1_0_split_1" top: "p2" }
    layer { name: "scale" type: "Scale" bottom: "data_data_0_split_1" top: "data" }
    layer { name: "last" type: "Silence" bottom: "data" }
  )");
}

TEST(InsertSplitsTest, UnknownBottomIsAnErrorNamingBlobLayerAndIndex) {
  try {
    Split(R"(
      layer { name: "data" type: "Input" top: "data" }
      layer { name: "loss" type: "EuclideanLoss" bottom: "data" bottom: "labels" }
    )");
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("unknown bottom blob 'labels'"), std::string::npos) << message;
    EXPECT_NE(message.find("layer 'loss'"), std::string::npos) << message;
    EXPECT_NE(message.find("bottom index 1"), std::string::npos) << message;
  }
}

TEST(InsertSplitsTest, BottomProducedOnlyLaterIsUnknown) {
  EXPECT_THROW(Split(R"(
      layer { name: "early" type: "Silence" bottom: "x" }
      layer { name: "in" type: "Input" top: "x" }
    )"),
               Error);
}

TEST(InsertSplitsTest, NameHelpersFollowBvlc) {
  EXPECT_EQ(SplitLayerName("conv1", "conv1", 0), "conv1_conv1_0_split");
  EXPECT_EQ(SplitBlobName("data", "label", 1, 3), "label_data_1_split_3");
  LayerParameter split;
  split.add_top("stale");
  ConfigureSplitLayer("ip", "fc", 2, 2, 0, &split);
  ExpectNet(
      [&] {
        NetParameter net;
        *net.add_layer() = split;
        return net;
      }(),
      R"(layer { name: "fc_ip_2_split" type: "Split" bottom: "fc"
                  top: "fc_ip_2_split_0" top: "fc_ip_2_split_1" })");
}

}  // namespace caffe
