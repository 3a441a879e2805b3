// Upgrading nets and solvers written for older Caffe: deprecated input fields become an Input layer
// at the front, data layers' deprecated transform fields move to transform_param, BatchNorm param
// specs are kept with zero multipliers, solver_type becomes type, and V0/V1 nets become current
// ones. The published nets that need an upgrade are checked against BVLC's own upgrade output.
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

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

void ExpectNet(const NetParameter& actual, const std::string& expected_text) {
  EXPECT_EQ(actual.DebugString(), ParseNet(expected_text).DebugString());
}

}  // namespace

class UpgradeProtoTest : public ::testing::Test {
 protected:
  UpgradeProtoTest() : dir_(MakeTempDir("caffe_test_upgrade")) {}
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(UpgradeProtoTest, InputDimsBecomeAnInputLayerAtTheFront) {
  NetParameter net = ParseNet(R"(
    name: "Deploy"
    input: "data" input_dim: 10 input_dim: 3 input_dim: 227 input_dim: 227
    input: "rois" input_dim: 5 input_dim: 1 input_dim: 1 input_dim: 1
    layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1" }
    layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
  )");
  EXPECT_TRUE(NetNeedsUpgrade(net));
  EXPECT_TRUE(UpgradeNetAsNeeded("deploy.prototxt", &net));
  ExpectNet(net, R"(
    name: "Deploy"
    layer { name: "input" type: "Input" top: "data" top: "rois"
      input_param { shape { dim: 10 dim: 3 dim: 227 dim: 227 } shape { dim: 5 dim: 1 dim: 1 dim: 1 } } }
    layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1" }
    layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
  )");
  EXPECT_FALSE(NetNeedsUpgrade(net));
}

TEST_F(UpgradeProtoTest, InputShapesAreCopiedWithAnyNumberOfAxes) {
  NetParameter net = ParseNet(R"(
    input: "volume" input_shape { dim: 1 dim: 1 dim: 64 dim: 64 dim: 64 }
    input: "flag" input_shape { dim: 2 }
    layer { name: "s" type: "Silence" bottom: "volume" bottom: "flag" }
  )");
  UpgradeNetInput(&net);
  ExpectNet(net, R"(
    layer { name: "input" type: "Input" top: "volume" top: "flag"
      input_param { shape { dim: 1 dim: 1 dim: 64 dim: 64 dim: 64 } shape { dim: 2 } } }
    layer { name: "s" type: "Silence" bottom: "volume" bottom: "flag" }
  )");
}

TEST_F(UpgradeProtoTest, InputNamesWithoutShapesAreDropped) {
  // Legacy caffemodels list the inputs by name only: there is nothing to make a layer from.
  NetParameter net = ParseNet(R"(
    input: "data"
    layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip" }
  )");
  EXPECT_TRUE(NetNeedsInputUpgrade(net));
  UpgradeNetInput(&net);
  ExpectNet(net, R"(layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip" })");
}

TEST_F(UpgradeProtoTest, InputDimCountMustMatchTheInputs) {
  NetParameter three_dims = ParseNet(R"(input: "data" input_dim: 1 input_dim: 3 input_dim: 8)");
  std::string message = ErrorOf([&] { UpgradeNetInput(&three_dims); });
  EXPECT_NE(message.find("input_dim needs 4 values"), std::string::npos) << message;
  EXPECT_NE(message.find("got 3"), std::string::npos) << message;
  NetParameter two_shapes = ParseNet(R"(
    input: "data" input_shape { dim: 1 } input_shape { dim: 2 })");
  message = ErrorOf([&] { UpgradeNetInput(&two_shapes); });
  EXPECT_NE(message.find("1 inputs but 2 input_shape"), std::string::npos) << message;
}

TEST_F(UpgradeProtoTest, DeprecatedDataFieldsMoveToTransformParam) {
  NetParameter net = ParseNet(R"(
    layer { name: "d" type: "Data" top: "data"
      data_param { source: "train_lmdb" batch_size: 64 backend: LMDB
                   scale: 0.00390625 mean_file: "mean.binaryproto" crop_size: 227 mirror: true } }
    layer { name: "i" type: "ImageData" top: "img"
      image_data_param { source: "list.txt" scale: 2 }
      transform_param { mean_value: 104 } }
    layer { name: "w" type: "WindowData" top: "win"
      window_data_param { source: "windows.txt" crop_size: 5 mirror: false } }
    layer { name: "c" type: "Convolution" bottom: "data" top: "c" }
  )");
  EXPECT_TRUE(NetNeedsDataUpgrade(net));
  EXPECT_TRUE(UpgradeNetAsNeeded("train.prototxt", &net));
  ExpectNet(net, R"(
    layer { name: "d" type: "Data" top: "data"
      data_param { source: "train_lmdb" batch_size: 64 backend: LMDB }
      transform_param { scale: 0.00390625 mean_file: "mean.binaryproto" crop_size: 227
                        mirror: true } }
    layer { name: "i" type: "ImageData" top: "img"
      image_data_param { source: "list.txt" }
      transform_param { scale: 2 mean_value: 104 } }
    layer { name: "w" type: "WindowData" top: "win"
      window_data_param { source: "windows.txt" }
      transform_param { crop_size: 5 mirror: false } }
    layer { name: "c" type: "Convolution" bottom: "data" top: "c" }
  )");
  EXPECT_FALSE(NetNeedsDataUpgrade(net));
}

TEST_F(UpgradeProtoTest, BatchNormParamSpecsGetZeroMultipliersAndKeepTheirNames) {
  NetParameter net = ParseNet(R"(
    layer { name: "conv" type: "Convolution" bottom: "x" top: "y"
      param { lr_mult: 1 } param { lr_mult: 2 decay_mult: 0 } }
    layer { name: "bn" type: "BatchNorm" bottom: "y" top: "y"
      param { name: "mean" lr_mult: 0 } param { name: "var" lr_mult: 0 }
      param { name: "factor" lr_mult: 1 decay_mult: 1 }
      batch_norm_param { use_global_stats: true } }
    layer { name: "bn_one_spec" type: "BatchNorm" bottom: "y" top: "z"
      param { lr_mult: 0 } }
  )");
  EXPECT_TRUE(NetNeedsBatchNormUpgrade(net));
  EXPECT_TRUE(UpgradeNetAsNeeded("bn.prototxt", &net));
  // As BVLC's upgrade tool writes them: the names (which share statistics) stay.
  ExpectNet(net, R"(
    layer { name: "conv" type: "Convolution" bottom: "x" top: "y"
      param { lr_mult: 1 } param { lr_mult: 2 decay_mult: 0 } }
    layer { name: "bn" type: "BatchNorm" bottom: "y" top: "y"
      param { name: "mean" lr_mult: 0 decay_mult: 0 } param { name: "var" lr_mult: 0 decay_mult: 0 }
      param { name: "factor" lr_mult: 0 decay_mult: 0 }
      batch_norm_param { use_global_stats: true } }
    layer { name: "bn_one_spec" type: "BatchNorm" bottom: "y" top: "z"
      param { lr_mult: 0 } }
  )");
  // The upgraded net needs no further upgrade.
  EXPECT_FALSE(NetNeedsBatchNormUpgrade(net));
  EXPECT_FALSE(NetNeedsUpgrade(net));
}

TEST_F(UpgradeProtoTest, CurrentNetsAreLeftExactlyAsTheyAre) {
  const NetParameter original = ParseNet(R"(
    name: "Current" force_backward: true
    layer { name: "in" type: "Input" top: "data" input_param { shape { dim: 1 dim: 3 } } }
    layer { name: "d" type: "Data" top: "x" data_param { source: "db" batch_size: 1 }
            transform_param { scale: 0.5 } }
    layer { name: "bn" type: "BatchNorm" bottom: "data" top: "data" }
    layer { name: "bn2" type: "BatchNorm" bottom: "data" top: "bn2"
      param { lr_mult: 0 decay_mult: 0 } param { lr_mult: 0 decay_mult: 0 }
      param { lr_mult: 0 decay_mult: 0 } }
  )");
  NetParameter net = original;
  EXPECT_FALSE(NetNeedsUpgrade(net));
  EXPECT_FALSE(UpgradeNetAsNeeded("current.prototxt", &net));
  EXPECT_EQ(net.SerializeAsString(), original.SerializeAsString());
}

TEST_F(UpgradeProtoTest, NetFilesAreUpgradedOnReadingTextOrBinary) {
  NetParameter old_format = ParseNet(R"(
    input: "data" input_dim: 1 input_dim: 2 input_dim: 3 input_dim: 4
    layer { name: "relu" type: "ReLU" bottom: "data" top: "data" })");
  const std::string text_path = dir_ + "/old.prototxt";
  const std::string binary_path = dir_ + "/old.caffemodel";
  WriteProtoToTextFile(old_format, text_path);
  WriteProtoToBinaryFile(old_format, binary_path);
  NetParameter from_text, from_binary;
  ReadNetParamsFromTextFile(text_path, &from_text);
  ReadNetParamsFromBinaryFile(binary_path, &from_binary);
  for (const NetParameter* net : {&from_text, &from_binary}) {
    EXPECT_EQ(net->input_size(), 0);
    ASSERT_EQ(net->layer_size(), 2);
    EXPECT_EQ(net->layer(0).type(), "Input");
  }
  NetParameter missing;
  const std::string message =
      ErrorOf([&] { ReadNetParamsFromTextFile(dir_ + "/absent.prototxt", &missing); });
  EXPECT_NE(message.find(dir_ + "/absent.prototxt"), std::string::npos) << message;
}

TEST_F(UpgradeProtoTest, SolverTypeEnumBecomesTheTypeString) {
  const std::pair<const char*, const char*> cases[] = {
      {"SGD", "SGD"},         {"NESTEROV", "Nesterov"}, {"ADAGRAD", "AdaGrad"},
      {"RMSPROP", "RMSProp"}, {"ADADELTA", "AdaDelta"}, {"ADAM", "Adam"}};
  for (const auto& c : cases) {
    SolverParameter solver;
    ParseProtoFromText(std::string("base_lr: 0.1 solver_type: ") + c.first, "solver", &solver);
    EXPECT_TRUE(SolverNeedsTypeUpgrade(solver));
    EXPECT_TRUE(UpgradeSolverAsNeeded("solver.prototxt", &solver));
    EXPECT_EQ(solver.type(), c.second);
    EXPECT_FALSE(solver.has_solver_type());
    EXPECT_FLOAT_EQ(solver.base_lr(), 0.1f);
  }
}

TEST_F(UpgradeProtoTest, SolverWithBothTypeFieldsIsRefused) {
  SolverParameter solver;
  ParseProtoFromText("solver_type: ADAM type: 'Adam'", "solver", &solver);
  const std::string message = ErrorOf([&] { UpgradeSolverType(&solver); });
  EXPECT_NE(message.find("solver_type"), std::string::npos) << message;
  EXPECT_NE(message.find("keep only type"), std::string::npos) << message;
}

TEST_F(UpgradeProtoTest, CurrentSolverIsNotTouched) {
  SolverParameter solver;
  ParseProtoFromText("type: 'Adam' base_lr: 0.001", "solver", &solver);
  const std::string before = solver.SerializeAsString();
  EXPECT_FALSE(UpgradeSolverAsNeeded("solver.prototxt", &solver));
  EXPECT_EQ(solver.SerializeAsString(), before);
  const std::string path = Write("solver.prototxt", "solver_type: RMSPROP rms_decay: 0.9");
  SolverParameter read;
  ReadSolverParamsFromTextFile(path, &read);
  EXPECT_EQ(read.type(), "RMSProp");
}

// Published nets that use the deprecated input fields or BatchNorm params, upgraded here and by
// BVLC's upgrade_net_proto_text (the *.upgraded.prototxt beside each): the results must agree.
TEST_F(UpgradeProtoTest, PublishedNetsUpgradeExactlyAsBvlcDoes) {
  CAFFE_REQUIRE_SHARED_DIR();
  const std::string root = SharedDir() + "/reference/published/";
  const char* nets[] = {"resnet50/ResNet-50-deploy",     "squeezenet_v1.0/deploy",
                        "mobilenet_v1/mobilenet_deploy", "inception_v3/deploy_inception-v3",
                        "heartseg_3d_dsn/deploy",        "vnet_3d/test_noPooling_ResNet_cinque"};
  for (const char* net : nets) {
    const std::string original = root + net + ".prototxt";
    const std::string upgraded = root + net + ".upgraded.prototxt";
    if (!FileExists(original) || !FileExists(upgraded)) {
      ADD_FAILURE() << "missing reference file for " << net;
      continue;
    }
    NetParameter ours, bvlc;
    ReadNetParamsFromTextFile(original, &ours);
    ReadProtoFromTextFile(upgraded, &bvlc);
    EXPECT_FALSE(NetNeedsUpgrade(bvlc)) << net;
    EXPECT_EQ(ours.DebugString(), bvlc.DebugString()) << net;
  }
}

}  // namespace caffe
