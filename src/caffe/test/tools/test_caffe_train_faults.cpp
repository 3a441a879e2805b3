// What `caffe train` does when a cluster job meets the usual faults (docs/CLUSTER.md): SIGTERM
// from a scheduler snapshots and stops (one line says so), and the run resumes with
// `-snapshot latest` to the weights an uninterrupted run reaches; `-snapshot latest` starts from
// the beginning when there is no snapshot and passes over a newest one that is cut short; a
// second run on a snapshot prefix in use exits with one line naming the first; snapshot files
// left half-written by a killed run are removed by the next.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "caffe/io/io.hpp"
#include "caffe/snapshot_files.hpp"
#include "caffe/test/caffe_tool_test_util.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

// Random data each iteration, from the solver's seeded generator, which snapshots carry: a
// resumed run sees the data the uninterrupted one saw.
const char kNet[] = R"(
name: "FaultNet"
layer { name: "data" type: "DummyData" top: "data" top: "target"
  dummy_data_param { shape { dim: 8 dim: 6 } shape { dim: 8 dim: 3 }
    data_filler { type: "gaussian" } data_filler { type: "gaussian" } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
  inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.1 } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "ip" bottom: "target" top: "loss" }
)";

}  // namespace

class CaffeTrainFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("caffe_train_faults");
    net_ = dir_ + "/net.prototxt";
    WriteWholeFile(net_, kNet);
  }
  // A solver of `prefix` (in the test's folder) running to `max_iter`, snapshotting every
  // `every` iterations (0: only at the end).
  std::string Solver(const std::string& prefix, int max_iter, int every = 0) {
    const std::string path = dir_ + "/" + prefix + "_" + std::to_string(max_iter) + ".prototxt";
    WriteWholeFile(path, "net: \"" + net_ +
                             "\"\nbase_lr: 0.01\nmomentum: 0.9\nlr_policy: \"fixed\"\n"
                             "display: 5\nrandom_seed: 1701\nmax_iter: " +
                             std::to_string(max_iter) + "\nsnapshot: " + std::to_string(every) +
                             "\nsnapshot_prefix: \"" + dir_ + "/" + prefix + "\"\n");
    return path;
  }
  std::string Prefix(const std::string& prefix) const { return dir_ + "/" + prefix; }
  std::string Weights(const std::string& prefix, int iter) const {
    return ReadWholeFile(Prefix(prefix) + "_iter_" + std::to_string(iter) + ".caffemodel");
  }
  // Starts a long run of `prefix` and waits until it has trained 10 iterations.
  pid_t StartLongRun(const std::string& prefix, const std::string& log,
                     const std::vector<std::string>& flags = {}) {
    std::vector<std::string> arguments = {"train", "-solver", Solver(prefix, 100000000)};
    arguments.insert(arguments.end(), flags.begin(), flags.end());
    const pid_t child = StartCaffe(arguments, log);
    const std::string content = WaitForText(log, "Iteration 10 (");
    EXPECT_NE(content.find("Iteration 10 ("), std::string::npos) << content;
    return child;
  }
  // Waits for `child`; its exit status (128 + signal when killed).
  static int Finish(pid_t child) {
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::string dir_, net_;
};

TEST_F(CaffeTrainFaultsTest, SigtermSnapshotsStopsAndTheRunResumesExactly) {
  const std::string log = dir_ + "/sigterm.log";
  const pid_t child = StartLongRun("run", log);
  kill(child, SIGTERM);
  EXPECT_EQ(Finish(child), 0);
  const std::string content = ReadWholeFile(log);
  EXPECT_EQ(Count(content,
                  "caffe train: got SIGTERM: stopping after this iteration, writing a "
                  "snapshot (-sigterm_effect stop)\n"),
            1)
      << content;
  EXPECT_NE(content.find("Optimization stopped early."), std::string::npos) << content;
  EXPECT_EQ(content.find("*** "), std::string::npos) << "a crash report:\n" << content;
  const auto stopped = LatestCompleteSnapshot(Prefix("run"));
  ASSERT_TRUE(stopped.has_value()) << content;
  // Resumed to 10 iterations further, it ends where one run without the stop ends.
  const int end = stopped->iter + 10;
  const CommandResult resumed =
      RunCaffe("train -solver " + Solver("run", end) + " -snapshot latest");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("-snapshot latest: " + stopped->state + " (iteration " +
                                std::to_string(stopped->iter) + ")"),
            std::string::npos)
      << resumed.output;
  const CommandResult straight = RunCaffe("train -solver " + Solver("straight", end));
  ASSERT_EQ(straight.exit_code, 0) << straight.output;
  const std::string expected = Weights("straight", end);
  ASSERT_FALSE(expected.empty());
  EXPECT_TRUE(Weights("run", end) == expected) << "the resumed run's weights differ";
}

TEST_F(CaffeTrainFaultsTest, SigtermEffectSnapshotTrainsOnAndNoneIgnoresIt) {
  const std::string log = dir_ + "/snapshot.log";
  const pid_t child = StartLongRun("on", log, {"-sigterm_effect", "snapshot"});
  kill(child, SIGTERM);
  const std::string content = WaitForText(log, "Snapshotting solver state");
  EXPECT_NE(content.find("caffe train: got SIGTERM: writing a snapshot after this iteration and "
                         "training on (-sigterm_effect snapshot)"),
            std::string::npos)
      << content;
  kill(child, SIGINT);
  EXPECT_EQ(Finish(child), 0);
  EXPECT_EQ(ListSnapshots(Prefix("on")).size(), 2u) << "SIGTERM's and Ctrl-C's";
  ExpectOneClearError(RunCaffe("train -solver " + Solver("bad", 10) + " -sigterm_effect later"),
                      "invalid value 'later' for -sigterm_effect; expected stop, snapshot or "
                      "none");
}

TEST_F(CaffeTrainFaultsTest, SnapshotLatestWithoutOneStartsFromTheBeginning) {
  const CommandResult run = RunCaffe("train -solver " + Solver("fresh", 5) + " -snapshot latest");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("-snapshot latest: no complete snapshot with prefix " +
                            Prefix("fresh") + " yet; training from the beginning"),
            std::string::npos)
      << run.output;
  EXPECT_TRUE(FileExists(Prefix("fresh") + "_iter_5.solverstate"));
  ExpectOneClearError(
      RunCaffe("train -solver " + Solver("fresh", 5) + " -snapshot latest -lr_scaling double"),
      "invalid value 'double' for -lr_scaling; expected keep or linear");
}

TEST_F(CaffeTrainFaultsTest, SnapshotLatestPassesOverAHalfWrittenNewest) {
  ASSERT_EQ(RunCaffe("train -solver " + Solver("cut", 20, 5)).exit_code, 0);
  const std::string newest = Prefix("cut") + "_iter_20.solverstate";
  std::filesystem::resize_file(newest, std::filesystem::file_size(newest) / 2);
  const CommandResult run = RunCaffe("train -solver " + Solver("cut", 25, 5) + " -snapshot latest");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("Skipping snapshot " + newest + " (iteration 20): it is incomplete"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("Restoring previous solver status from " + Prefix("cut") +
                            "_iter_15.solverstate"),
            std::string::npos)
      << run.output;
}

TEST_F(CaffeTrainFaultsTest, ASecondRunOnAPrefixInUseExitsNamingTheFirst) {
  const std::string log = dir_ + "/first.log";
  const pid_t first = StartLongRun("shared", log);
  ExpectOneClearError(RunCaffe("train -solver " + Solver("shared", 10)),
                      "snapshot_prefix '" + Prefix("shared") +
                          "' is in use by another training run (pid " + std::to_string(first) +
                          " on host " + HostName() + ", started ");
  kill(first, SIGINT);
  EXPECT_EQ(Finish(first), 0);
  // Once the first has ended, the prefix is free.
  EXPECT_EQ(RunCaffe("train -solver " + Solver("shared", 5)).exit_code, 0);
}

TEST_F(CaffeTrainFaultsTest, FilesOfARunKilledMidSnapshotAreRemovedByTheNext) {
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  const std::string stale = Prefix("killed") + "_iter_40.caffemodel.tmp." + std::to_string(gone);
  WriteWholeFile(stale, "half a snapshot");
  const CommandResult run = RunCaffe("train -solver " + Solver("killed", 5));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("Removed " + stale + ", a snapshot file left unfinished by process " +
                            std::to_string(gone) + ", which no longer runs"),
            std::string::npos)
      << run.output;
  EXPECT_FALSE(FileExists(stale));
}

}  // namespace caffe
