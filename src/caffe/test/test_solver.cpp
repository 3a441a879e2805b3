#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "caffe/io/io.hpp"
#include "caffe/io/upgrade_proto.hpp"
#include "caffe/sgd_solvers.hpp"
#include "caffe/solver.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

// A small classifier on random data; the gaussian DummyData refill and the Dropout mask both draw
// from the random generator, so resuming exactly needs its state.
std::string SolverText(const std::string& prefix, const std::string& extra, int max_iter = 20) {
  return R"(
    base_lr: 0.05 lr_policy: "step" gamma: 0.5 stepsize: 7 momentum: 0.9 weight_decay: 0.01
    display: 0 random_seed: 1701 solver_mode: CPU max_iter: )" +
         std::to_string(max_iter) + R"(
    snapshot_prefix: ")" +
         prefix + R"(" )" + extra + R"(
    net_param {
      name: "ResumeNet"
      layer { name: "data" type: "DummyData" top: "data" top: "label"
        dummy_data_param { shape { dim: 8 dim: 6 } shape { dim: 8 }
          data_filler { type: "gaussian" std: 1 } data_filler { type: "constant" value: 2 } } }
      layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
        inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
      layer { name: "drop" type: "Dropout" bottom: "ip1" top: "ip1"
        dropout_param { dropout_ratio: 0.3 } }
      layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
        inner_product_param { num_output: 4 weight_filler { type: "xavier" } } }
      layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
      layer { name: "accuracy" type: "Accuracy" bottom: "ip2" bottom: "label" top: "accuracy"
        include { phase: TEST } }
    })";
}

SolverParameter ParseSolver(const std::string& text) {
  SolverParameter param;
  ParseProtoFromText(text, "test solver", &param);
  return param;
}

std::unique_ptr<Solver<float>> MakeSolver(const std::string& text) {
  Caffe::set_mode(Caffe::CPU);
  return std::unique_ptr<Solver<float>>(SolverRegistry<float>::CreateSolver(ParseSolver(text)));
}

void ExpectSameParams(Solver<float>* a, Solver<float>* b) {
  const auto& pa = a->net()->learnable_params();
  const auto& pb = b->net()->learnable_params();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    for (int j = 0; j < pa[i]->count(); ++j) {
      ASSERT_EQ(pa[i]->cpu_data()[j], pb[i]->cpu_data()[j]) << "param " << i << " value " << j;
    }
  }
}

// Exposes the iteration so learning-rate policies can be probed at any point.
class LrProbe : public SGDSolver<float> {
 public:
  using SGDSolver<float>::SGDSolver;
  float RateAt(int iter) {
    iter_ = iter;
    return GetLearningRate();
  }
};

}  // namespace

class SolverTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = MakeTempDir("solver_test"); }
  std::string dir_;
};

TEST_F(SolverTest, LearningRatePoliciesFollowTheirFormulas) {
  const std::string net = R"( net_param { layer { name: "d" type: "Input" top: "d"
      input_param { shape { dim: 1 } } } } )";
  struct Case {
    std::string settings;
    std::function<double(int)> expected;
  };
  const std::vector<Case> cases = {
      {R"(lr_policy: "fixed")", [](int) { return 0.1; }},
      {R"(lr_policy: "step" gamma: 0.5 stepsize: 10)",
       [](int it) { return 0.1 * std::pow(0.5, it / 10); }},
      {R"(lr_policy: "exp" gamma: 0.99)", [](int it) { return 0.1 * std::pow(0.99, it); }},
      {R"(lr_policy: "inv" gamma: 0.0001 power: 0.75)",
       [](int it) { return 0.1 * std::pow(1 + 0.0001 * it, -0.75); }},
      {R"(lr_policy: "poly" power: 2 max_iter: 100)",
       [](int it) { return 0.1 * std::pow(1 - it / 100.0, 2); }},
      {R"(lr_policy: "sigmoid" gamma: -0.1 stepsize: 50)",
       [](int it) { return 0.1 / (1 + std::exp(0.1 * (it - 50))); }},
  };
  for (const Case& c : cases) {
    LrProbe probe(ParseSolver("base_lr: 0.1 " + c.settings + net));
    for (int iter : {0, 1, 9, 10, 25, 60, 99}) {
      EXPECT_NEAR(probe.RateAt(iter), c.expected(iter), 1e-6 * c.expected(iter) + 1e-9)
          << c.settings << " at iteration " << iter;
    }
  }
  // multistep: the step advances as each stepvalue is passed, one per call.
  LrProbe multistep(ParseSolver(
      R"(base_lr: 0.1 lr_policy: "multistep" gamma: 0.1 stepvalue: 5 stepvalue: 8)" + net));
  const double expected[] = {0.1, 0.1, 0.1, 0.1, 0.1, 0.01, 0.01, 0.01, 0.001, 0.001};
  for (int iter = 0; iter < 10; ++iter) {
    EXPECT_NEAR(multistep.RateAt(iter), expected[iter], 1e-6 * expected[iter])
        << "multistep at " << iter;
  }
}

// Policy mistakes are found when the solver is made, before any net is built (so before a long
// setup or a first test pass), each naming what is wrong.
TEST_F(SolverTest, LrPolicyMistakesAreClearErrorsBeforeTheNetsAreBuilt) {
  // The net would fail to build (an unknown layer type): the policy's error must come first.
  const std::string net = R"( net_param { layer { name: "d" type: "NoSuchLayer" top: "d" } })";
  const std::pair<std::string, std::string> cases[] = {
      {R"(lr_policy: "cosine")",
       R"(solver: unknown lr_policy "cosine"; known: fixed, step, exp, inv, multistep, poly, )"
       R"(sigmoid)"},
      {"base_lr: 0.1", "solver: no lr_policy given; known: fixed, step"},
      {R"(lr_policy: "step" gamma: 0.1)",
       R"(solver: lr_policy "step" needs a positive stepsize (0))"},
      {R"(lr_policy: "poly" power: 2)",
       R"(solver: lr_policy "poly" needs a positive max_iter (0))"},
  };
  for (const auto& [policy, expected] : cases) {
    const std::string error = ErrorOf([&] { MakeSolver(policy + net); });
    EXPECT_NE(error.find(expected), std::string::npos) << policy << ": " << error;
  }
}

TEST_F(SolverTest, UnknownSolverTypeListsTheKnownOnes) {
  try {
    MakeSolver(R"(type: "Adamax" net_param { })");
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("\"Adamax\""), std::string::npos) << message;
    EXPECT_NE(message.find("Nesterov"), std::string::npos) << message;
  }
}

TEST_F(SolverTest, OldSolverTypeEnumIsUpgraded) {
  SolverParameter param = ParseSolver(R"(solver_type: NESTEROV)");
  const std::string path = dir_ + "/solver.prototxt";
  WriteProtoToTextFile(param, path);
  SolverParameter read;
  ReadSolverParamsFromTextFile(path, &read);
  EXPECT_EQ(read.type(), "Nesterov");
  EXPECT_FALSE(read.has_solver_type());
}

TEST_F(SolverTest, TestNetsRunOnScheduleAndShareTrainedWeights) {
  auto solver = MakeSolver(SolverText(dir_ + "/s", "test_iter: 2 test_interval: 5"));
  ASSERT_EQ(solver->test_nets().size(), 1u);
  const Net<float>& test_net = *solver->test_nets()[0];
  EXPECT_TRUE(test_net.has_layer("accuracy"));
  solver->Step(5);
  // The test net shares (not copies) the train net's learned blobs.
  EXPECT_EQ(test_net.layer_by_name("ip1")->blobs()[0]->cpu_data(),
            solver->net()->layer_by_name("ip1")->blobs()[0]->cpu_data());
}

// A separate test net for SolverText's training net, its second layer `ip2_layer`; the solver
// tests it only at iteration 1000, so a mismatch would surface there.
std::string SolverWithTestNet(const std::string& prefix, const std::string& ip2_layer) {
  return SolverText(prefix, R"(test_iter: 1 test_interval: 1000 test_initialization: false
    test_net_param {
      name: "ResumeNet"
      layer { name: "data" type: "DummyData" top: "data" top: "label"
        dummy_data_param { shape { dim: 8 dim: 6 } shape { dim: 8 } } }
      layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
        inner_product_param { num_output: 10 } }
      )" + ip2_layer + R"(
      layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
    })");
}

TEST_F(SolverTest, ATestNetThatCannotShareTheTrainedWeightsIsRefusedAtOnce) {
  const std::string prefix =
      "the TEST net 'ResumeNet' cannot share the weights of layer 'ip2' with the TRAIN net "
      "'ResumeNet': ";
  const std::string same_weights =
      "; a layer of the same name must have the same weights in both nets";
  EXPECT_EQ(ErrorOf([&] {
              MakeSolver(SolverWithTestNet(dir_ + "/s", R"(
                layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
                  inner_product_param { num_output: 5 } })"));
            }),
            prefix + "learned blob 0 is 5 10 (50) in the TEST net and 4 10 (40) in the TRAIN net" +
                same_weights);
  EXPECT_EQ(
      ErrorOf([&] {
        MakeSolver(SolverWithTestNet(dir_ + "/s", R"(
                layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
                  inner_product_param { num_output: 4 bias_term: false } })"));
      }),
      prefix + "it has 1 learned blobs in the TEST net and 2 in the TRAIN net" + same_weights);
  // Two layers named ip2 in the test net: the message says so.
  EXPECT_EQ(ErrorOf([&] {
              MakeSolver(SolverWithTestNet(dir_ + "/s", R"(
                layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
                  inner_product_param { num_output: 4 } }
                layer { name: "ip2" type: "InnerProduct" bottom: "ip2" top: "ip3"
                  inner_product_param { num_output: 3 } })"));
            }),
            prefix + "learned blob 0 is 3 4 (12) in the TEST net and 4 10 (40) in the TRAIN net" +
                " (the TEST net has 2 layers named 'ip2')");
  // A matching test net is accepted.
  EXPECT_EQ(ErrorOf([&] {
              MakeSolver(SolverWithTestNet(dir_ + "/s", R"(
                layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
                  inner_product_param { num_output: 4 } })"));
            }),
            "");
}

TEST_F(SolverTest, TestItersWithoutIntervalIsAClearError) {
  EXPECT_THROW(MakeSolver(SolverText(dir_ + "/s", "test_iter: 2")), Error);
}

TEST_F(SolverTest, SnapshotsAreNamedAsInBvlc) {
  auto solver = MakeSolver(SolverText(dir_ + "/lenet", "snapshot: 4", 8));
  solver->Solve();
  for (const char* name : {"/lenet_iter_4.caffemodel", "/lenet_iter_4.solverstate",
                           "/lenet_iter_8.caffemodel", "/lenet_iter_8.solverstate"}) {
    EXPECT_TRUE(FileExists(dir_ + name)) << name;
  }
}

TEST_F(SolverTest, UnwritableSnapshotFolderIsReportedBeforeTraining) {
  try {
    MakeSolver(SolverText("/nonexistent/folder/lenet", "snapshot: 4"));
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/folder/lenet"), std::string::npos)
        << e.what();
  }
}

// An uninterrupted run and a run stopped at a snapshot and resumed end bit-identical.
void CheckResumeIsExact(const std::string& dir, const std::string& format) {
  const std::string extra = "snapshot_format: " + format;
  auto straight = MakeSolver(SolverText(dir + "/straight", extra));
  straight->Solve();
  ASSERT_EQ(straight->iter(), 20);

  auto first_half = MakeSolver(SolverText(dir + "/half", extra, 10));
  first_half->Solve();
  const std::string state = dir + "/half_iter_10.solverstate" + (format == "HDF5" ? ".h5" : "");
  ASSERT_TRUE(FileExists(state)) << state;

  // A fresh process would start with a differently seeded generator: perturb ours to prove
  // the state file, not luck, restores it.
  Caffe::set_random_seed(555);
  auto resumed = MakeSolver(SolverText(dir + "/resumed", extra));
  resumed->Solve(state);
  ASSERT_EQ(resumed->iter(), 20);
  ExpectSameParams(straight.get(), resumed.get());
  auto* a = dynamic_cast<SGDSolver<float>*>(straight.get());
  auto* b = dynamic_cast<SGDSolver<float>*>(resumed.get());
  for (size_t i = 0; i < a->history().size(); ++i) {
    for (int j = 0; j < a->history()[i]->count(); ++j) {
      ASSERT_EQ(a->history()[i]->cpu_data()[j], b->history()[i]->cpu_data()[j]);
    }
  }
}

TEST_F(SolverTest, ResumingFromABinarySnapshotEndsWithTheSameWeights) {
  CheckResumeIsExact(dir_, "BINARYPROTO");
}

TEST_F(SolverTest, ResumingFromAnHDF5SnapshotEndsWithTheSameWeights) {
  CheckResumeIsExact(dir_, "HDF5");
}

TEST_F(SolverTest, ResumingFromAWeightsFileIsAClearError) {
  auto solver = MakeSolver(SolverText(dir_ + "/w", "", 2));
  solver->Solve();
  auto again = MakeSolver(SolverText(dir_ + "/w", "", 4));
  try {
    again->Solve(dir_ + "/w_iter_2.caffemodel");
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(".solverstate"), std::string::npos) << e.what();
  }
}

TEST_F(SolverTest, StopRequestEndsTrainingWithASnapshot) {
  auto solver = MakeSolver(SolverText(dir_ + "/stopped", ""));
  int polls = 0;
  solver->SetActionFunction(
      [&polls] { return ++polls == 3 ? SolverAction::STOP : SolverAction::NONE; });
  solver->Solve();
  EXPECT_EQ(solver->iter(), 3);
  EXPECT_TRUE(solver->requested_early_exit());
  EXPECT_TRUE(FileExists(dir_ + "/stopped_iter_3.solverstate"));
}

TEST_F(SolverTest, SnapshotRequestWritesASnapshotAndGoesOn) {
  auto solver = MakeSolver(SolverText(dir_ + "/asked", " snapshot_after_train: false", 6));
  int polls = 0;
  solver->SetActionFunction(
      [&polls] { return ++polls == 2 ? SolverAction::SNAPSHOT : SolverAction::NONE; });
  solver->Solve();
  EXPECT_EQ(solver->iter(), 6);
  EXPECT_TRUE(FileExists(dir_ + "/asked_iter_2.caffemodel"));
  EXPECT_FALSE(FileExists(dir_ + "/asked_iter_6.caffemodel"));
}

// A process killed while writing a snapshot (here by the file-size limit: SIGXFSZ, as a full disk
// or a kill would) leaves the previous snapshot of that name intact.
TEST_F(SolverTest, SnapshotInterruptedMidWriteLeavesThePreviousOneIntact) {
  auto solver = MakeSolver(SolverText(dir_ + "/atomic", " snapshot_after_train: false", 2));
  solver->Step(2);
  solver->Snapshot();
  const std::string model = dir_ + "/atomic_iter_2.caffemodel";
  NetParameter before;
  ReadProtoFromBinaryFile(model, &before);
  std::string before_bytes;
  before.SerializeToString(&before_bytes);
  ASSERT_GT(before_bytes.size(), 512u);

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Change the weights, then try to overwrite the snapshot with at most 256 bytes of room.
    solver->net()->layer_by_name("ip1")->blobs()[0]->scale_data(3);
    struct rlimit limit = {256, 256};
    setrlimit(RLIMIT_FSIZE, &limit);
    solver->Snapshot();
    _exit(0);  // not reached: the write is killed
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ) << "status " << status;
  NetParameter after;
  ReadProtoFromBinaryFile(model, &after);
  std::string after_bytes;
  after.SerializeToString(&after_bytes);
  EXPECT_EQ(before_bytes, after_bytes) << "the previous snapshot was damaged";
}

TEST_F(SolverTest, IterSizeAccumulatesAndAveragesTheGradient) {
  // Same data every pass (constant fillers): iter_size 3 must equal iter_size 1.
  const std::string net = R"(
    net_param {
      layer { name: "data" type: "DummyData" top: "data" top: "t"
        dummy_data_param { shape { dim: 4 dim: 3 } shape { dim: 4 dim: 2 }
          data_filler { type: "constant" value: 0.5 } data_filler { type: "constant" value: 1 } } }
      layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
        inner_product_param { num_output: 2 weight_filler { type: "gaussian" } } }
      layer { name: "loss" type: "EuclideanLoss" bottom: "ip" bottom: "t" top: "loss" }
    })";
  auto one = MakeSolver("base_lr: 0.1 lr_policy: \"fixed\" random_seed: 3" + net);
  auto three = MakeSolver("base_lr: 0.1 lr_policy: \"fixed\" random_seed: 3 iter_size: 3" + net);
  one->Step(4);
  three->Step(4);
  const auto& a = one->net()->learnable_params();
  const auto& b = three->net()->learnable_params();
  for (size_t i = 0; i < a.size(); ++i) {
    for (int j = 0; j < a[i]->count(); ++j) {
      EXPECT_NEAR(a[i]->cpu_data()[j], b[i]->cpu_data()[j], 1e-6);
    }
  }
}

}  // namespace caffe

namespace caffe {

namespace {
// Records the order of the parallel-training hooks and replaces the loss, as DDL does with the
// average over learners.
class RecordingCallback : public Solver<float>::Callback {
 public:
  void on_start() override { events += "s"; }
  void on_loss_ready(float* loss) override {
    events += "l";
    *loss = 42;
  }
  void on_gradients_ready() override { events += "g"; }
  std::string events;
};
}  // namespace

TEST_F(SolverTest, CallbacksRunInOrderAndMayReplaceTheLossShown) {
  auto solver = MakeSolver(SolverText(MakeTempDir("callbacks") + "/s", "", 3));
  RecordingCallback callback;
  solver->add_callback(&callback);
  solver->Step(3);
  EXPECT_EQ(callback.events, "slgslgslg");
  EXPECT_FLOAT_EQ(solver->smoothed_loss(), 42);
}

}  // namespace caffe

namespace caffe {

namespace {
// The warnings logged while it lives (the tests' log level lets them through meanwhile).
class WarningCollector : public google::LogSink {
 public:
  WarningCollector() : saved_level_(FLAGS_minloglevel) {
    FLAGS_minloglevel = google::GLOG_WARNING;
    google::AddLogSink(this);
  }
  ~WarningCollector() override {
    google::RemoveLogSink(this);
    FLAGS_minloglevel = saved_level_;
  }
  void send(google::LogSeverity severity, const char*, const char*, int, const struct ::tm*,
            const char* message, size_t message_len) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (severity == google::GLOG_WARNING) warnings_.emplace_back(message, message_len);
  }
  std::vector<std::string> warnings() {
    std::lock_guard<std::mutex> lock(mutex_);
    return warnings_;
  }

 private:
  int saved_level_;
  std::mutex mutex_;
  std::vector<std::string> warnings_;
};

// The warnings `iters` steps of `solver` log.
std::vector<std::string> WarningsOfSteps(Solver<float>* solver, int iters) {
  WarningCollector collector;
  solver->Step(iters);
  return collector.warnings();
}

// A linear regression on constant data: `data_value` in each of the 4x3 inputs, targets 0,
// with `layers` between the data and the fully connected layer "ip" (which reads "x").
std::string RegressionSolverText(const std::string& base_lr, const std::string& data_value,
                                 const std::string& layers = "") {
  return R"(base_lr: )" + base_lr + R"( lr_policy: "fixed" display: 0 random_seed: 3
    net_param {
      layer { name: "data" type: "DummyData" top: "data" top: "t"
        dummy_data_param { shape { dim: 4 dim: 3 } shape { dim: 4 dim: 2 }
          data_filler { type: "constant" value: )" +
         data_value + R"( }
          data_filler { type: "constant" value: 0 } } }
      )" +
         (layers.empty() ? R"(layer { name: "x" type: "Split" bottom: "data" top: "x" })"
                         : layers) +
         R"(
      layer { name: "ip" type: "InnerProduct" bottom: "x" top: "ip"
        inner_product_param { num_output: 2 weight_filler { type: "constant" value: 1 } } }
      layer { name: "loss" type: "EuclideanLoss" bottom: "ip" bottom: "t" top: "loss" }
    })";
}
}  // namespace

TEST_F(SolverTest, ANonFiniteLossIsReportedOnceWithWhereItCameFrom) {
  auto solver = MakeSolver(RegressionSolverText("0.1", "nan"));
  const std::vector<std::string> warnings = WarningsOfSteps(solver.get(), 4);
  ASSERT_EQ(warnings.size(), 1u) << "one warning, not one per iteration";
  EXPECT_EQ(warnings[0],
            "the training loss at iteration 0 is nan; where it came from: the data layer 'data' "
            "(DummyData) made 12 of 12 values of its top 'data' non-finite. The input holds NaN "
            "or inf: check the data source.");
}

TEST_F(SolverTest, ADivergingLossNamesTheLastFiniteIterationAndTheMagnitudes) {
  // Iteration 0's step takes the weights and biases to -3e20 (a gradient of 3 each); at
  // iteration 1 the outputs are -1.2e21 and their squares overflow a float in the loss layer.
  auto solver = MakeSolver(RegressionSolverText("1e20", "1"));
  const std::vector<std::string> warnings = WarningsOfSteps(solver.get(), 4);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "the training loss at iteration 1 is inf (finite at iteration 0); where it came "
            "from: layer 'loss' (EuclideanLoss) made 1 of 1 values of its top 'loss' non-finite "
            "from finite bottoms (largest magnitude 1.2e+21). Magnitudes this large mean "
            "training diverged: lower base_lr (1e+20) or set clip_gradients.");
}

TEST_F(SolverTest, LearnersNameThemselvesAndOnlyTheRootBlamesTheSharedWeights) {
  struct LearnerRank {  // this thread as learner `rank` of 2, until the end of the scope
    explicit LearnerRank(int rank) {
      Caffe::set_solver_count(2);
      Caffe::set_solver_rank(rank);
    }
    ~LearnerRank() {
      Caffe::set_solver_count(1);
      Caffe::set_solver_rank(0);
    }
  };
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int rank : {0, 1}) {
    LearnerRank learner(rank);
    auto bad_data = MakeSolver(RegressionSolverText("0.1", "nan"));
    auto bad_weights = MakeSolver(RegressionSolverText("0.1", "1"));
    bad_weights->net()->layer_by_name("ip")->blobs()[0]->mutable_cpu_data()[0] = nan;
    WarningCollector collector;
    bad_data->Step(1);
    bad_weights->Step(1);
    const std::vector<std::string> warnings = collector.warnings();
    ASSERT_EQ(warnings.size(), rank == 0 ? 2u : 1u) << "rank " << rank;
    EXPECT_EQ(warnings[0].rfind("learner " + std::to_string(rank) +
                                    ": the training loss at iteration 0 is nan; where it came "
                                    "from: the data layer 'data'",
                                0),
              0u)
        << warnings[0];
    if (rank == 0) {
      EXPECT_NE(warnings[1].find("the weights of 'ip' are not finite (param 0: 1 of 6 values). "
                                 "An update made them so, from gradients that overflowed or "
                                 "were not finite (backward reaches the last layer named "
                                 "first): lower base_lr (0.1) or set clip_gradients."),
                std::string::npos)
          << warnings[1];
    }
  }
}

TEST_F(SolverTest, ATestNetsNonFiniteLossIsReportedOncePerRun) {
  // The TEST phase reads its own data, with a NaN in it; training stays finite.
  auto solver = MakeSolver(R"(base_lr: 0.1 lr_policy: "fixed" display: 0 random_seed: 3
    test_iter: 2 test_interval: 1
    net_param {
      layer { name: "train_data" type: "DummyData" top: "data" top: "t" include { phase: TRAIN }
        dummy_data_param { shape { dim: 4 dim: 3 } shape { dim: 4 dim: 2 }
          data_filler { type: "constant" value: 1 } data_filler { type: "constant" value: 0 } } }
      layer { name: "test_data" type: "DummyData" top: "data" top: "t" include { phase: TEST }
        dummy_data_param { shape { dim: 4 dim: 3 } shape { dim: 4 dim: 2 }
          data_filler { type: "constant" value: -inf } data_filler { type: "constant" value: 0 } } }
      layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
        inner_product_param { num_output: 2 weight_filler { type: "constant" value: 1 } } }
      layer { name: "loss" type: "EuclideanLoss" bottom: "ip" bottom: "t" top: "loss" }
    })");
  // Tests at iterations 0, 1 and 2.
  const std::vector<std::string> warnings = WarningsOfSteps(solver.get(), 3);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "the loss of test net #0 at iteration 0 (test batch 0) is inf; where it came from: "
            "the data layer 'test_data' (DummyData) made 12 of 12 values of its top 'data' "
            "non-finite. The input holds NaN or inf: check the data source.");
}

TEST_F(SolverTest, ALayerFailingOnOrdinaryValuesIsNotCalledDivergence) {
  auto solver = MakeSolver(RegressionSolverText(
      "0.1", "0", R"(layer { name: "log" type: "Log" bottom: "data" top: "x" })"));
  const std::vector<std::string> warnings = WarningsOfSteps(solver.get(), 2);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "the training loss at iteration 0 is inf; where it came from: layer 'log' (Log) "
            "made 12 of 12 values of its top 'x' non-finite from finite bottoms (largest "
            "magnitude 0). The layer's own arithmetic failed on these values (a log of zero or "
            "of a negative value, an exp or power out of range, a division by zero).");
}

}  // namespace caffe
