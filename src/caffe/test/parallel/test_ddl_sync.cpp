// DdlSync, data-parallel training across the MPI processes of the test: N learners at batch B
// end with the weights of one process at batch N x B (LeNet-like net on an LMDB, every mode, with
// and without buckets, with iter_size), all learners hold identical weights, the Data layer's
// shares are disjoint and cover the records, gradients are packed into buckets in backward order
// (shared params once, ready after their lowest user), the loss shown is the learners' average,
// stop and snapshot requests are agreed on, and only rank 0 writes snapshots.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "caffe/io/io.hpp"
#include "caffe/parallel/ddl_sync.hpp"
#include "caffe/sgd_solvers.hpp"
#include "caffe/solver_factory.hpp"
#include "caffe/test/ddl_test_util.hpp"
#include "caffe/test/mpi_test_main.hpp"

namespace caffe {

namespace {

constexpr int kBatch = 4;  // per learner
constexpr int kIterations = 6;

std::unique_ptr<Solver<float>> MakeSolver(const std::string& text) {
  SolverParameter param;
  ParseProtoFromText(text, "test solver", &param);
  Caffe::set_mode(Caffe::CPU);
  return std::unique_ptr<Solver<float>>(SolverRegistry<float>::CreateSolver(param));
}

std::vector<std::vector<float>> Weights(Solver<float>* solver) {
  std::vector<std::vector<float>> weights;
  for (Blob<float>* param : solver->net()->learnable_params()) {
    weights.emplace_back(param->cpu_data(), param->cpu_data() + param->count());
  }
  return weights;
}

// This process as learner `rank` of `count`, as the caffe tool sets it up for -ddl.
void BeLearner(int rank, int count) {
  Caffe::set_solver_count(count);
  Caffe::set_solver_rank(rank);
  Caffe::set_multiprocess(count > 1);
}

// Trains with DDL on every rank and returns this learner's final weights.
std::vector<std::vector<float>> TrainWithDdl(const std::string& solver_text, const std::string& ddl,
                                             bool bvlc = false) {
  BeLearner(WorldRank(), WorldSize());
  DdlOptions options = ParseDdlOptions(ddl);
  options.bvlc = bvlc;
  std::vector<std::vector<float>> weights;
  {
    DdlSession session(options);
    std::unique_ptr<Solver<float>> solver = MakeSolver(solver_text);
    {
      DdlSync<float> sync(solver.get(), &session);
      sync.Solve();
      weights = Weights(solver.get());
    }
    session.Finish();
  }
  BeLearner(0, 1);
  return weights;
}

// Every rank holds bitwise rank 0's weights.
void ExpectSameWeightsOnEveryLearner(const std::vector<std::vector<float>>& weights) {
  for (size_t i = 0; i < weights.size(); ++i) {
    std::vector<float> root = weights[i];
    MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
    EXPECT_EQ(root, weights[i]) << "learner " << WorldRank() << " drifted from rank 0 in blob "
                                << i;
  }
}

}  // namespace

class DdlSyncTest : public MpiTest {
 protected:
  // An LMDB for N x B x iterations records, written by rank 0 into a folder all ranks see.
  std::string Dataset(bool label_is_index = false, int iterations = kIterations) {
    const std::string dir = SharedTempDir("ddl_sync");
    const std::string source = dir + "/images_lmdb";
    if (WorldRank() == 0)
      WriteDdlTestImages(source, WorldSize() * kBatch * iterations, label_is_index);
    MPI_Barrier(MPI_COMM_WORLD);
    return source;
  }
};

TEST_F(DdlSyncTest, NLearnersAtBatchBMatchOneProcessAtBatchNTimesB) {
  const std::string source = Dataset();
  // The reference: one process reading the same records N x B at a time.
  std::vector<std::vector<float>> reference;
  if (WorldRank() == 0) {
    auto solver = MakeSolver(
        DdlTestSolver(source, WorldSize() * kBatch, kIterations, "snapshot_after_train: false"));
    const auto initial = Weights(solver.get());
    solver->Solve();
    reference = Weights(solver.get());
    size_t blob = 0;
    EXPECT_GT(RelativeDifference(initial, reference, &blob), 1e-3) << "training changed nothing";
  }
  const std::string half = std::to_string(WorldSize() / 2);
  const std::vector<std::string> modes = {"-dbg_level 0",
                                          "-mode m",
                                          "-mode c -bucket_kb 1",
                                          "-mode b:" + half + "x2",
                                          "-mode p:" + half + "x1x2",
                                          "-mode r:1x" + std::to_string(WorldSize())};
  for (const std::string& ddl : modes) {
    for (bool bvlc : {false, true}) {
      if (bvlc && ddl != "-mode c -bucket_kb 1") continue;
      SCOPED_TRACE("-ddl \"" + ddl + "\"" + (bvlc ? " -bvlc" : ""));
      const auto weights = TrainWithDdl(
          DdlTestSolver(source, kBatch, kIterations, "snapshot_after_train: false"), ddl, bvlc);
      ExpectSameWeightsOnEveryLearner(weights);
      if (WorldRank() == 0) {
        size_t blob = 0;
        const double difference = RelativeDifference(weights, reference, &blob);
        EXPECT_LE(difference, 1e-5) << "blob " << blob;
      }
    }
  }
}

TEST_F(DdlSyncTest, IterSizeAccumulatesBeforeReducing) {
  const std::string source = Dataset(false, 2 * kIterations);
  std::vector<std::vector<float>> reference;
  if (WorldRank() == 0) {
    auto solver = MakeSolver(DdlTestSolver(source, WorldSize() * kBatch, kIterations,
                                           "snapshot_after_train: false iter_size: 2"));
    solver->Solve();
    reference = Weights(solver.get());
  }
  const auto weights = TrainWithDdl(
      DdlTestSolver(source, kBatch, kIterations, "snapshot_after_train: false iter_size: 2"),
      "-bucket_kb 1");
  ExpectSameWeightsOnEveryLearner(weights);
  if (WorldRank() == 0) {
    size_t blob = 0;
    EXPECT_LE(RelativeDifference(weights, reference, &blob), 1e-5) << "blob " << blob;
  }
}

TEST_F(DdlSyncTest, DataSharesAreDisjointAndCoverTheRecords) {
  const std::string source = Dataset(true);
  BeLearner(WorldRank(), WorldSize());
  NetParameter param;
  ParseProtoFromText("name: \"reader\" " + DdlTestDataLayer(source, kBatch), "reader", &param);
  param.mutable_state()->set_phase(TRAIN);
  std::vector<int> labels;
  {
    Net<float> net(param);
    for (int i = 0; i < kIterations; ++i) {
      net.Forward();
      const Blob<float>* label = net.blob_by_name("label").get();
      for (int j = 0; j < label->count(); ++j)
        labels.push_back(static_cast<int>(label->cpu_data()[j]));
    }
  }
  BeLearner(0, 1);
  std::vector<int> all(labels.size() * WorldSize());
  MPI_Allgather(labels.data(), static_cast<int>(labels.size()), MPI_INT, all.data(),
                static_cast<int>(labels.size()), MPI_INT, MPI_COMM_WORLD);
  const std::set<int> distinct(all.begin(), all.end());
  EXPECT_EQ(distinct.size(), all.size()) << "a record was read by two learners";
  EXPECT_EQ(*distinct.begin(), 0);
  EXPECT_EQ(*distinct.rbegin(), static_cast<int>(all.size()) - 1) << "records were skipped";
  // Learner r reads records r, r + N, r + 2N, ...
  for (size_t k = 0; k < labels.size(); ++k) {
    EXPECT_EQ(labels[k], WorldRank() + static_cast<int>(k) * WorldSize()) << k;
  }
}

namespace {

// Three inner products of 20 x 20, the outer two sharing their weights ("shared"), over
// DummyData: with 1 KiB buckets every weight gets a bucket of its own.
std::string SharedParamSolver(int rank_value, const std::string& extra) {
  return "base_lr: 0.01 lr_policy: \"fixed\" display: 0 random_seed: 5 "
         "snapshot_after_train: false " +
         extra + R"(
      net_param { name: "Shared"
        layer { name: "data" type: "DummyData" top: "data" top: "target"
          dummy_data_param { shape { dim: 2 dim: 20 } shape { dim: 2 dim: 20 }
            data_filler { type: "constant" value: )" +
         std::to_string(rank_value) + R"( }
            data_filler { type: "constant" value: 0 } } }
        layer { name: "ip_a" type: "InnerProduct" bottom: "data" top: "a"
          param { name: "shared" } param { name: "shared_bias" }
          inner_product_param { num_output: 20 weight_filler { type: "constant" value: 0.02 } } }
        layer { name: "ip_b" type: "InnerProduct" bottom: "a" top: "b"
          inner_product_param { num_output: 20 weight_filler { type: "constant" value: 0.02 } } }
        layer { name: "ip_c" type: "InnerProduct" bottom: "b" top: "c"
          param { name: "shared" } param { name: "shared_bias" }
          inner_product_param { num_output: 20 weight_filler { type: "constant" value: 0.02 } } }
        layer { name: "loss" type: "EuclideanLoss" bottom: "c" bottom: "target" top: "loss" }
      })";
}

}  // namespace

TEST_F(DdlSyncTest, BucketsFollowBackwardAndHoldEachParamOnce) {
  BeLearner(WorldRank(), WorldSize());
  {
    DdlSession session(ParseDdlOptions("-bucket_kb 1"));
    auto solver = MakeSolver(SharedParamSolver(1, "max_iter: 2"));
    DdlSync<float> sync(solver.get(), &session);
    const auto& buckets = sync.buckets();
    const Blobs<float>& learnable = solver->net()->learnable_params();
    ASSERT_EQ(learnable.size(), 4u) << "shared weight and bias, ip_b's weight and bias";
    std::vector<int> seen(learnable.size(), 0);
    size_t offset = 0;
    for (size_t b = 0; b < buckets.size(); ++b) {
      EXPECT_EQ(buckets[b].offset, offset);
      if (b > 0) {
        EXPECT_LE(buckets[b].ready_layer, buckets[b - 1].ready_layer);
      }
      const float* expected_diff = nullptr;
      for (int index : buckets[b].params) {
        ++seen[index];
        // The diffs lie back to back in the bucket.
        if (expected_diff) {
          EXPECT_EQ(learnable[index]->cpu_diff(), expected_diff);
        }
        expected_diff = learnable[index]->cpu_diff() + learnable[index]->count();
        offset += learnable[index]->count();
      }
      offset = buckets[b].offset + buckets[b].count;
    }
    EXPECT_EQ(offset, sync.gradient_count());
    EXPECT_EQ(seen, std::vector<int>(learnable.size(), 1));
    // The shared params are complete only after ip_a (layer 1), their lowest user; ip_b's after
    // layer 2. So ip_b's bucket comes first.
    const int ip_a = 1, ip_b = 2;
    for (const auto& bucket : buckets) {
      for (int index : bucket.params) {
        EXPECT_EQ(bucket.ready_layer, index < 2 ? ip_a : ip_b) << "param " << index;
      }
    }
    EXPECT_EQ(buckets.front().ready_layer, ip_b);
    sync.Solve();
    session.Finish();
  }
  BeLearner(0, 1);
}

TEST_F(DdlSyncTest, TheLossShownIsTheAverageOverLearners) {
  BeLearner(WorldRank(), WorldSize());
  {
    DdlSession session(ParseDdlOptions("-mode r"));
    // Each learner's data is its rank + 1, so each has a different loss.
    auto solver = MakeSolver(SharedParamSolver(WorldRank() + 1, "max_iter: 1"));
    auto own = MakeSolver(SharedParamSolver(WorldRank() + 1, "max_iter: 1"));
    float own_loss = 0;
    own->net()->Forward(&own_loss);
    std::vector<float> losses(WorldSize());
    MPI_Allgather(&own_loss, 1, MPI_FLOAT, losses.data(), 1, MPI_FLOAT, MPI_COMM_WORLD);
    double mean = 0;
    for (float loss : losses) mean += loss / WorldSize();
    ASSERT_NE(losses.front(), losses.back());
    DdlSync<float> sync(solver.get(), &session);
    solver->Step(1);
    EXPECT_NEAR(solver->smoothed_loss(), mean, 1e-5 * mean);
    EXPECT_NEAR(solver->net()->output_blobs()[0]->cpu_data()[0], mean, 1e-5 * mean);
    session.Finish();
  }
  BeLearner(0, 1);
}

TEST_F(DdlSyncTest, AStopRequestOnOneLearnerStopsEveryLearnerAtTheSameIteration) {
  BeLearner(WorldRank(), WorldSize());
  {
    DdlSession session(ParseDdlOptions("-mode r"));
    auto solver = MakeSolver(SharedParamSolver(1, "max_iter: 10"));
    int calls = 0;
    ActionCallback local = [&calls] {
      return (WorldRank() == 1 && ++calls == 3) ? SolverAction::STOP : SolverAction::NONE;
    };
    DdlSync<float> sync(solver.get(), &session, local);
    sync.Solve();
    EXPECT_EQ(solver->iter(), 3);
    EXPECT_TRUE(solver->requested_early_exit());
    session.Finish();
  }
  BeLearner(0, 1);
}

TEST_F(DdlSyncTest, OnlyRankZeroWritesSnapshotsEvenWhenAnotherLearnerAsks) {
  const std::string dir = SharedTempDir("ddl_snapshots");
  // Each learner gets its own prefix, so a snapshot by any other learner would show.
  const std::string prefix = dir + "/rank" + std::to_string(WorldRank());
  BeLearner(WorldRank(), WorldSize());
  {
    DdlSession session(ParseDdlOptions("-mode r"));
    auto solver = MakeSolver(
        SharedParamSolver(1, "max_iter: 5 snapshot: 2 snapshot_prefix: \"" + prefix + "\""));
    int calls = 0;
    ActionCallback local = [&calls] {
      // The last learner asks for a snapshot after the first iteration.
      return (WorldRank() == WorldSize() - 1 && ++calls == 1) ? SolverAction::SNAPSHOT
                                                              : SolverAction::NONE;
    };
    DdlSync<float> sync(solver.get(), &session, local);
    sync.Solve();
    EXPECT_EQ(solver->iter(), 5);
    session.Finish();
  }
  BeLearner(0, 1);
  MPI_Barrier(MPI_COMM_WORLD);
  std::set<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    files.insert(entry.path().filename().string());
  }
  if (WorldRank() == 0) {
    const std::set<std::string> expected = {"rank0_iter_1.caffemodel", "rank0_iter_1.solverstate",
                                            "rank0_iter_2.caffemodel", "rank0_iter_2.solverstate",
                                            "rank0_iter_4.caffemodel", "rank0_iter_4.solverstate"};
    EXPECT_EQ(files, expected);
  }
}

namespace {

// Sleeps before every layer's forward: makes this learner the slow one.
class Slowdown : public Net<float>::Callback {
 public:
  void run(int layer) override { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }
};

}  // namespace

TEST_F(DdlSyncTest, RebindNamesALearnerSlowestInThreeChecksInARow) {
  BeLearner(WorldRank(), WorldSize());
  {
    DdlSession session(ParseDdlOptions("-rebind_iter 2"));
    auto solver = MakeSolver(SharedParamSolver(1, "max_iter: 6"));
    Slowdown slowdown;
    if (WorldRank() == 1) solver->net()->add_before_forward(&slowdown);
    DdlSync<float> sync(solver.get(), &session);
    solver->Step(4);
    EXPECT_EQ(sync.rebind_report(), "") << "only two checks so far";
    solver->Step(2);
    const std::string report = sync.rebind_report();
    EXPECT_NE(report.find("learner 1 (host "), std::string::npos) << report;
    EXPECT_NE(report.find("slowest in the last 3 checks"), std::string::npos) << report;
    if (WorldRank() == 1) {
      // What it did about it: re-bound its threads, or found nothing to re-map.
      EXPECT_TRUE(report.find("re-bound") != std::string::npos ||
                  report.find("nothing to re-map") != std::string::npos)
          << report;
    }
    session.Finish();
  }
  BeLearner(0, 1);
}

}  // namespace caffe
