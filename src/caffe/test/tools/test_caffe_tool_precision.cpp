// `caffe ... -precision`: a bad value is one line and a non-zero exit; a CPU without bf16
// instructions (here: hidden from oneDNN by DNNL_MAX_CPU_ISA) gets one warning naming why and
// the layers it concerns, and trains in fp32; one with them trains in bf16 and says so.
#include <fstream>
#include <string>

#include "caffe/kernels/bf16_gemm.hpp"
#include "caffe/test/caffe_tool_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

const char kNet[] = R"(
name: "PrecisionNet"
layer { name: "data" type: "DummyData" top: "data" top: "label"
  dummy_data_param { shape { dim: 64 dim: 8 } shape { dim: 64 }
    data_filler { type: "gaussian" } data_filler { type: "constant" value: 1 } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
  inner_product_param { num_output: 3 weight_filler { type: "xavier" } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
)";

class CaffeToolPrecisionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("caffe_tool_precision");
    net_ = dir_ + "/net.prototxt";
    std::ofstream(net_) << kNet;
    solver_ = dir_ + "/solver.prototxt";
    std::ofstream(solver_) << "net: \"" << net_ << "\"\nbase_lr: 0.1\nlr_policy: \"fixed\"\n"
                           << "max_iter: 4\nsnapshot_prefix: \"" << dir_
                           << "/run\"\nsolver_mode: CPU\n";
  }
  std::string dir_, net_, solver_;
};

}  // namespace

TEST_F(CaffeToolPrecisionTest, UnknownPrecisionIsOneLineAndFails) {
  const CommandResult result = RunCaffe("time -model " + net_ + " -precision half");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(
      result.output.find("caffe time: error: -precision is \"half\"; expected fp32, bf16 or fp16"),
      std::string::npos)
      << result.output;
  EXPECT_EQ(result.output.find("Check failed"), std::string::npos) << result.output;
}

TEST_F(CaffeToolPrecisionTest, NoBf16InstructionsWarnsOnceAndRunsInFp32) {
  const CommandResult result = RunCaffe("time -model " + net_ + " -precision bf16 -iterations 2",
                                        "DNNL_MAX_CPU_ISA=AVX512_CORE");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  const std::string warning = "Net 'PrecisionNet': 16-bit arithmetic asked for, but this ";
  const size_t at = result.output.find(warning);
  ASSERT_NE(at, std::string::npos) << result.output;
  EXPECT_EQ(result.output.find(warning, at + 1), std::string::npos) << "said twice";
  EXPECT_NE(result.output.find("1 layers that have it compute in fp32 (ip)"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("no layer computes in bf16"), std::string::npos) << result.output;
}

TEST_F(CaffeToolPrecisionTest, TrainsInBf16WhereTheCpuCan) {
  if (!CpuHasBf16Math()) GTEST_SKIP() << "no bf16 arithmetic here: " << CpuBf16Explanation();
  const CommandResult result = RunCaffe("train -solver " + solver_ + " -precision bf16");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("Net 'PrecisionNet': bf16 arithmetic in 1 layers (ip)"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("Optimization Done."), std::string::npos) << result.output;
}

}  // namespace caffe
