// The `caffe` command as users run it: BVLC's commands and flags, BVLC's log lines, and for every
// user mistake one clear line and a non-zero exit (never a crash or a stack trace).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#ifndef CPU_ONLY
#include <cuda_runtime.h>
#endif

#include "caffe/diagnostics/reference_check.hpp"
#include "caffe/io/hdf5.hpp"
#include "caffe/io/io.hpp"
#include "caffe/net.hpp"
#include "caffe/test/caffe_tool_test_util.hpp"
#include "caffe/test/lmdb_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"
#include "caffe/test/timeline_test_util.hpp"

namespace caffe {

namespace {

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path);
  out << content;
}

const char kNet[] = R"(
name: "ToolNet"
layer { name: "data" type: "DummyData" top: "data" top: "label"
  dummy_data_param { shape { dim: 16 dim: 8 } shape { dim: 16 }
    data_filler { type: "gaussian" } data_filler { type: "constant" value: 1 } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
  inner_product_param { num_output: 3 weight_filler { type: "xavier" } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
layer { name: "accuracy" type: "Accuracy" bottom: "ip" bottom: "label" top: "accuracy"
  include { phase: TEST } }
)";

}  // namespace

class CaffeToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("caffe_tool");
    net_ = dir_ + "/net.prototxt";
    WriteFile(net_, kNet);
  }
  std::string Solver(int max_iter = 20) {
    const std::string path = dir_ + "/solver.prototxt";
    WriteFile(path, "net: \"" + net_ +
                        "\"\nbase_lr: 0.1\nlr_policy: \"fixed\"\n"
                        "test_iter: 2\ntest_interval: 10\ndisplay: 5\nmax_iter: " +
                        std::to_string(max_iter) + "\nsnapshot_prefix: \"" + dir_ +
                        "/tool\"\nsolver_mode: GPU\n");
    return path;
  }
  std::string dir_, net_;
};

TEST_F(CaffeToolTest, NoCommandPrintsUsageAndFails) {
  CommandResult result = RunCaffe("");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("usage: caffe <command> <args>"), std::string::npos);
  EXPECT_NE(result.output.find("train"), std::string::npos);
}

TEST_F(CaffeToolTest, UnknownCommandPrintsUsageAndFails) {
  CommandResult result = RunCaffe("trian -solver x");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("unknown command 'trian'"), std::string::npos) << result.output;
}

TEST_F(CaffeToolTest, UnknownFlagFails) {
  CommandResult result = RunCaffe("train -solverr x");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("solverr"), std::string::npos) << result.output;
}

TEST_F(CaffeToolTest, BadFlagValueFails) {
  CommandResult result = RunCaffe("time -model " + net_ + " -iterations abc");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.output.find("iterations"), std::string::npos) << result.output;
  ExpectOneClearError(RunCaffe("time -model " + net_ + " -iterations 0"), "-iterations");
  ExpectOneClearError(RunCaffe("time -model " + net_ + " -phase VAL"), "-phase 'VAL'");
  ExpectOneClearError(RunCaffe("train -solver " + Solver() + " -sigint_effect explode"),
                      "-sigint_effect");
}

TEST_F(CaffeToolTest, MissingFilesAreNamed) {
  ExpectOneClearError(RunCaffe("train -solver " + dir_ + "/missing_solver.prototxt"),
                      dir_ + "/missing_solver.prototxt");
  ExpectOneClearError(RunCaffe("time -model " + dir_ + "/missing_net.prototxt"),
                      dir_ + "/missing_net.prototxt");
  ExpectOneClearError(RunCaffe("test -model " + net_ + " -weights " + dir_ + "/missing.caffemodel"),
                      dir_ + "/missing.caffemodel");
}

TEST_F(CaffeToolTest, MalformedPrototxtNamesFileLineAndColumn) {
  const std::string bad = dir_ + "/bad.prototxt";
  WriteFile(bad, "name: \"bad\"\nlayer {\n  name: \"x\"\n  tpye: \"ReLU\"\n}\n");
  const CommandResult result = RunCaffe("time -model " + bad);
  ExpectOneClearError(result, bad + ":4:");
  EXPECT_NE(result.output.find("no field named \"tpye\""), std::string::npos) << result.output;
}

TEST_F(CaffeToolTest, UnknownLayerTypeNamesTypeAndLayer) {
  const std::string bad = dir_ + "/unknown.prototxt";
  WriteFile(bad,
            "layer { name: \"in\" type: \"Input\" top: \"x\" input_param { shape { dim: 1 } } }\n"
            "layer { name: \"act\" type: \"Relu\" bottom: \"x\" top: \"x\" }\n");
  ExpectOneClearError(RunCaffe("time -model " + bad), "unknown layer type \"Relu\" (layer 'act')");
}

// BVLC runs an in-place Pooling and computes wrong values; here it is one clear line.
TEST_F(CaffeToolTest, ALayerThatCannotRunInPlaceSaysSo) {
  const std::string bad = dir_ + "/in_place.prototxt";
  WriteFile(bad, R"(
    layer { name: "in" type: "Input" top: "x"
            input_param { shape { dim: 1 dim: 2 dim: 4 dim: 4 } } }
    layer { name: "pool1" type: "Pooling" bottom: "x" top: "x"
            pooling_param { kernel_size: 3 stride: 1 pad: 1 } })");
  ExpectOneClearError(RunCaffe("time -model " + bad),
                      "Pooling layer 'pool1': top[0] 'x' is also bottom[0]: Pooling cannot run in "
                      "place (its results would be wrong); give the top a name of its own");
}

TEST_F(CaffeToolTest, ShapeMismatchNamesLayerBlobsAndShapes) {
  const std::string bad = dir_ + "/shapes.prototxt";
  WriteFile(bad, R"(
    layer { name: "a" type: "Input" top: "a" input_param { shape { dim: 2 dim: 3 } } }
    layer { name: "b" type: "Input" top: "b" input_param { shape { dim: 2 dim: 5 } } }
    layer { name: "sum" type: "Eltwise" bottom: "a" bottom: "b" top: "c" })");
  const CommandResult result = RunCaffe("time -model " + bad);
  ExpectOneClearError(result, "Eltwise layer 'sum'");
  EXPECT_NE(result.output.find("2 3"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("2 5"), std::string::npos) << result.output;
}

TEST_F(CaffeToolTest, MissingLmdbIsNamed) {
  const std::string net = dir_ + "/data.prototxt";
  WriteFile(net, R"(
    layer { name: "mnist" type: "Data" top: "data" top: "label"
      data_param { source: "examples/mnist/no_such_lmdb" batch_size: 4 backend: LMDB } })");
  ExpectOneClearError(RunCaffe("time -model " + net), "examples/mnist/no_such_lmdb");
}

// A dataset damaged on its way to a node: cut short, a page lost in the middle, a record whose
// size runs past the end of the file. Training never dies by a signal: the setup or the prefetch
// thread's read fails with one line naming the database, and caffe exits 1.
TEST_F(CaffeToolTest, ADamagedLmdbEndsTrainingWithAnErrorNamingIt) {
  const std::string db = dir_ + "/train_lmdb", data_file = db + "/data.mdb";
  const std::string net = dir_ + "/lmdb_net.prototxt", solver = dir_ + "/lmdb_solver.prototxt";
  WriteFile(net, R"(
    layer { name: "data" type: "Data" top: "data" top: "label"
      data_param { source: ")" +
                     db + R"(" batch_size: 16 backend: LMDB } }
    layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
      inner_product_param { num_output: 3 weight_filler { type: "xavier" } } }
    layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" })");
  // 100 iterations of 16 read all 1000 records at least once.
  WriteFile(solver, "net: \"" + net +
                        "\"\nbase_lr: 0.01\nlr_policy: \"fixed\"\nmax_iter: 100\n"
                        "snapshot_prefix: \"" +
                        dir_ + "/lmdb\"\nsolver_mode: CPU\n");
  auto train = [&](const std::string& must_contain) {
    const CommandResult result = RunCaffe("train -solver " + solver);
    EXPECT_EQ(result.exit_code, 1) << result.output;  // 128 + the signal, had one killed it
    ExpectOneClearError(result, must_contain);
    return result.output;
  };
  WriteDatumLMDB(db, 1000);
  const uint64_t size = std::filesystem::file_size(data_file);
  const uint64_t page = MiddleLMDBLeafPage(data_file);
  const std::string key = FirstKeyOnLMDBPage(data_file, page);
  const std::string healthy = ReadWholeFile(data_file);

  TruncateFile(data_file, size / 2);
  train("caffe train: error: Data layer 'data': '" + data_file + "' is " +
        std::to_string(size / 2) + " bytes but its header says the database has ");

  WriteWholeFile(data_file, healthy);
  ZeroLMDBPage(data_file, page);
  std::string output = train("caffe train: error: Data layer 'data': loading data failed: LMDB '" +
                             db + "' is damaged: reading the record after key '" +
                             DatumLMDBKey(std::stoi(key) - 1) + "' failed: ");
  EXPECT_NE(output.find("; check every record with `caffe_db verify " + db + "`"),
            std::string::npos)
      << output;

  WriteWholeFile(data_file, healthy);
  SetFirstLMDBValueSize(data_file, page, static_cast<uint32_t>(size - 16));
  train("caffe train: error: Data layer 'data': loading data failed: LMDB '" + db +
        "' is damaged: reading the value of key '" + key +
        "' failed: SIGBUS (a page past the end of the file); check every record with `caffe_db "
        "verify " +
        db + "`");
}

TEST_F(CaffeToolTest, TrainOnlyFlagsGivenToTimeOrTestAreNamedAsIgnored) {
  CommandResult result = RunCaffe("time -model " + net_ + " -iterations 1 -ddl '-mode r:1'");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("-ddl is for caffe train; caffe time ignores it"), std::string::npos)
      << result.output;
  result = RunCaffe("time -model " + net_ + " -iterations 1");
  EXPECT_EQ(result.output.find("caffe train"), std::string::npos) << result.output;
  result = RunCaffe("test -model " + net_ + " -weights " + dir_ +
                    "/missing.caffemodel -bvlc "
                    "-snapshot s.solverstate");
  EXPECT_NE(result.output.find("-bvlc, -snapshot are for caffe train; caffe test ignores them"),
            std::string::npos)
      << result.output;
}

TEST_F(CaffeToolTest, SnapshotAndWeightsTogetherIsAnError) {
  ExpectOneClearError(RunCaffe("train -solver " + Solver() + " -snapshot a -weights b"),
                      "not both");
}

namespace {

// The sum of the numbers after each `key` ("\tforward: ") up to " ms." in `output`.
double SumAfter(const std::string& output, const std::string& key) {
  double sum = 0;
  for (size_t at = output.find(key); at != std::string::npos; at = output.find(key, at + 1)) {
    sum += std::stod(output.substr(at + key.size()));
  }
  return sum;
}

// `caffe time`'s summary lines, with the per-layer times adding up to each pass's average and
// the two passes to no more than the whole.
void ExpectBvlcTimeSummary(const std::string& output) {
  for (const char* line :
       {"Average time per layer:", "ip\tforward:", "ip\tbackward:", "Average Forward pass:",
        "Average Backward pass:", "Average Forward-Backward:", "*** Benchmark ends ***"}) {
    EXPECT_NE(output.find(line), std::string::npos) << line << "\n" << output;
  }
  const double forward = SumAfter(output, "Average Forward pass: ");
  const double backward = SumAfter(output, "Average Backward pass: ");
  const double whole = SumAfter(output, "Average Forward-Backward: ");
  // Printed with 6 significant digits: each layer's rounding adds up.
  EXPECT_NEAR(SumAfter(output, "\tforward: "), forward, 1e-4 * forward + 1e-3) << output;
  EXPECT_NEAR(SumAfter(output, "\tbackward: "), backward, 1e-4 * backward + 1e-3) << output;
  EXPECT_GT(forward, 0) << output;
  EXPECT_LE(forward + backward, whole * (1 + 1e-5)) << output;
}

// A net with a BatchNorm, its in-place Scale and ReLU, in `dir`; returns its path.
std::string WriteBatchNormNet(const std::string& dir) {
  const std::string net = dir + "/bn.prototxt";
  WriteFile(net, R"(
    force_backward: true
    layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 4 dim: 3 dim: 8 dim: 8 } } }
    layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
      convolution_param { num_output: 6 kernel_size: 3 weight_filler { type: "xavier" } } }
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv" }
    layer { name: "scale" type: "Scale" bottom: "conv" top: "conv" scale_param { bias_term: true } }
    layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
    layer { name: "ip" type: "InnerProduct" bottom: "conv" top: "ip"
      inner_product_param { num_output: 5 weight_filler { type: "xavier" } } })");
  return net;
}

// `caffe time` of WriteBatchNormNet's net ran the group as one: the log says so, the group's
// forward time shows under the BatchNorm and its backward time under the ReLU, and the summary
// adds up.
void ExpectGroupTimedAsOne(const std::string& output) {
  ExpectBvlcTimeSummary(output);
  for (const char* line :
       {"bn, scale and relu run as one", "scale\tforward: 0 ms.", "relu\tforward: 0 ms.",
        "bn\tbackward: 0 ms.", "scale\tbackward: 0 ms."}) {
    EXPECT_NE(output.find(line), std::string::npos) << line << "\n" << output;
  }
}

}  // namespace

TEST_F(CaffeToolTest, TimeRunsABatchNormAndTheLayersAfterItAsOne) {
  const std::string net = WriteBatchNormNet(dir_);
  const CommandResult result = RunCaffe("time -model " + net + " -iterations 2");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  ExpectGroupTimedAsOne(result.output);
}

#ifdef CPU_ONLY
TEST_F(CaffeToolTest, GpuFlagOnACpuOnlyBuildSaysSo) {
  ExpectOneClearError(RunCaffe("time -model " + net_ + " -gpu 0"), "no GPU support");
  ExpectOneClearError(RunCaffe("device_query -gpu 0"), "no GPU support");
  ExpectOneClearError(RunCaffe("train -solver " + Solver() + " -gpu 0,1"), "no GPU support");
}
#endif

#ifndef CPU_ONLY
// The GPU flags as users meet them (GPU builds with a GPU; skipped elsewhere): a GPU that is not
// there, or several for a one-GPU command, is one clear error; -gpu all trains with a solver per
// GPU; a net too large for the device budget is a clear out-of-memory error naming the layer and
// the bytes, and runs with -lms.
class CaffeToolGpuTest : public CaffeToolTest {
 protected:
  void SetUp() override {
    if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
    CaffeToolTest::SetUp();
  }
};

// On the GPU each layer's time is the GPU's (events between layers, MarkTimer), and the same
// summary adds up.
TEST_F(CaffeToolGpuTest, TimeGivesEachLayersGpuTime) {
  CommandResult result = RunCaffe("time -model " + net_ + " -gpu 0 -iterations 3");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  ExpectBvlcTimeSummary(result.output);
}

// A BatchNorm, its in-place Scale and ReLU run as one (Net::RunsFused): the log says so, the
// group's forward time shows under the BatchNorm and its backward time under the ReLU, the
// summary still adds up; the same under LMS, whose plan follows the group.
TEST_F(CaffeToolGpuTest, TimeRunsABatchNormAndTheLayersAfterItAsOne) {
  const std::string net = WriteBatchNormNet(dir_);
  for (const std::string flags : {"", " -lms 0"}) {
    const CommandResult result = RunCaffe("time -model " + net + " -gpu 0 -iterations 2" + flags);
    ASSERT_EQ(result.exit_code, 0) << result.output;
    ExpectGroupTimedAsOne(result.output);
  }
}

TEST_F(CaffeToolGpuTest, DeviceQueryPrintsTheGpuAndTheLibraryVersions) {
  const CommandResult result = RunCaffe("device_query -gpu 0");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::vector<std::string> lines = {
      "Name:", "Total global memory:", "CUDA driver / runtime:", "Compute mode:"};
#ifdef USE_CUDNN
  lines.push_back("cuDNN:                         9.");
#endif
#ifdef USE_NCCL
  lines.push_back("NCCL:                          2.");
#endif
  for (const std::string& line : lines) {
    EXPECT_NE(result.output.find(line), std::string::npos) << line << "\n" << result.output;
  }
}

TEST_F(CaffeToolGpuTest, AGpuThatIsNotThereIsNamed) {
  ExpectOneClearError(RunCaffe("time -model " + net_ + " -gpu 99"), "cannot use GPU 99");
  ExpectOneClearError(RunCaffe("train -solver " + Solver() + " -gpu 0,99"), "cannot use GPU 99");
  ExpectOneClearError(RunCaffe("time -model " + net_ + " -gpu 0,0"),
                      "this command runs on one GPU (2 given)");
}

#ifdef CAFFE_CUDA_EMU
// A GPU in exclusive-process compute mode that another process holds (emulated through
// CAFFE_CUDA_EMU_EXCLUSIVE; a real GPU here is in Default mode) is one clear error naming the GPU
// and the reason, at once, for one GPU and for -gpu all; device_query shows the mode; once the
// holder exits, the GPU serves the next process.
TEST_F(CaffeToolGpuTest, AGpuAnotherProcessHoldsInExclusiveModeIsNamed) {
  const std::string environment = "TMPDIR=" + dir_ + " CAFFE_CUDA_EMU_EXCLUSIVE=0 ";
  const std::string log = dir_ + "/holder.log";
  const pid_t holder = StartCaffe({"time", "-model", net_, "-gpu", "0", "-iterations", "100000000"},
                                  log, {{"TMPDIR", dir_}, {"CAFFE_CUDA_EMU_EXCLUSIVE", "0"}});
  ASSERT_GE(holder, 0);
  const std::string content = WaitForText(log, "Benchmark begins");
  EXPECT_NE(content.find("Benchmark begins"), std::string::npos) << content;
  const std::string reason = "exclusive compute mode and another process is using it";
  for (const std::string& command :
       {"time -model " + net_ + " -gpu 0", "train -solver " + Solver() + " -gpu all"}) {
    const CommandResult refused = RunCaffe(command, environment);
    ExpectOneClearError(refused, "cannot use GPU 0: CUDA-capable device(s) is/are busy");
    EXPECT_NE(refused.output.find(reason), std::string::npos) << refused.output;
  }
  kill(holder, SIGKILL);
  int status = 0;
  waitpid(holder, &status, 0);
  const CommandResult query = RunCaffe("device_query -gpu 0", environment);
  ASSERT_EQ(query.exit_code, 0) << query.output;
  EXPECT_NE(query.output.find("Compute mode:                  Exclusive process"),
            std::string::npos)
      << query.output;
}
#endif

TEST_F(CaffeToolGpuTest, GpuAllTrainsOneSolverPerGpu) {
  const CommandResult train = RunCaffe("train -solver " + Solver() + " -gpu all");
  ASSERT_EQ(train.exit_code, 0) << train.output;
  int gpus = 0;
  ASSERT_EQ(cudaGetDeviceCount(&gpus), cudaSuccess);
  // One GPU is a plain GPU run; several get a solver thread each.
  const std::string expected =
      gpus == 1 ? "Use GPU with device ID 0" : std::to_string(gpus) + " solver(s) on GPUs 0, 1";
  EXPECT_NE(train.output.find(expected), std::string::npos) << train.output;
  EXPECT_NE(train.output.find("Optimization Done."), std::string::npos) << train.output;
}

TEST_F(CaffeToolGpuTest, ANetTooLargeForTheBudgetNamesTheLayerAndRunsWithLms) {
  // Five 2 MiB blobs and their diffs: 20 MiB in all; one layer at a time needs at most 8 MiB.
  const std::string big = dir_ + "/big.prototxt";
  WriteFile(big, R"(
    force_backward: true
    layer { name: "data" type: "DummyData" top: "data" dummy_data_param {
      shape { dim: 8 dim: 64 dim: 32 dim: 32 } data_filler { type: "gaussian" } } }
    layer { name: "relu1" type: "ReLU" bottom: "data" top: "a1" }
    layer { name: "relu2" type: "ReLU" bottom: "a1" top: "a2" }
    layer { name: "relu3" type: "ReLU" bottom: "a2" top: "a3" }
    layer { name: "relu4" type: "ReLU" bottom: "a3" top: "a4" }
    layer { name: "sum" type: "Reduction" bottom: "a4" top: "loss" loss_weight: 1 })");
  const std::string time = "time -model " + big + " -gpu 0 -gpu_mem_limit 9M -iterations 1";
  const CommandResult plain = RunCaffe(time);
  ExpectOneClearError(plain, "ReLU layer 'relu4': out of device memory: a buffer of 2097152 bytes");
  EXPECT_NE(plain.output.find("the budget is 9437184 bytes"), std::string::npos) << plain.output;
  const CommandResult lms = RunCaffe(time + " -lms 0");
  ASSERT_EQ(lms.exit_code, 0) << lms.output;
  EXPECT_NE(lms.output.find("Average Forward-Backward:"), std::string::npos) << lms.output;
  EXPECT_NE(lms.output.find("[LMS] swapped in "), std::string::npos) << lms.output;
}

// A small net whose blobs and diffs take about 4 MB: under a 3 MB budget every layer swaps.
const char kLmsTrainNet[] = R"(
    layer { name: "data" type: "DummyData" top: "data" top: "label" dummy_data_param {
      shape { dim: 16 dim: 8 dim: 32 dim: 32 } shape { dim: 16 }
      data_filler { type: "gaussian" } data_filler { type: "constant" value: 3 } } }
    layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
      convolution_param { num_output: 16 kernel_size: 3 pad: 1 engine: CAFFE
        weight_filler { type: "gaussian" std: 0.05 } bias_filler { type: "constant" value: 0.1 } } }
    layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
    layer { name: "pool" type: "Pooling" bottom: "conv" top: "pool"
      pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
    layer { name: "ip" type: "InnerProduct" bottom: "pool" top: "ip"
      inner_product_param { num_output: 10 weight_filler { type: "gaussian" std: 0.01 } } }
    layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" })";

// `caffe train` under LMS with a budget below the net's memory ends with the same weights and
// solver state, bit for bit, as a run without: swaps in and out around every layer, the solver's
// update and the snapshot's reads of weights whose home is host memory lose nothing (on the
// emulator its streams run their queued work in the order a GPU could least expect). Caffe's own
// convolution engine, so the two runs compute in the same order. On one GPU, and with a solver
// thread per GPU (-gpu 0,1; 0,0 where there is one GPU), each with its own manager and budget.
TEST_F(CaffeToolGpuTest, TrainUnderLmsEndsWithThePlainRunsWeights) {
  const std::string net = dir_ + "/lms_train.prototxt";
  WriteFile(net, kLmsTrainNet);
  auto train = [&](const std::string& prefix, const std::string& flags) {
    const std::string solver = dir_ + "/" + prefix + "_solver.prototxt";
    WriteFile(solver, "net: \"" + net +
                          "\"\nbase_lr: 0.01\nmomentum: 0.9\nlr_policy: \"fixed\"\n"
                          "max_iter: 4\ndisplay: 1\nrandom_seed: 7\nsnapshot_prefix: \"" +
                          dir_ + "/" + prefix + "\"\nsolver_mode: GPU\n");
    return RunCaffe("train -solver " + solver + " " + flags);
  };
  auto read = [&](const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    EXPECT_TRUE(file) << path;
    return std::string((std::istreambuf_iterator<char>(file)), {});
  };
  int gpus = 0;
  ASSERT_EQ(cudaGetDeviceCount(&gpus), cudaSuccess);
  for (const std::string& devices : {std::string("0"), std::string(gpus > 1 ? "0,1" : "0,0")}) {
    SCOPED_TRACE("-gpu " + devices);
    const std::string name = devices == "0" ? "one" : "several";
    const CommandResult plain = train(name + "_plain", "-gpu " + devices);
    ASSERT_EQ(plain.exit_code, 0) << plain.output;
    // The blobs and their diffs take about 4 MB; under 3 MB every layer's buffers are swapped.
    const CommandResult lms = train(name + "_lms", "-gpu " + devices + " -lms 0 -gpu_mem_limit 3M");
    ASSERT_EQ(lms.exit_code, 0) << lms.output;
    const int solvers = devices == "0" ? 1 : 2;
    EXPECT_EQ(Count(lms.output, "[LMS] plan of net"), solvers) << lms.output;
    size_t at = 0;
    for (int solver = 0; solver < solvers; ++solver) {
      at = lms.output.find("[LMS] swapped in ", at);
      ASSERT_NE(at, std::string::npos) << "solver " << solver << ": " << lms.output;
      at += 17;
      EXPECT_GT(std::stoll(lms.output.substr(at)), 0) << lms.output.substr(at, 200);
    }
    const std::string plain_bytes = read(dir_ + "/" + name + "_plain_iter_4.caffemodel");
    EXPECT_GT(plain_bytes.size(), 10000u);
    EXPECT_TRUE(plain_bytes == read(dir_ + "/" + name + "_lms_iter_4.caffemodel"))
        << "the weights differ";
    // The solver states differ only in the weights file they name.
    SolverState plain_state, lms_state;
    ReadProtoFromBinaryFile(dir_ + "/" + name + "_plain_iter_4.solverstate", &plain_state);
    ReadProtoFromBinaryFile(dir_ + "/" + name + "_lms_iter_4.solverstate", &lms_state);
    ASSERT_EQ(plain_state.history_size(), 4);
    lms_state.set_learned_net(plain_state.learned_net());
    EXPECT_EQ(plain_state.SerializeAsString(), lms_state.SerializeAsString())
        << "the momentum history differs";
  }
}

// -timeline under LMS: the copies on the device's copy track carry the bytes the LMS end-of-run
// line counts, in and out (every copy of the run falls inside the default window).
TEST_F(CaffeToolGpuTest, TheTimelinesCopiesAddUpToTheLmsLine) {
  const std::string net = dir_ + "/lms_timeline.prototxt";
  WriteFile(net, kLmsTrainNet);
  const std::string solver = dir_ + "/lms_timeline_solver.prototxt";
  WriteFile(solver, "net: \"" + net + "\"\nbase_lr: 0.01\nlr_policy: \"fixed\"\nmax_iter: 2\n" +
                        "snapshot_prefix: \"" + dir_ + "/lms_timeline\"\nsolver_mode: GPU\n");
  const std::string trace_path = dir_ + "/lms.json";
  const CommandResult run = RunCaffe("train -solver " + solver +
                                     " -gpu 0 -lms 0 -gpu_mem_limit 3M -timeline " + trace_path);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::smatch line;
  ASSERT_TRUE(std::regex_search(run.output, line,
                                std::regex("\\[LMS\\] swapped in ([0-9]+) bytes .*, out ([0-9]+) "
                                           "bytes")))
      << run.output;
  std::ifstream file(trace_path);
  const std::string trace((std::istreambuf_iterator<char>(file)), {});
  const double in = SumOfSliceArg(trace, "swap in", "bytes");
  const double out = SumOfSliceArg(trace, "swap out", "bytes");
  EXPECT_GT(in, 0) << trace;
  EXPECT_EQ(in, std::stod(line[1])) << line[0];
  EXPECT_EQ(out, std::stod(line[2])) << line[0];
}
#endif  // CPU_ONLY

// `caffe train` shares the memory of activation gradients whose spans do not overlap (and says
// so) and ends with the weights of a run with a diff per blob (CAFFE_SHARE_DIFFS=0), to the byte.
TEST_F(CaffeToolTest, TrainSharesActivationGradientsAndEndsWithTheSameWeights) {
  const std::string net = dir_ + "/chain.prototxt";
  std::string layers = R"(
    layer { name: "data" type: "DummyData" top: "data" top: "label"
      dummy_data_param { shape { dim: 16 dim: 8 } shape { dim: 16 }
        data_filler { type: "gaussian" } data_filler { type: "constant" value: 1 } } })";
  std::string bottom = "data";
  for (const char* name : {"ip1", "ip2", "ip3", "ip4"}) {
    layers += std::string("\nlayer { name: \"") + name + "\" type: \"InnerProduct\" bottom: \"" +
              bottom + "\" top: \"" + name +
              "\" inner_product_param { num_output: 8 weight_filler { type: \"xavier\" } } }";
    layers += std::string("\nlayer { name: \"relu_") + name + "\" type: \"ReLU\" bottom: \"" +
              name + "\" top: \"" + name + "\" }";
    bottom = name;
  }
  layers +=
      "\nlayer { name: \"loss\" type: \"SoftmaxWithLoss\" bottom: \"ip4\" "
      "bottom: \"label\" top: \"loss\" }";
  WriteFile(net, layers);
  std::string weights[2];
  for (int shared = 0; shared < 2; ++shared) {
    const std::string prefix = dir_ + (shared ? "/shared" : "/own");
    const std::string solver = prefix + ".solver.prototxt";
    WriteFile(solver, "net: \"" + net +
                          "\"\nbase_lr: 0.1\nmomentum: 0.9\nlr_policy: \"fixed\"\n"
                          "max_iter: 10\nrandom_seed: 7\nsnapshot_prefix: \"" +
                          prefix + "\"\n");
    const CommandResult result =
        RunCaffe("train -solver " + solver, shared ? "" : "CAFFE_SHARE_DIFFS=0");
    ASSERT_EQ(result.exit_code, 0) << result.output;
    const bool said = result.output.find("Activation gradients share memory") != std::string::npos;
    EXPECT_EQ(shared == 1, said) << result.output;
    std::ifstream in(prefix + "_iter_10.caffemodel", std::ios::binary);
    weights[shared].assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_FALSE(weights[0].empty());
  EXPECT_TRUE(weights[0] == weights[1]) << "the weights differ with shared gradients";
}

TEST_F(CaffeToolTest, ABadShareDiffsValueIsNamed) {
  ExpectOneClearError(RunCaffe("time -model " + net_, "CAFFE_SHARE_DIFFS=yes"),
                      "CAFFE_SHARE_DIFFS is \"yes\"; expected 1");
}

TEST_F(CaffeToolTest, TimePrintsBvlcsSummaryLines) {
  CommandResult result = RunCaffe("time -model " + net_ + " -iterations 3");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  ExpectBvlcTimeSummary(result.output);
}

TEST_F(CaffeToolTest, BvlcsToolPathsRunTheTools) {
  // Users' scripts call ./build/tools/caffe (BVLC's CMake build) or ./build/tools/caffe.bin
  // (its Makefile build): both lead to the program in build/bin.
  namespace fs = std::filesystem;
  const fs::path bin = fs::path(BuildDir()) / "bin", tools = fs::path(BuildDir()) / "tools";
  for (const char* name : {"caffe", "compute_image_mean", "convert_imageset", "convert_mnist_data",
                           "convert_cifar_data", "extract_features", "upgrade_net_proto_text",
                           "upgrade_net_proto_binary", "upgrade_solver_proto_text"}) {
    for (const std::string& link : {std::string(name), std::string(name) + ".bin"}) {
      ASSERT_TRUE(fs::exists(tools / link)) << tools / link;
      EXPECT_TRUE(fs::equivalent(tools / link, bin / name)) << tools / link;
    }
  }
  CommandResult result =
      RunCommand((tools / "caffe.bin").string() + " time -model " + net_ + " -iterations 1");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("Average Forward-Backward"), std::string::npos) << result.output;
}

TEST_F(CaffeToolTest, TrainPrintsBvlcLogLinesAndTestScoresAWeightsFile) {
  CommandResult train = RunCaffe("train -solver " + Solver());
  ASSERT_EQ(train.exit_code, 0) << train.output;
  for (const char* line :
       {"Iteration 0, Testing net (#0)", "Test net output #0: accuracy = ", "Iteration 5 (",
        " iter/s, ", "s/5 iters), loss = ", "Train net output #0: loss = ", "Iteration 5, lr = 0.1",
        "Snapshotting to binary proto file", "Optimization Done."}) {
    EXPECT_NE(train.output.find(line), std::string::npos) << line << "\n" << train.output;
  }
  // solver_mode: GPU on a machine without one falls back to the CPU with a warning.
  const std::string weights = dir_ + "/tool_iter_20.caffemodel";
  ASSERT_TRUE(FileExists(weights));
  CommandResult test = RunCaffe("test -model " + net_ + " -weights " + weights + " -iterations 2");
  ASSERT_EQ(test.exit_code, 0) << test.output;
  EXPECT_NE(test.output.find("Batch 1, accuracy = "), std::string::npos) << test.output;
  EXPECT_NE(test.output.find("] accuracy = "), std::string::npos) << test.output;
  EXPECT_NE(test.output.find("] loss = "), std::string::npos) << test.output;
}

TEST_F(CaffeToolTest, TestSaysOnceWhereANonFiniteLossCameFrom) {
  Caffe::set_mode(Caffe::CPU);
  Net<float> net(net_, TEST);
  net.layer_by_name("ip")->blobs()[0]->mutable_cpu_data()[5] =
      std::numeric_limits<float>::quiet_NaN();
  NetParameter weights;
  net.ToProto(&weights);
  const std::string weights_file = dir_ + "/nan.caffemodel";
  WriteProtoToBinaryFile(weights, weights_file);
  const CommandResult test =
      RunCaffe("test -model " + net_ + " -weights " + weights_file + " -iterations 3");
  ASSERT_EQ(test.exit_code, 0) << test.output;
  // Weight 5 is the first output's: every row's first score is NaN.
  EXPECT_EQ(Count(test.output,
                  "] the loss of batch 0 is nan; where it came from: layer 'ip' "
                  "(InnerProduct) made 16 of 48 values of its top 'ip' non-finite; "
                  "the weights of 'ip' are not finite (param 0: 1 of 24 values). "
                  "They came with the weights: the training that wrote them "
                  "diverged.\n"),
            1)
      << test.output;
  EXPECT_EQ(Count(test.output, "is nan; where it came from"), 1) << test.output;
}

TEST_F(CaffeToolTest, CtrlCSnapshotsAndStopsAndTrainingResumes) {
  const std::string solver = Solver(100000000);
  const std::string log = dir_ + "/train.log";
  const pid_t child = StartCaffe({"train", "-solver", solver}, log);
  ASSERT_GE(child, 0);
  // Wait until training is under way, then press Ctrl-C.
  std::string content = WaitForText(log, "Iteration 10 (");
  ASSERT_NE(content.find("Iteration 10 ("), std::string::npos) << content;
  kill(child, SIGINT);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::ifstream in(log);
  content.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  EXPECT_NE(content.find("Optimization stopped early."), std::string::npos) << content;
  // The snapshot taken on the way out resumes with -snapshot.
  const size_t at = content.rfind("Snapshotting solver state to binary proto file ");
  ASSERT_NE(at, std::string::npos) << content;
  const size_t start = at + std::string("Snapshotting solver state to binary proto file ").size();
  const std::string state = content.substr(start, content.find('\n', start) - start);
  ASSERT_TRUE(FileExists(state)) << state;
  const int stopped_at = std::stoi(state.substr(state.rfind("_iter_") + 6));
  const std::string resume_solver = Solver(stopped_at + 5);
  CommandResult resumed = RunCaffe("train -solver " + resume_solver + " -snapshot " + state);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("Restoring previous solver status from " + state),
            std::string::npos)
      << resumed.output;
  EXPECT_TRUE(FileExists(dir_ + "/tool_iter_" + std::to_string(stopped_at + 5) + ".caffemodel"));
}

TEST_F(CaffeToolTest, CompareAcceptsTheGoldenFixturesLayout) {
  CAFFE_REQUIRE_SHARED_DIR();
  const std::string folder = SharedDir() + "/fixtures/golden/cifar10_quick";
  const CommandResult result =
      RunCaffe("compare -model " + folder + "/net.prototxt -weights " + folder +
               "/weights.caffemodel -reference " + folder + "/blobs.h5");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("param_diff/conv1/0"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("above the tolerance 0.0001"), std::string::npos) << result.output;
}

// A reference written from our own forward pass matches; a changed value is reported by name
// with a non-zero exit.
TEST_F(CaffeToolTest, CompareFailsNamingTheBlobThatDrifted) {
  const std::string model = dir_ + "/compare.prototxt";
  WriteFile(model, R"(
    layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }
    layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y"
      inner_product_param { num_output: 2 weight_filler { type: "constant" value: 0.5 } } })");
  Net<float> net(model, TEST);
  for (int i = 0; i < 6; ++i) net.blob_by_name("x")->mutable_cpu_data()[i] = i;
  net.Forward();
  const std::string reference = dir_ + "/reference.h5";
  {
    Hdf5File file(reference, H5F_ACC_TRUNC);
    for (const char* group : {"input", "forward"}) H5Gclose(hdf5_create_group(file.id(), group));
    hdf5_save_nd_dataset(file.id(), "input/x", *net.blob_by_name("x"));
    hdf5_save_nd_dataset(file.id(), "forward/x", *net.blob_by_name("x"));
    hdf5_save_nd_dataset(file.id(), "forward/y", *net.blob_by_name("y"));
  }
  EXPECT_EQ(RunCaffe("compare -model " + model + " -reference " + reference).exit_code, 0);
  {
    Hdf5File file(reference, H5F_ACC_RDWR);
    H5Ldelete(file.id(), "forward/y", H5P_DEFAULT);
    Blob<float> changed;
    changed.CopyFrom(*net.blob_by_name("y"), false, true);
    changed.mutable_cpu_data()[1] += 0.01f;
    hdf5_save_nd_dataset(file.id(), "forward/y", changed);
  }
  ExpectOneClearError(RunCaffe("compare -model " + model + " -reference " + reference),
                      "the first: forward/y");
  ExpectOneClearError(RunCaffe("compare -model " + model + " -reference " + dir_ + "/none.h5"),
                      dir_ + "/none.h5");
}

}  // namespace caffe
