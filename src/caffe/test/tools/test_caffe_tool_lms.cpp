// The LMS flags of the `caffe` command (docs/LMS.md): help text, one clear error line for each
// bad value, and on a CPU run a note that they apply to GPU runs.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include "caffe/test/caffe_tool_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

const char kNet[] = R"(
name: "LmsToolNet"
layer { name: "data" type: "DummyData" top: "data" top: "label"
  dummy_data_param { shape { dim: 4 dim: 8 } shape { dim: 4 }
    data_filler { type: "gaussian" } data_filler { type: "constant" value: 1 } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
  inner_product_param { num_output: 3 weight_filler { type: "xavier" } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
)";

}  // namespace

class CaffeToolLmsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    net_ = MakeTempDir("caffe_tool_lms") + "/net.prototxt";
    std::ofstream(net_) << kNet;
  }
  std::string Time(const std::string& flags) {
    return "time -model " + net_ + " -iterations 1 " + flags;
  }
  std::string net_;
};

TEST_F(CaffeToolLmsTest, HelpSaysMinusOneIsOffAndZeroIsEveryBuffer) {
  const CommandResult result = RunCaffe("-helpon=caffe");
  EXPECT_NE(result.output.find("-1 (default): off; 0: every buffer"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("-gpu_mem_limit"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("-lms_frac"), std::string::npos) << result.output;
}

TEST_F(CaffeToolLmsTest, NonNumericValuesFailNamingTheFlag) {
  for (const char* flags : {"-lms abc", "-lms 1.5", "-lms_frac abc", "-lms_prefetch x"}) {
    const CommandResult result = RunCaffe(Time(flags));
    EXPECT_NE(result.exit_code, 0) << flags << "\n" << result.output;
    const std::string flag = std::string(flags).substr(1, std::string(flags).find(' ') - 1);
    EXPECT_NE(result.output.find("flag '" + flag + "'"), std::string::npos) << flags << "\n"
                                                                            << result.output;
    EXPECT_NE(result.output.find("illegal value"), std::string::npos) << result.output;
  }
}

TEST_F(CaffeToolLmsTest, OutOfRangeValuesAreOneClearError) {
  ExpectOneClearError(RunCaffe(Time("-lms -2")), "-lms -2: expected -1 (off), 0 (every buffer)");
  ExpectOneClearError(RunCaffe(Time("-lms 0 -lms_frac 1.5")),
                      "-lms_frac 1.5: expected a fraction of the GPU memory budget in [0, 1]");
  ExpectOneClearError(RunCaffe(Time("-lms 0 -lms_frac -0.1")), "-lms_frac -0.1");
  ExpectOneClearError(RunCaffe(Time("-lms_prefetch -1")), "-lms_prefetch -1");
  ExpectOneClearError(RunCaffe(Time("-gpu_mem_limit lots")),
                      "-gpu_mem_limit 'lots': expected a size in bytes");
  ExpectOneClearError(RunCaffe(Time(""), "CAFFE_GPU_MEM_LIMIT=16Q"), "CAFFE_GPU_MEM_LIMIT '16Q'");
  ExpectOneClearError(RunCaffe("test -model " + net_ + " -weights x -lms_frac 2"), "-lms_frac 2");
}

TEST_F(CaffeToolLmsTest, OnACpuRunTheFlagsAreSaidToApplyToGpuRuns) {
  const CommandResult result = RunCaffe(Time("-lms 0 -lms_frac 0.9 -gpu_mem_limit 16G"));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("[LMS] -lms, -lms_frac and -gpu_mem_limit apply to GPU runs"),
            std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("Average Forward pass"), std::string::npos) << result.output;
  // Without the flags nothing is said.
  const CommandResult plain = RunCaffe(Time(""));
  EXPECT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(plain.output.find("[LMS]"), std::string::npos) << plain.output;
}

}  // namespace caffe
