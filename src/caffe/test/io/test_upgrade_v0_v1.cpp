// Upgrading the two oldest net formats: V0 (string types, padding layers) and V1 (enum types,
// blobs_lr/weight_decay), checked field by field and, on the published V0/V1 nets, against the
// output of BVLC's own upgrade_net_proto_text.
#include <functional>
#include <string>

#include "caffe/io/io.hpp"
#include "caffe/io/upgrade_proto.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

NetParameter ParseNet(const std::string& text) {
  NetParameter param;
  ParseProtoFromText(text, "test net", &param);
  return param;
}

}  // namespace

class UpgradeV0V1Test : public ::testing::Test {};

TEST_F(UpgradeV0V1Test, V1NetsBecomeLayerEntriesWithParamSpecs) {
  NetParameter net = ParseNet(R"(
    name: "V1"
    layers { name: "conv1" type: CONVOLUTION bottom: "data" top: "conv1"
      blobs_lr: 1 blobs_lr: 2 weight_decay: 1 weight_decay: 0 param: "w" param: "b"
      convolution_param { num_output: 4 kernel_size: 3 } include: { phase: TRAIN } }
    layers { name: "loss" type: SOFTMAX_LOSS bottom: "conv1" bottom: "label" top: "loss"
      loss_weight: 2 })");
  EXPECT_TRUE(NetNeedsV1ToV2Upgrade(net));
  EXPECT_FALSE(NetNeedsV0ToV1Upgrade(net));
  bool compatible = false;
  EXPECT_TRUE(UpgradeNetAsNeeded("v1.prototxt", &net, &compatible));
  EXPECT_TRUE(compatible);
  ASSERT_EQ(net.layer_size(), 2);
  EXPECT_EQ(net.layers_size(), 0);
  const LayerParameter& conv = net.layer(0);
  EXPECT_EQ(conv.type(), "Convolution");
  ASSERT_EQ(conv.param_size(), 2);
  EXPECT_EQ(conv.param(0).name(), "w");
  EXPECT_FLOAT_EQ(conv.param(1).lr_mult(), 2);
  EXPECT_FLOAT_EQ(conv.param(1).decay_mult(), 0);
  EXPECT_EQ(conv.convolution_param().num_output(), 4u);
  EXPECT_EQ(conv.include(0).phase(), TRAIN);
  EXPECT_EQ(net.layer(1).type(), "SoftmaxWithLoss");
  EXPECT_FLOAT_EQ(net.layer(1).loss_weight(0), 2);
}

TEST_F(UpgradeV0V1Test, V0NetsFoldPaddingLayersIntoTheNextConvolution) {
  NetParameter net = ParseNet(R"(
    name: "V0" input: "data" input_dim: 1 input_dim: 3 input_dim: 8 input_dim: 8
    layers { layer { name: "pad1" type: "padding" pad: 2 } bottom: "data" top: "pad1" }
    layers { layer { name: "conv1" type: "conv" num_output: 4 kernelsize: 5 stride: 1
                     blobs_lr: 1 blobs_lr: 2 } bottom: "pad1" top: "conv1" }
    layers { layer { name: "pool1" type: "pool" pool: MAX kernelsize: 2 stride: 2 }
             bottom: "conv1" top: "pool1" })");
  EXPECT_TRUE(NetNeedsV0ToV1Upgrade(net));
  EXPECT_TRUE(UpgradeNetAsNeeded("v0.prototxt", &net));
  ASSERT_EQ(net.layer_size(), 3);  // the Input layer, conv1, pool1: the padding layer is gone
  EXPECT_EQ(net.layer(0).type(), "Input");
  const LayerParameter& conv = net.layer(1);
  EXPECT_EQ(conv.type(), "Convolution");
  EXPECT_EQ(conv.bottom(0), "data");
  ASSERT_EQ(conv.convolution_param().pad_size(), 1);
  EXPECT_EQ(conv.convolution_param().pad(0), 2u);
  EXPECT_FLOAT_EQ(conv.param(1).lr_mult(), 2);
  EXPECT_EQ(net.layer(2).pooling_param().pool(), PoolingParameter_PoolMethod_MAX);
}

TEST_F(UpgradeV0V1Test, V0FieldsWithoutAPlaceAreReportedAsIncompatible) {
  NetParameter net = ParseNet(R"(
    input: "x" layers { layer { name: "relu1" type: "relu" num_output: 3 } bottom: "x" top: "x" })");
  bool compatible = true;
  UpgradeNetAsNeeded("v0.prototxt", &net, &compatible);
  EXPECT_FALSE(compatible);
  EXPECT_EQ(net.layer(0).type(), "ReLU");
}

TEST_F(UpgradeV0V1Test, UnknownV0LayerTypeIsAnErrorNamingTheFile) {
  NetParameter net = ParseNet(R"(layers { layer { name: "x" type: "frobnicate" } })");
  const std::string message = ErrorOf([&] { UpgradeNetAsNeeded("old.prototxt", &net); });
  EXPECT_EQ(message.rfind("old.prototxt: ", 0), 0u) << message;
  EXPECT_NE(message.find("\"frobnicate\""), std::string::npos) << message;
}

// The V0 and V1 published nets, upgraded here and by BVLC's upgrade_net_proto_text.
TEST_F(UpgradeV0V1Test, PublishedV0AndV1NetsUpgradeExactlyAsBvlcDoes) {
  CAFFE_REQUIRE_SHARED_DIR();
  const std::string root = SharedDir() + "/reference/published/";
  for (const char* net : {"caffenet_v0/imagenet_deploy", "vgg16_v1/VGG_ILSVRC_16_layers_deploy",
                          "agenet_v1/deploy", "agenet_v1/train_val_test_fold_is_0"}) {
    NetParameter ours, bvlc;
    ReadNetParamsFromTextFile(root + net + ".prototxt", &ours);
    ReadProtoFromTextFile(root + net + ".upgraded.prototxt", &bvlc);
    EXPECT_EQ(ours.DebugString(), bvlc.DebugString()) << net;
  }
}

}  // namespace caffe
