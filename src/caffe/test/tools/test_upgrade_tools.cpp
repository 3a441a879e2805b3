// The upgrade tools (upgrade_net_proto_text, upgrade_net_proto_binary, upgrade_solver_proto_text):
// an old net and an old solver train as they are, the tools write them in the current format, and
// the rewritten files train to bit-identical weights.
#include <string>
#include <vector>

#include "caffe/io/io.hpp"
#include "caffe/io/upgrade_proto.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

// A small V1-format classifier, inputs as deprecated input fields (V1 has no Input layer).
const char kV1Net[] = R"(
name: "V1Net"
input: "data"
input_shape { dim: 4 dim: 1 dim: 8 dim: 8 }
input: "label"
input_shape { dim: 4 }
layers { name: "conv1" type: CONVOLUTION bottom: "data" top: "conv1"
  blobs_lr: 1 blobs_lr: 2 weight_decay: 1 weight_decay: 0
  convolution_param { num_output: 3 kernel_size: 3 weight_filler { type: "gaussian" std: 0.3 } } }
layers { name: "relu1" type: RELU bottom: "conv1" top: "conv1" }
layers { name: "pool1" type: POOLING bottom: "conv1" top: "pool1"
  pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layers { name: "ip1" type: INNER_PRODUCT bottom: "pool1" top: "ip1"
  blobs_lr: 1 blobs_lr: 2
  inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.3 } } }
layers { name: "loss" type: SOFTMAX_LOSS bottom: "ip1" bottom: "label" top: "loss" }
)";

std::string OldSolver(const std::string& net, const std::string& prefix) {
  return "net: \"" + net +
         "\"\nsolver_type: NESTEROV\nbase_lr: 0.05\nmomentum: 0.9\n"
         "lr_policy: \"fixed\"\nmax_iter: 4\nrandom_seed: 7\nsolver_mode: CPU\n"
         "snapshot_prefix: \"" +
         prefix + "\"\n";
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

NetParameter Weights(const std::string& path) {
  NetParameter weights;
  ReadProtoFromBinaryFile(path, &weights);
  return weights;
}

}  // namespace

class UpgradeToolsTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir("upgrade_tools"); }
  ToolResult Tool(const std::string& tool, const std::vector<std::string>& args) {
    return RunTool(tool, args, dir_);
  }
  // Trains the old net with the old solver, upgrades both, trains again: same weights.
  void CheckOldAndUpgradedTrainIdentically(const std::string& old_net) {
    Write(dir_ + "/old_solver.prototxt", OldSolver(old_net, dir_ + "/old"));
    ToolResult old_run = Tool("caffe", {"train", "-solver", dir_ + "/old_solver.prototxt"});
    ASSERT_EQ(old_run.exit_code, 0) << old_run.err;

    const std::string new_net = dir_ + "/new_net.prototxt";
    ToolResult net_upgrade = Tool("upgrade_net_proto_text", {old_net, new_net});
    ASSERT_EQ(net_upgrade.exit_code, 0) << net_upgrade.err;
    NetParameter upgraded;
    ReadProtoFromTextFile(new_net, &upgraded);
    EXPECT_FALSE(NetNeedsUpgrade(upgraded));
    EXPECT_EQ(upgraded.layers_size(), 0);

    Write(dir_ + "/old_solver2.prototxt", OldSolver(new_net, dir_ + "/new"));
    const std::string new_solver = dir_ + "/new_solver.prototxt";
    ToolResult solver_upgrade =
        Tool("upgrade_solver_proto_text", {dir_ + "/old_solver2.prototxt", new_solver});
    ASSERT_EQ(solver_upgrade.exit_code, 0) << solver_upgrade.err;
    SolverParameter solver;
    ReadProtoFromTextFile(new_solver, &solver);
    EXPECT_EQ(solver.type(), "Nesterov");
    EXPECT_FALSE(solver.has_solver_type());

    ToolResult new_run = Tool("caffe", {"train", "-solver", new_solver});
    ASSERT_EQ(new_run.exit_code, 0) << new_run.err;
    const NetParameter a = Weights(dir_ + "/old_iter_4.caffemodel");
    const NetParameter b = Weights(dir_ + "/new_iter_4.caffemodel");
    ASSERT_EQ(a.layer_size(), b.layer_size());
    EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString());
  }
  std::string dir_;
};

TEST_F(UpgradeToolsTest, V1NetAndOldSolverTrainAndTheirUpgradesTrainIdentically) {
  Write(dir_ + "/v1_net.prototxt", kV1Net);
  CheckOldAndUpgradedTrainIdentically(dir_ + "/v1_net.prototxt");
}

TEST_F(UpgradeToolsTest, PublishedV1NetTrainsAndItsUpgradeTrainsIdentically) {
  CAFFE_REQUIRE_SHARED_DIR();
  CheckOldAndUpgradedTrainIdentically(
      SharedDir() + "/reference/published/agenet_v1/train_val_test_fold_is_0.input.prototxt");
}

TEST_F(UpgradeToolsTest, BinaryUpgradeKeepsTheWeights) {
  // A V1 binary net with one weight blob, as old .caffemodel files are.
  NetParameter v1;
  ParseProtoFromText(R"(layers { name: "ip" type: INNER_PRODUCT
      blobs { num: 1 channels: 1 height: 2 width: 3 data: 1 data: 2 data: 3 data: 4 data: 5 data: 6 }
      inner_product_param { num_output: 2 bias_term: false } })",
                     "v1", &v1);
  WriteProtoToBinaryFile(v1, dir_ + "/old.caffemodel");
  ToolResult result =
      Tool("upgrade_net_proto_binary", {dir_ + "/old.caffemodel", dir_ + "/new.caffemodel"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const NetParameter upgraded = Weights(dir_ + "/new.caffemodel");
  ASSERT_EQ(upgraded.layer_size(), 1);
  EXPECT_EQ(upgraded.layer(0).type(), "InnerProduct");
  ASSERT_EQ(upgraded.layer(0).blobs_size(), 1);
  EXPECT_EQ(upgraded.layer(0).blobs(0).data(5), 6);
}

TEST_F(UpgradeToolsTest, BadArgumentsAndFilesFailWithOneLine) {
  ToolResult usage = Tool("upgrade_net_proto_text", {"only_one_argument"});
  EXPECT_NE(usage.exit_code, 0);
  EXPECT_NE(usage.err.find("usage: upgrade_net_proto_text"), std::string::npos) << usage.err;
  ToolResult missing = Tool("upgrade_net_proto_text", {dir_ + "/absent.prototxt", dir_ + "/x"});
  EXPECT_NE(missing.exit_code, 0);
  const std::vector<std::string> lines = NonLogLines(missing.err);
  ASSERT_EQ(lines.size(), 1u) << missing.err;
  EXPECT_NE(lines[0].find(dir_ + "/absent.prototxt"), std::string::npos) << lines[0];
  ToolResult truncated =
      Tool("upgrade_net_proto_binary", {dir_ + "/absent.caffemodel", dir_ + "/y"});
  EXPECT_NE(truncated.exit_code, 0);
}

}  // namespace caffe
