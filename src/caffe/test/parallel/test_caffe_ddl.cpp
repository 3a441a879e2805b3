// `caffe train -ddl` as users run it, under mpirun: N learners at batch B end with the weights of
// one `caffe train` at batch N x B (2 learners in a ring; 4 oversubscribed learners with b:2x2,
// p:2x1x2 and -bvlc; 2 GPU learners with n:2 and b:2, against one GPU process); snapshots come
// from rank 0 only; -dump_iter prints the breakdown; a -mode that does not match -n is the
// "invalid dim" error on every rank; a malformed -ddl names the bad token; a learner killed
// mid-training (SIGKILL) or hung (SIGSTOP) ends the whole job with a clear message within a minute.
// Without MPI in the build, -ddl says so.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#ifndef CPU_ONLY
#include <cuda_runtime.h>
#endif

#include "caffe/io/io.hpp"
#include "caffe/parallel/compression.hpp"
#include "caffe/snapshot_files.hpp"
#include "caffe/test/ddl_test_util.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"
#include "caffe/test/timeline_test_util.hpp"

namespace caffe {

namespace {

struct CommandResult {
  int exit_code = -1;  // 128 + signal when killed
  std::string output;  // stdout and stderr together
  double seconds = 0;
  bool timed_out = false;
};

// Runs `command` with /bin/sh in its own process group, output to `log`. While it runs, `watch`
// sees the output so far every 100 ms, and the group's id (as a terminal's Ctrl-C signals the
// foreground group). After `timeout_s` the whole group is killed.
CommandResult RunCommand(const std::string& command, const std::string& log, double timeout_s,
                         const std::function<void(const std::string&, pid_t)>& watch = {}) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0) _exit(126);
    dup2(out, 1);
    dup2(out, 2);
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  CommandResult result;
  int status = 0;
  while (true) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    if (elapsed.count() > timeout_s) {
      result.timed_out = true;
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    if (watch) watch(ReadWholeFile(log), pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.output = ReadWholeFile(log);
  return result;
}

std::string CaffeTool() { return BuildDir() + "/bin/caffe"; }

int Count(const std::string& text, const std::string& what) {
  int count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

constexpr int kBatch = 4;
constexpr int kIterations = 6;

}  // namespace

class CaffeDdlTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir("caffe_ddl"); }

  // A solver file reading an LMDB of `records` images at `batch` per learner.
  std::string Solver(const std::string& name, int batch, int records, const std::string& extra,
                     int iterations = kIterations) {
    const std::string source = dir_ + "/images_lmdb";
    if (!std::ifstream(source + "/data.mdb")) WriteDdlTestImages(source, records, false);
    const std::string path = dir_ + "/" + name + "_solver.prototxt";
    WriteText(path, DdlTestSolver(source, batch, iterations,
                                  "snapshot_prefix: \"" + dir_ + "/" + name + "\" " + extra));
    return path;
  }

  std::string Log(const std::string& name) { return dir_ + "/" + name + ".log"; }
#ifdef USE_MPI
  std::vector<std::vector<float>> SingleProcessWeights(int batch, int records,
                                                       const std::string& flags = "");
  /// The run `name`'s snapshot at `iteration` has `expected`'s weights, within `tolerance`
  /// relative.
  void ExpectFinalWeights(const std::string& name, const std::vector<std::vector<float>>& expected,
                          int iteration = kIterations, double tolerance = 1e-5);
#endif

  std::string dir_;
};

#ifdef USE_MPI

namespace {

// mpirun for this machine: oversubscribed (CI has 2 cores), allowed as root, one OpenMP thread
// per learner. The build's mpiexec unless $CAFFE_MPIEXEC names another (a bundle's mpirun on a
// machine without Open MPI installed).
std::string Mpirun(int processes) {
  const char* mpiexec = std::getenv("CAFFE_MPIEXEC");
  return std::string(
             "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 ") +
         (mpiexec != nullptr && *mpiexec != '\0' ? mpiexec : CAFFE_MPIEXEC) +
         " --oversubscribe -n " + std::to_string(processes) + " ";
}

std::vector<std::vector<float>> ReadWeights(const std::string& caffemodel) {
  NetParameter net;
  ReadProtoFromBinaryFile(caffemodel, &net);  // throws caffe::Error if it cannot
  std::vector<std::vector<float>> weights;
  for (const LayerParameter& layer : net.layer()) {
    for (const BlobProto& blob : layer.blobs()) {
      weights.emplace_back(blob.data().begin(), blob.data().end());
    }
  }
  return weights;
}

}  // namespace

// The weights one `caffe train <flags>` at `batch` ends with after kIterations on `records`
// images.
std::vector<std::vector<float>> CaffeDdlTest::SingleProcessWeights(int batch, int records,
                                                                   const std::string& flags) {
  const std::string single = Solver("single", batch, records, "");
  CommandResult reference =
      RunCommand(CaffeTool() + " train -solver " + single + flags, Log("single"), 300);
  EXPECT_EQ(reference.exit_code, 0) << reference.output;
  return ReadWeights(dir_ + "/single_iter_" + std::to_string(kIterations) + ".caffemodel");
}

void CaffeDdlTest::ExpectFinalWeights(const std::string& name,
                                      const std::vector<std::vector<float>>& expected,
                                      int iteration, double tolerance) {
  size_t blob = 0;
  EXPECT_LE(RelativeDifference(ReadWeights(dir_ + "/" + name + "_iter_" +
                                           std::to_string(iteration) + ".caffemodel"),
                               expected, &blob),
            tolerance)
      << name << ": blob " << blob;
}

TEST_F(CaffeDdlTest, LearnersTrainLikeOneProcessWithTheirCombinedBatch) {
  const int records = 4 * kBatch * kIterations;
  const auto expected = SingleProcessWeights(2 * kBatch, records);
  // Two learners, one ring, a dump every 3 iterations, snapshots at 3 and 6.
  const std::string ddl = Solver("ddl", kBatch, records, "snapshot: 3");
  CommandResult run = RunCommand(Mpirun(2) + CaffeTool() + " train -solver " + ddl +
                                     " -ddl \"-mode r:2 -dump_iter 3 -dbg_level 1\"",
                                 Log("ddl"), 180);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  ExpectFinalWeights("ddl", expected);
  // With -dbg_level 1 every learner logs; only rank 0 snapshots (iterations 3 and 6).
  EXPECT_EQ(Count(run.output, "DDL: learner "), 2) << run.output;
  EXPECT_EQ(Count(run.output, "Snapshotting to binary proto file"), 2) << run.output;
  // The -dump_iter breakdown.
  EXPECT_EQ(Count(run.output, "DDL dump at iteration "), 2) << run.output;
  EXPECT_NE(run.output.find("allreduce end-to-end"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("dim 0 X (inside a host), 2 learners: ring allreduce"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("max jitter: learner "), std::string::npos) << run.output;
}

// -compress: two learners sending their gradients in 16 bits end near the uncompressed run (the
// combined batch in one process), but not on it (the gradients did lose bits on the way). Each
// summed gradient value is off by up to about 2u (u: the unit roundoff, fp16 2^-11, bf16 2^-8);
// 6 steps with momentum 0.9 add up to about 20 such errors in a weight that starts at zero (the
// biases), and a perturbed ReLU or max-pooling choice moves a gradient further: bound 24u (the
// biases' worst here: fp16 1.1u, bf16 9.9u). Rank 0 says how the gradients travel.
TEST_F(CaffeDdlTest, CompressedGradientsTrainCloseToTheUncompressedRun) {
  const int records = 4 * kBatch * kIterations;
  const auto expected = SingleProcessWeights(2 * kBatch, records);
  for (const std::string compression : {"fp16", "bf16"}) {
    SCOPED_TRACE(compression);
    const std::string name = "ddl_" + compression;
    const std::string ddl = Solver(name, kBatch, records, "");
    CommandResult run = RunCommand(Mpirun(2) + CaffeTool() + " train -solver " + ddl +
                                       " -ddl \"-mode r:2 -compress " + compression + "\"",
                                   Log(name), 180);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("gradients sent in " + compression + " and summed in fp32"),
              std::string::npos)
        << run.output;
    size_t blob = 0;
    const double difference = RelativeDifference(
        ReadWeights(dir_ + "/" + name + "_iter_" + std::to_string(kIterations) + ".caffemodel"),
        expected, &blob);
    Compression kind = Compression::kNone;
    ASSERT_TRUE(ParseCompression(compression, &kind));
    EXPECT_LT(difference, 24 * CompressionUnitRoundoff(kind)) << "blob " << blob;
    EXPECT_GT(difference, 0) << "the weights should differ from the fp32 run's";
  }
}

// -timeline under mpirun: a file per learner (.rankN), each its own row ("rank N"), whose
// allreduce slices move the parameters' bytes once per iteration.
TEST_F(CaffeDdlTest, EachLearnerWritesItsTimelineWithItsAllreduces) {
  const int iterations = 3;
  const std::string solver = Solver("timeline", kBatch, 4 * kBatch * iterations, "", iterations);
  CommandResult run = RunCommand(Mpirun(2) + CaffeTool() + " train -solver " + solver +
                                     " -ddl \"-mode r:2\" -timeline " + dir_ + "/trace.json",
                                 Log("timeline"), 180);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  size_t parameter_bytes = 0;
  for (const auto& blob : ReadWeights(dir_ + "/timeline_iter_3.caffemodel")) {
    parameter_bytes += blob.size() * sizeof(float);
  }
  for (int rank = 0; rank < 2; ++rank) {
    const std::string trace = ReadWholeFile(dir_ + "/trace.rank" + std::to_string(rank) + ".json");
    ASSERT_FALSE(trace.empty()) << rank << "\n" << run.output;
    EXPECT_NE(trace.find("\"args\":{\"name\":\"rank " + std::to_string(rank) + "\"}"),
              std::string::npos);
    EXPECT_NE(trace.find("\"args\":{\"name\":\"communication\"}"), std::string::npos);
    EXPECT_EQ(Count(trace, "\"cat\":\"step\""), iterations) << trace;
    EXPECT_EQ(SumOfSliceArg(trace, "allreduce", "bytes"),
              static_cast<double>(parameter_bytes * iterations))
        << trace;
    EXPECT_GE(Count(trace, "\"name\":\"allreduce, dim 0\""), iterations) << trace;
  }
  EXPECT_FALSE(FileExists(dir_ + "/trace.json"));
}

TEST_F(CaffeDdlTest, FourLearnersInEveryLayoutTrainLikeOneProcess) {
  const int records = 4 * kBatch * kIterations;
  const auto expected = SingleProcessWeights(4 * kBatch, records);
  const std::vector<std::string> runs = {"-ddl \"-mode b:2x2 -dump_iter 6\"",
                                         "-ddl \"-mode p:2x1x2\"", "-ddl \"-mode c:4\" -bvlc"};
  for (size_t i = 0; i < runs.size(); ++i) {
    SCOPED_TRACE(runs[i]);
    const std::string name = "ddl" + std::to_string(i);
    const std::string ddl = Solver(name, kBatch, records, "");
    CommandResult run = RunCommand(
        Mpirun(4) + CaffeTool() + " train -solver " + ddl + " " + runs[i], Log(name), 240);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    ExpectFinalWeights(name, expected);
    EXPECT_EQ(Count(run.output, "Snapshotting to binary proto file"), 1) << run.output;
  }
}

#ifndef CPU_ONLY
// GPU learners (GPU builds with a GPU): `-gpu 0` is each learner's GPU by its node-local rank. With
// two GPUs they reduce with NCCL (-mode n) or NCCL inside the host (-mode b); on one GPU they share
// it and reduce through host memory, as NCCL refuses two learners on one GPU. Either way they end
// with the weights of one `caffe train -gpu 0` at their combined batch.
TEST_F(CaffeDdlTest, GpuLearnersTrainLikeOneGpuProcess) {
  if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
  int gpus = 0;
  ASSERT_EQ(cudaGetDeviceCount(&gpus), cudaSuccess);
  const int records = 4 * kBatch * kIterations;
  const auto expected = SingleProcessWeights(2 * kBatch, records, " -gpu 0");
  // -dev_sync 2 also waits for the device after each bucket's allreduce.
  for (const std::string mode : {"n:2", "b:2 -dev_sync 2"}) {
    SCOPED_TRACE(mode);
    const std::string name = std::string("gpu_") + mode[0];
    const std::string ddl = Solver(name, kBatch, records, "");
    CommandResult run = RunCommand(Mpirun(2) + CaffeTool() + " train -gpu 0 -solver " + ddl +
                                       " -ddl \"-mode " + mode + " -dump_iter 6\"",
                                   Log(name), 300);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    ExpectFinalWeights(name, expected);
    EXPECT_EQ(run.output.find("2 learners: nccl") != std::string::npos, gpus >= 2) << run.output;
  }
}

// -gpu 0 is each learner's first granted GPU: with LSF's per-task lists crossed, learner 0 takes
// GPU 1 and learner 1 GPU 0; three learners on two visible GPUs are refused in one line.
TEST_F(CaffeDdlTest, GpuLearnersTakeTheGpusTheSchedulerGrantedThem) {
  if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
  int gpus = 0;
  ASSERT_EQ(cudaGetDeviceCount(&gpus), cudaSuccess);
  if (gpus < 2) GTEST_SKIP() << "needs two GPUs, this machine has " << gpus;
  const std::string solver = Solver("granted", kBatch, 64, "", 1);
  const std::string train = CaffeTool() + " train -gpu 0 -solver " + solver;
  CommandResult run = RunCommand("CUDA_VISIBLE_DEVICES0=1 CUDA_VISIBLE_DEVICES1=0 " + Mpirun(2) +
                                     "-x CUDA_VISIBLE_DEVICES0 -x CUDA_VISIBLE_DEVICES1 " + train +
                                     " -ddl \"-mode r:2 -dbg_level 1\"",
                                 Log("granted"), 120);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("DDL: learner 0 trains on GPU 1 of LSF's CUDA_VISIBLE_DEVICES0=1"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("DDL: learner 1 trains on GPU 0 of LSF's CUDA_VISIBLE_DEVICES1=0"),
            std::string::npos)
      << run.output;
  CommandResult crowded =
      RunCommand(Mpirun(3) + train + " -ddl \"-mode r:3\"", Log("crowded"), 120);
  EXPECT_NE(crowded.exit_code, 0) << crowded.output;
  EXPECT_NE(crowded.output.find("caffe train: error: -gpu with -ddl: 3 learners on host "),
            std::string::npos)
      << crowded.output;
  EXPECT_NE(crowded.output.find("but " + std::to_string(gpus) +
                                " GPUs are visible: learners would share GPUs"),
            std::string::npos)
      << crowded.output;
}

// LMS on each learner's GPU (the communication thread reduces DDL's gradient buffer, which LMS
// never swaps): under a budget that keeps swapping the weights and the solver's history, the
// same weights as one GPU process at the combined batch.
TEST_F(CaffeDdlTest, GpuLearnersUnderLmsTrainLikeOneGpuProcess) {
  if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
  const int records = 4 * kBatch * kIterations;
  const auto expected = SingleProcessWeights(2 * kBatch, records, " -gpu 0");
  const std::string ddl = Solver("lms", kBatch, records, "");
  CommandResult run = RunCommand(Mpirun(2) + CaffeTool() + " train -gpu 0 -solver " + ddl +
                                     " -ddl \"-mode n:2\" -lms 0 -gpu_mem_limit 7M",
                                 Log("lms"), 300);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  ExpectFinalWeights("lms", expected);
  EXPECT_NE(run.output.find("[LMS] plan of net 'LeNet'"), std::string::npos) << run.output;
  const size_t stats = run.output.find("[LMS] swapped in ");
  ASSERT_NE(stats, std::string::npos) << run.output;
  EXPECT_NE(run.output.find(" evictions", stats), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find(" 0 evictions", stats), std::string::npos)
      << "the budget should make LMS swap: " << run.output.substr(stats, 300);
}
#endif  // CPU_ONLY

// On CPU learners the LMS flags have no effect, which one warning says; training goes on.
TEST_F(CaffeDdlTest, CpuLearnersSayTheLmsFlagsApplyToGpuRuns) {
  const std::string solver = Solver("cpu_lms", kBatch, 64, "", 1);
  CommandResult run = RunCommand(Mpirun(2) + CaffeTool() + " train -solver " + solver +
                                     " -ddl \"-mode r:2\" -lms 8192 -lms_frac 0.9",
                                 Log("cpu_lms"), 120);
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_GE(Count(run.output, "[LMS] -lms, -lms_frac and -gpu_mem_limit apply to GPU runs"), 1)
      << run.output;
  EXPECT_NE(run.output.find("Optimization Done."), std::string::npos) << run.output;
}

TEST_F(CaffeDdlTest, AModeThatDoesNotMatchTheProcessCountFailsOnEveryRank) {
  const std::string solver = Solver("s", kBatch, 64, "");
  const std::string train = CaffeTool() + " train -solver " + solver + " -ddl \"-mode b:3x1\"";
  const std::string error =
      "caffe train: error: invalid dim size=2 usr_size=3 dim[0]=3 dim[1]=1 dim[2]=1";
  CommandResult run = RunCommand(Mpirun(2) + train, Log("dim"), 120);
  EXPECT_NE(run.exit_code, 0) << run.output;
  // mpirun may stop the other learner once the first has failed, before it prints.
  EXPECT_GE(Count(run.output, error), 1) << run.output;
  // Each learner's own message and exit code, through a shell that reports it and exits 0 (so
  // mpirun lets both finish).
  CommandResult each = RunCommand(
      Mpirun(2) + "sh -c '" + train + "; echo \"learner $OMPI_COMM_WORLD_RANK exit code $?\"'",
      Log("dim_each"), 120);
  EXPECT_EQ(Count(each.output, error), 2) << each.output;
  EXPECT_EQ(Count(each.output, "exit code 1\n"), 2) << each.output;
  EXPECT_NE(each.output.find("learner 0 exit code 1"), std::string::npos) << each.output;
  EXPECT_NE(each.output.find("learner 1 exit code 1"), std::string::npos) << each.output;
}

TEST_F(CaffeDdlTest, AMalformedDdlStringNamesTheBadToken) {
  const std::string solver = Solver("s", kBatch, 64, "");
  const std::string train =
      CaffeTool() + " train -solver " + solver + " -ddl \"-mode r:2 -dump_iter x3\"";
  const std::string error = "caffe train: error: -ddl \"-mode r:2 -dump_iter x3\": 'x3'";
  CommandResult run = RunCommand(Mpirun(2) + train, Log("token"), 120);
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_GE(Count(run.output, error), 1) << run.output;  // the other may be stopped first
  // Every learner names it (a shell per learner that exits 0, so mpirun lets both finish).
  CommandResult each =
      RunCommand(Mpirun(2) + "sh -c '" + train + "; true'", Log("token_each"), 120);
  EXPECT_EQ(Count(each.output, error), 2) << each.output;
  CommandResult alone = RunCommand(CaffeTool() + " train -solver " + solver + " -ddl \"-mode z:2\"",
                                   Log("alone"), 60);
  EXPECT_EQ(alone.exit_code, 1) << alone.output;
  EXPECT_NE(alone.output.find("unknown algorithm 'z'"), std::string::npos) << alone.output;
}

namespace {

// Starts a long run of `processes` learners with -dbg_level 1 (-ddl `ddl`), waits
// until rank 0 has trained to `iteration`, then sends `signal` to learner `learner` (its pid comes
// from its log line). Returns the run and the seconds from the signal to the end of mpirun.
CommandResult SignalALearner(const std::string& solver, const std::string& ddl,
                             const std::string& log, int signal, double* seconds_after_signal,
                             pid_t* victim, int processes = 2, int learner = 1,
                             int iteration = 20) {
  const std::regex pid_line("DDL: learner " + std::to_string(learner) + " of " +
                            std::to_string(processes) + " on host \\S+, pid ([0-9]+)");
  const std::string mid_training = "Iteration " + std::to_string(iteration) + " ";
  std::chrono::steady_clock::time_point signalled;
  bool sent = false;
  *victim = 0;
  CommandResult run = RunCommand(
      Mpirun(processes) + CaffeTool() + " train -solver " + solver + " -ddl \"" + ddl + "\"", log,
      150, [&](const std::string& output, pid_t) {
        if (sent) return;
        std::smatch match;
        if (!std::regex_search(output, match, pid_line)) return;
        if (output.find(mid_training) == std::string::npos) return;
        *victim = std::stoi(match[1]);
        kill(*victim, signal);
        signalled = std::chrono::steady_clock::now();
        sent = true;
      });
  *seconds_after_signal =
      sent ? std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count()
           : -1;
  return run;
}

}  // namespace

TEST_F(CaffeDdlTest, AKilledLearnerEndsTheJobWithinAMinute) {
  // Long enough never to finish by itself in the test's time.
  const std::string solver = Solver("s", kBatch, 64, "display: 1", 1000000);
  double seconds = 0;
  pid_t victim = 0;
  CommandResult run =
      SignalALearner(solver, "-mode r:2 -dbg_level 1", Log("kill"), SIGKILL, &seconds, &victim);
  ASSERT_GT(victim, 0) << "learner 1 never started training:\n" << run.output;
  EXPECT_FALSE(run.timed_out) << run.output;
  EXPECT_GE(seconds, 0);
  EXPECT_LT(seconds, 60) << run.output;
  EXPECT_NE(run.exit_code, 0) << run.output;
  // Open MPI names the learner that died; the other says why it ends.
  EXPECT_NE(run.output.find("signal 9"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("caffe train: learner 0 got SIGTERM: all learners stop after this "
                            "iteration, learner 0 writing a snapshot (-sigterm_effect stop)"),
            std::string::npos)
      << run.output;
}

TEST_F(CaffeDdlTest, AHungLearnerEndsTheJobWithAClearErrorWithinAMinute) {
  const std::string solver = Solver("s", kBatch, 64, "display: 1", 1000000);
  double seconds = 0;
  pid_t victim = 0;
  CommandResult run = SignalALearner(solver, "-mode r:2 -dbg_level 1 -timeout 3", Log("hang"),
                                     SIGSTOP, &seconds, &victim);
  if (victim > 0) kill(victim, SIGKILL);  // whatever happened, leave nothing stopped behind
  ASSERT_GT(victim, 0) << "learner 1 never started training:\n" << run.output;
  EXPECT_FALSE(run.timed_out) << run.output;
  EXPECT_LT(seconds, 60) << run.output;
  EXPECT_NE(run.exit_code, 0) << run.output;
  // Learner 0 noticed and said which learner stopped answering.
  EXPECT_NE(run.output.find("caffe train: error: DDL: learner 1 (host "), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("has sent no heartbeat for 3 s: it died or hangs"), std::string::npos)
      << run.output;
}

// Ctrl-C on mpirun (the terminal signals its foreground group; Open MPI's mpirun then sends the
// learners SIGCONT, SIGTERM and SIGKILL, odls_base_sigkill_timeout seconds apart): the learners
// agree on the iteration, rank 0 snapshots before SIGKILL, and every learner exits cleanly. The job
// resumes with -snapshot latest to the weights of a job that was never stopped; resumed by one
// process, the effective batch change is logged and -lr_scaling linear halves base_lr.
TEST_F(CaffeDdlTest, CtrlCOnMpirunSnapshotsAndTheJobResumesExactly) {
  const int records = 64;
  const std::string solver = Solver("job", kBatch, records, "display: 1", 1000000);
  bool sent = false;
  // `exec env`: mpirun leads the group, as in a terminal (a shell between would die of the SIGINT).
  CommandResult run =
      RunCommand("exec env " + Mpirun(2) + "--mca odls_base_sigkill_timeout 3 " + CaffeTool() +
                     " train -solver " + solver + " -ddl \"-mode r:2\"",
                 Log("ctrl_c"), 150, [&](const std::string& output, pid_t group) {
                   if (sent || output.find("Iteration 10 ") == std::string::npos) return;
                   kill(-group, SIGINT);
                   sent = true;
                 });
  ASSERT_TRUE(sent) << run.output;
  EXPECT_FALSE(run.timed_out) << run.output;
  EXPECT_EQ(run.output.find("*** "), std::string::npos) << "a crash report:\n" << run.output;
  // (mpirun stops forwarding the learners' output once it ends the job: the snapshot on disk,
  // not the log, says what they did.)
  const auto stopped = LatestCompleteSnapshot(dir_ + "/job");
  ASSERT_TRUE(stopped.has_value()) << run.output;
  EXPECT_GE(stopped->iter, 10) << "taken after the Ctrl-C";
  const int end = stopped->iter + 6;
  CommandResult resumed = RunCommand(Mpirun(2) + CaffeTool() + " train -solver " +
                                         Solver("job", kBatch, records, "", end) +
                                         " -snapshot latest -ddl \"-mode r:2\"",
                                     Log("resumed"), 150);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("-snapshot latest: " + stopped->state), std::string::npos)
      << resumed.output;
  CommandResult straight =
      RunCommand(Mpirun(2) + CaffeTool() + " train -solver " +
                     Solver("straight", kBatch, records, "", end) + " -ddl \"-mode r:2\"",
                 Log("straight"), 150);
  ASSERT_EQ(straight.exit_code, 0) << straight.output;
  ExpectFinalWeights(
      "job", ReadWeights(dir_ + "/straight_iter_" + std::to_string(end) + ".caffemodel"), end, 0);
  // One learner resuming two learners' snapshot.
  CommandResult alone =
      RunCommand(CaffeTool() + " train -solver " + Solver("job", kBatch, records, "", end + 2) +
                     " -snapshot latest -lr_scaling linear",
                 Log("alone"), 60);
  ASSERT_EQ(alone.exit_code, 0) << alone.output;
  EXPECT_NE(alone.output.find("The snapshot was taken by 2 learner(s) and this run has 1: the "
                              "effective batch (learners x batch_size x iter_size) is 1/2 of "
                              "what it was"),
            std::string::npos)
      << alone.output;
  EXPECT_NE(alone.output.find("-lr_scaling linear: base_lr 0.01 -> 0.005"), std::string::npos)
      << alone.output;
}

// The restart drill: a learner of four killed at a random iteration ends the job with a clear
// error within a minute; the job run again with -snapshot latest resumes from the last snapshot
// and ends with the weights of a job that was never interrupted.
TEST_F(CaffeDdlTest, AJobRestartedAfterALearnerDiedEndsAsIfUninterrupted) {
  const int records = 64, iterations = 30;
  std::random_device random;
  const int learner = 1 + static_cast<int>(random() % 3);
  const int iteration = 8 + static_cast<int>(random() % 15);
  SCOPED_TRACE("learner " + std::to_string(learner) + " killed at iteration " +
               std::to_string(iteration));
  const std::string solver = Solver("drill", kBatch, records, "display: 1 snapshot: 5", iterations);
  double seconds = 0;
  pid_t victim = 0;
  CommandResult killed = SignalALearner(solver, "-mode r:4 -dbg_level 1 -timeout 10", Log("killed"),
                                        SIGKILL, &seconds, &victim, 4, learner, iteration);
  ASSERT_GT(victim, 0) << killed.output;
  EXPECT_NE(killed.exit_code, 0) << killed.output;
  EXPECT_LT(seconds, 60) << killed.output;
  EXPECT_NE(killed.output.find("signal 9"), std::string::npos) << killed.output;
  const auto last = LatestCompleteSnapshot(dir_ + "/drill");
  ASSERT_TRUE(last.has_value()) << killed.output;
  CommandResult restarted = RunCommand(
      Mpirun(4) + CaffeTool() + " train -solver " + solver + " -snapshot latest -ddl \"-mode r:4\"",
      Log("restarted"), 240);
  ASSERT_EQ(restarted.exit_code, 0) << restarted.output;
  EXPECT_NE(restarted.output.find("-snapshot latest: " + last->state), std::string::npos)
      << restarted.output;
  const std::string whole = Solver("whole", kBatch, records, "", iterations);
  CommandResult uninterrupted =
      RunCommand(Mpirun(4) + CaffeTool() + " train -solver " + whole + " -ddl \"-mode r:4\"",
                 Log("whole"), 240);
  ASSERT_EQ(uninterrupted.exit_code, 0) << uninterrupted.output;
  ExpectFinalWeights(
      "drill", ReadWeights(dir_ + "/whole_iter_" + std::to_string(iterations) + ".caffemodel"),
      iterations, 0);
}

#else  // no MPI in this build

TEST_F(CaffeDdlTest, DdlSaysThisBuildHasNoMpi) {
  const std::string solver = Solver("s", kBatch, 64, "");
  CommandResult run = RunCommand(CaffeTool() + " train -solver " + solver + " -ddl \"-mode r:2\"",
                                 Log("nompi"), 60);
  EXPECT_EQ(run.exit_code, 1) << run.output;
  EXPECT_EQ(Count(run.output, ": error: "), 1) << run.output;
  EXPECT_NE(run.output.find("this build of Caffe has no MPI support"), std::string::npos)
      << run.output;
  // The string is still checked first.
  CommandResult bad =
      RunCommand(CaffeTool() + " train -solver " + solver + " -ddl \"-mode z:2\"", Log("bad"), 60);
  EXPECT_NE(bad.output.find("unknown algorithm 'z'"), std::string::npos) << bad.output;
}

#endif  // USE_MPI

}  // namespace caffe
