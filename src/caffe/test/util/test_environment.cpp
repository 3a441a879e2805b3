// The environment variables: docs/ENVIRONMENT.md's table lists exactly the library's, each
// reader takes its documented values and names the variable when given another.
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "caffe/test/scoped_env.hpp"
#include "caffe/test/test_caffe_main.hpp"
#include "caffe/util/environment.hpp"
#include "caffe/util/error.hpp"

namespace caffe {
namespace {

// The variable names in the first column of docs/ENVIRONMENT.md's library table (the rows before
// the first blank line that follows it).
std::set<std::string> DocumentedVariables() {
  std::ifstream file(SourceDir() + "/docs/ENVIRONMENT.md");
  EXPECT_TRUE(file.good()) << "docs/ENVIRONMENT.md is missing";
  std::set<std::string> names;
  std::string line;
  bool in_table = false;
  while (std::getline(file, line)) {
    if (line.rfind("| variable", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (line.empty() || line[0] != '|') break;
    const size_t open = line.find('`'), close = line.find('`', open + 1);
    if (open != std::string::npos && close != std::string::npos) {
      names.insert(line.substr(open + 1, close - open - 1));
    }
  }
  return names;
}

std::string ErrorOf(void (*read)()) {
  try {
    read();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(EnvironmentTest, TheDocsTableListsEveryVariableTheLibraryReads) {
  std::set<std::string> code;
  for (const EnvironmentVariable& variable : EnvironmentVariables()) code.insert(variable.name);
  EXPECT_EQ(DocumentedVariables(), code);
}

TEST(EnvironmentTest, SwitchesAreOnByDefaultAndTakeZeroOrOne) {
  {
    ScopedEnv unset("CAFFE_FUSION", nullptr);
    EXPECT_TRUE(FusionFromEnvironment());
  }
  {
    ScopedEnv off("CAFFE_FUSION", "0");
    EXPECT_FALSE(FusionFromEnvironment());
  }
  ScopedEnv bad("CAFFE_FLUSH_DENORMALS", "yes");
  const std::string message = ErrorOf([] { FlushDenormalsFromEnvironment(); });
  EXPECT_NE(message.find("CAFFE_FLUSH_DENORMALS is \"yes\""), std::string::npos) << message;
  EXPECT_NE(message.find("expected 1"), std::string::npos) << message;
}

TEST(EnvironmentTest, CpuEngineIsUpperCasedAndUnknownValuesCountAsUnset) {
  {
    ScopedEnv caffe("CAFFE_CPU_ENGINE", "caffe");
    EXPECT_EQ(CpuEngineFromEnvironment(), "CAFFE");
  }
  {
    ScopedEnv dnnl("CAFFE_CPU_ENGINE", "Dnnl");
    EXPECT_EQ(CpuEngineFromEnvironment(), "DNNL");
  }
  ScopedEnv other("CAFFE_CPU_ENGINE", "fast");
  EXPECT_EQ(CpuEngineFromEnvironment(), "");
}

TEST(EnvironmentTest, CuDNNSettingsTakeTheirValuesAndNameTheVariableOtherwise) {
  {
    ScopedEnv unset("CAFFE_CUDNN_WORKSPACE_MB", nullptr);
    EXPECT_EQ(CuDNNWorkspaceFromEnvironment(), size_t(64) << 20);
  }
  {
    ScopedEnv eight("CAFFE_CUDNN_WORKSPACE_MB", "8");
    EXPECT_EQ(CuDNNWorkspaceFromEnvironment(), size_t(8) << 20);
  }
  {
    ScopedEnv bad("CAFFE_CUDNN_WORKSPACE_MB", "-3");
    EXPECT_NE(ErrorOf([] { CuDNNWorkspaceFromEnvironment(); }).find("CAFFE_CUDNN_WORKSPACE_MB"),
              std::string::npos);
  }
  {
    ScopedEnv time("CAFFE_CUDNN_ALGO", "time");
    EXPECT_EQ(CuDNNAlgoFromEnvironment(), "time");
  }
  ScopedEnv bad("CAFFE_CUDNN_ALGO", "fastest");
  EXPECT_NE(ErrorOf([] { CuDNNAlgoFromEnvironment(); }).find("expected heuristic or time"),
            std::string::npos);
}

TEST(EnvironmentTest, TextVariablesAreNullWhenUnset) {
  ScopedEnv unset("CAFFE_GPU_MEM_LIMIT", nullptr);
  EXPECT_EQ(GpuMemLimitFromEnvironment(), nullptr);
  ScopedEnv set("OPENBLAS_CORETYPE", "Haswell");
  EXPECT_STREQ(BlasCoreTypeFromEnvironment(), "Haswell");
}

}  // namespace
}  // namespace caffe
