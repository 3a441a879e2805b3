// InProcessSync, multi-GPU training in one process (one solver per thread): N solver threads at
// batch B end with the weights of one solver at batch N x B (SGD with momentum, weight decay and
// a learning-rate step, over a Data layer each thread reads its own share of), every thread holds
// bitwise the same weights, the loss shown is the average over threads, only the root snapshots,
// a stop request from the root ends every thread at the same iteration, a worker's failure (at
// setup or in the middle of training) comes out of Run() as a caffe::Error without hanging, and
// resuming from a snapshot gives the weights of an uninterrupted run. In CPU mode here; the GPU
// cases (the same GPU twice: the shared-memory sum; every visible GPU: NCCL where built) skip
// without a GPU.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "caffe/io/db.hpp"
#include "caffe/io/io.hpp"
#include "caffe/parallel/in_process_sync.hpp"
#include "caffe/sgd_solvers.hpp"
#include "caffe/solver_factory.hpp"
#include "caffe/test/ddl_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

constexpr int kBatch = 4;  // per solver thread
constexpr int kIterations = 7;
constexpr int kRecords = 100;

// Records k = 0..count-1: a 1x8x8 image whose pixels depend on k, label k % 4; the record at
// `corrupt` (if >= 0) is not a Datum.
void WriteImages(const std::string& source, int count, int corrupt = -1) {
  TestImages images;
  images.side = 8;
  images.classes = 4;
  images.corrupt = corrupt;
  WriteTestImages(source, count, images);
}

// SGD with momentum and weight decay; the learning rate halves every 3 iterations. The net: Data
// (batch `batch`), a 3x3 convolution, ReLU, an inner product to 4 classes, softmax loss.
std::string SolverText(const std::string& source, int batch, const std::string& extra = "") {
  return "type: \"SGD\" base_lr: 0.05 lr_policy: \"step\" gamma: 0.5 stepsize: 3 "
         "momentum: 0.9 weight_decay: 0.0005 random_seed: 1701 display: 0 "
         "snapshot_after_train: false max_iter: " +
         std::to_string(kIterations) + " " + extra + R"(
      net_param { name: "Small"
        layer { name: "data" type: "Data" top: "data" top: "label" include { phase: TRAIN }
          transform_param { scale: 0.00390625 }
          data_param { source: ")" +
         source + "\" backend: LMDB batch_size: " + std::to_string(batch) + R"( } }
        layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
          convolution_param { num_output: 3 kernel_size: 3
            weight_filler { type: "xavier" } bias_filler { type: "constant" value: 0.1 } } }
        layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
        layer { name: "ip" type: "InnerProduct" bottom: "conv" top: "ip"
          inner_product_param { num_output: 4
            weight_filler { type: "xavier" } bias_filler { type: "constant" } } }
        layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
      })";
}

template <typename Dtype>
std::unique_ptr<Solver<Dtype>> MakeSolver(const std::string& text) {
  SolverParameter param;
  ParseProtoFromText(text, "test solver", &param);
  return std::unique_ptr<Solver<Dtype>>(SolverRegistry<Dtype>::CreateSolver(param));
}

template <typename Dtype>
std::vector<std::vector<float>> Weights(Solver<Dtype>* solver) {
  std::vector<std::vector<float>> weights;
  for (Blob<Dtype>* param : solver->net()->learnable_params()) {
    weights.emplace_back(param->cpu_data(), param->cpu_data() + param->count());
  }
  return weights;
}

// The packed weights of InProcessSync::final_weights, cut like the root's params.
template <typename Dtype>
std::vector<std::vector<float>> Split(const std::vector<Dtype>& packed, Net<Dtype>* net) {
  std::vector<std::vector<float>> weights;
  size_t offset = 0;
  for (Blob<Dtype>* param : net->learnable_params()) {
    if (offset + param->count() > packed.size()) break;
    weights.emplace_back(packed.begin() + offset, packed.begin() + offset + param->count());
    offset += param->count();
  }
  return weights;
}

// Caffe::set_solver_count for the root solver and the sync; back to one solver afterwards.
class SolverCountScope {
 public:
  explicit SolverCountScope(int count) {
    Caffe::set_solver_count(count);
    Caffe::set_solver_rank(0);
  }
  ~SolverCountScope() { Caffe::set_solver_count(1); }
};

// What a run of N solver threads left behind.
struct ThreadedRun {
  std::vector<std::vector<std::vector<float>>> weights;  // per rank, per param blob
  std::vector<int> iters;
  float root_loss = 0;
  bool root_stopped_early = false;
};

struct RunOptions {
  std::vector<int> devices;  // GPU mode: one per solver
  ActionCallback requests;
  std::function<void(int, SolverParameter*)> editor;
  std::string resume_file;
};

// Trains `solver_text` with `count` solver threads and returns what each ended with.
template <typename Dtype>
ThreadedRun TrainInThreads(const std::string& solver_text, int count,
                           const RunOptions& options = {}) {
  SolverCountScope scope(count);
  auto root = MakeSolver<Dtype>(solver_text);
  ThreadedRun run;
  {
    InProcessSync<Dtype> sync(root.get(), count, options.devices);
    if (options.requests) sync.SetActionFunction(options.requests);
    if (options.editor) sync.SetWorkerParamEditor(options.editor);
    sync.Run(options.resume_file.empty() ? nullptr : options.resume_file.c_str());
    for (int rank = 0; rank < count; ++rank) {
      run.weights.push_back(Split(sync.final_weights(rank), root->net().get()));
      run.iters.push_back(sync.final_iter(rank));
    }
    run.root_loss = static_cast<float>(root->smoothed_loss());
    run.root_stopped_early = root->requested_early_exit();
  }
  return run;
}

template <typename Dtype>
void ExpectBitwiseEqualOnEveryThread(const ThreadedRun& run) {
  for (size_t rank = 1; rank < run.weights.size(); ++rank) {
    EXPECT_EQ(run.weights[rank], run.weights[0])
        << "solver thread " << rank << " drifted from the root";
  }
}

}  // namespace

template <typename Dtype>
class InProcessSyncTest : public ::testing::Test {
 protected:
  InProcessSyncTest() : dir_(MakeTempDir("caffe_test_in_process_sync")) {
    source_ = dir_ + "/images_lmdb";
    WriteImages(source_, kRecords);
    Caffe::set_mode(Caffe::CPU);
  }
  ~InProcessSyncTest() override {
    Caffe::set_mode(Caffe::CPU);
    Caffe::set_solver_count(1);
    Caffe::set_solver_rank(0);
  }

  // One solver reading N x B records at a time: the reference.
  std::vector<std::vector<float>> TrainAlone(int batch, float* loss = nullptr,
                                             const std::string& extra = "") {
    auto solver = MakeSolver<Dtype>(SolverText(source_, batch, extra));
    const auto initial = Weights(solver.get());
    solver->Solve();
    auto weights = Weights(solver.get());
    size_t blob = 0;
    EXPECT_GT(RelativeDifference(initial, weights, &blob), 1e-3) << "training changed nothing";
    if (loss) *loss = static_cast<float>(solver->smoothed_loss());
    return weights;
  }

  std::string dir_, source_;
};

using Dtypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(InProcessSyncTest, Dtypes);

// Float: the sums run in another order (per thread, then across threads) than one solver's, so
// the weights agree to about 1e-6 of their largest value after 7 steps; 1e-5 is the bound.
// Double: 1e-12.
TYPED_TEST(InProcessSyncTest, NThreadsAtBatchBMatchOneSolverAtBatchNTimesB) {
  const double tolerance = sizeof(TypeParam) == 4 ? 1e-5 : 1e-12;
  for (int count : {2, 3}) {
    SCOPED_TRACE(std::to_string(count) + " solver threads");
    const auto reference = this->TrainAlone(count * kBatch);
    const ThreadedRun run = TrainInThreads<TypeParam>(SolverText(this->source_, kBatch), count);
    ExpectBitwiseEqualOnEveryThread<TypeParam>(run);
    EXPECT_EQ(run.iters, std::vector<int>(count, kIterations));
    size_t blob = 0;
    EXPECT_LE(RelativeDifference(run.weights[0], reference, &blob), tolerance) << "blob " << blob;
  }
}

TYPED_TEST(InProcessSyncTest, OneThreadIsOneSolver) {
  const auto reference = this->TrainAlone(kBatch);
  const ThreadedRun run = TrainInThreads<TypeParam>(SolverText(this->source_, kBatch), 1);
  size_t blob = 0;
  EXPECT_EQ(RelativeDifference(run.weights[0], reference, &blob), 0) << "blob " << blob;
}

TYPED_TEST(InProcessSyncTest, TheLossShownIsTheAverageOverThreads) {
  // With equal shares, the mean of the threads' mean losses is the loss over all N x B records.
  float reference_loss = 0;
  this->TrainAlone(2 * kBatch, &reference_loss);
  const ThreadedRun run = TrainInThreads<TypeParam>(SolverText(this->source_, kBatch), 2);
  EXPECT_NEAR(run.root_loss, reference_loss, 1e-5 * reference_loss);
}

TYPED_TEST(InProcessSyncTest, TheRootAloneSnapshotsOnScheduleAndOnRequest) {
  const std::string prefix = this->dir_ + "/snap";
  int calls = 0;
  RunOptions options;
  options.requests = [&calls] {
    return ++calls == 2 ? SolverAction::SNAPSHOT : SolverAction::NONE;  // after iteration 2
  };
  // A worker that snapshotted would stop the process (Snapshot checks for the root solver);
  // every worker keeps the root's prefix, so any extra file would show here.
  const ThreadedRun run = TrainInThreads<TypeParam>(
      SolverText(this->source_, kBatch, "snapshot: 3 snapshot_prefix: \"" + prefix + "\""), 3,
      options);
  EXPECT_EQ(run.iters, std::vector<int>(3, kIterations));
  std::set<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(this->dir_)) {
    if (entry.path().filename().string().rfind("snap", 0) == 0) {
      files.insert(entry.path().filename().string());
    }
  }
  const std::set<std::string> expected = {"snap_iter_2.caffemodel", "snap_iter_2.solverstate",
                                          "snap_iter_3.caffemodel", "snap_iter_3.solverstate",
                                          "snap_iter_6.caffemodel", "snap_iter_6.solverstate"};
  EXPECT_EQ(files, expected);
}

TYPED_TEST(InProcessSyncTest, AStopRequestFromTheRootEndsEveryThreadAtTheSameIteration) {
  int calls = 0;
  RunOptions options;
  options.requests = [&calls] {
    return ++calls == 3 ? SolverAction::STOP : SolverAction::NONE;  // read in iteration 2
  };
  const ThreadedRun run = TrainInThreads<TypeParam>(SolverText(this->source_, kBatch), 3, options);
  EXPECT_EQ(run.iters, std::vector<int>(3, 3));
  EXPECT_TRUE(run.root_stopped_early);
  ExpectBitwiseEqualOnEveryThread<TypeParam>(run);
}

TYPED_TEST(InProcessSyncTest, ResumingGivesTheWeightsOfAnUninterruptedRun) {
  const std::string prefix = this->dir_ + "/resume";
  const std::string snapshot_fields = "snapshot: 4 snapshot_prefix: \"" + prefix + "\"";
  const ThreadedRun uninterrupted =
      TrainInThreads<TypeParam>(SolverText(this->source_, kBatch, snapshot_fields), 2);
  RunOptions options;
  options.resume_file = prefix + "_iter_4.solverstate";
  const ThreadedRun resumed =
      TrainInThreads<TypeParam>(SolverText(this->source_, kBatch, snapshot_fields), 2, options);
  EXPECT_EQ(resumed.iters, std::vector<int>(2, kIterations));
  ExpectBitwiseEqualOnEveryThread<TypeParam>(resumed);
  EXPECT_EQ(resumed.weights[0], uninterrupted.weights[0]);
}

TYPED_TEST(InProcessSyncTest, AWorkerThatCannotBuildItsSolverFailsRunWithItsError) {
  RunOptions options;
  options.editor = [](int rank, SolverParameter* param) {
    if (rank != 2) return;
    param->mutable_net_param()->mutable_layer(0)->mutable_data_param()->set_source("/no/such/lmdb");
  };
  try {
    TrainInThreads<TypeParam>(SolverText(this->source_, kBatch), 3, options);
    FAIL() << "Run returned although solver thread 2 could not build its net";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("solver thread 2 of 3"), std::string::npos) << message;
    EXPECT_NE(message.find("/no/such/lmdb"), std::string::npos) << message;
  }
}

TYPED_TEST(InProcessSyncTest, AWorkerFailingInTheMiddleOfTrainingFailsRunWithoutHanging) {
  // Solver thread 1 of 2 reads stream positions 1, 3, 5, ...: position 17 is in its third batch.
  const std::string broken = this->dir_ + "/broken_lmdb";
  WriteImages(broken, kRecords, /*corrupt=*/17);
  RunOptions options;
  options.editor = [&broken](int rank, SolverParameter* param) {
    param->mutable_net_param()->mutable_layer(0)->mutable_data_param()->set_source(broken);
  };
  try {
    TrainInThreads<TypeParam>(SolverText(this->source_, kBatch), 2, options);
    FAIL() << "Run returned although solver thread 1 read a broken record";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("solver thread 1 of 2"), std::string::npos) << message;
    EXPECT_NE(message.find("not a valid Datum"), std::string::npos) << message;
  }
}

TYPED_TEST(InProcessSyncTest, TheRootMustBeBuiltForTheSolverCount) {
  auto root = MakeSolver<TypeParam>(SolverText(this->source_, kBatch));  // solver count 1
  EXPECT_THROW(InProcessSync<TypeParam>(root.get(), 2), Error);
}

// GPU mode: the same GPU twice (the shared-memory sum through host copies), and every visible
// GPU (NCCL where the build has it). Float on the GPU: 1e-4 (cuBLAS may pick other GEMM
// algorithms for the two batch sizes); double: 1e-10.
TYPED_TEST(InProcessSyncTest, GpuSolversMatchOneSolverAtBatchNTimesB) {
#ifdef CPU_ONLY
  GTEST_SKIP() << "CPU-only build: no GPU";
#else
  if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
  int visible = 0;
  ASSERT_EQ(cudaGetDeviceCount(&visible), cudaSuccess);
  std::vector<std::vector<int>> device_lists = {{0, 0}};
  if (visible >= 2) {
    device_lists.emplace_back();
    for (int d = 0; d < visible; ++d) device_lists.back().push_back(d);
  }
  const double tolerance = sizeof(TypeParam) == 4 ? 1e-4 : 1e-10;
  for (const std::vector<int>& devices : device_lists) {
    const int count = static_cast<int>(devices.size());
    std::string names;
    for (int d : devices) names += std::to_string(d) + " ";
    SCOPED_TRACE("GPUs " + names);
    Caffe::SetDevice(devices[0]);
    Caffe::set_mode(Caffe::GPU);
    const auto reference = this->TrainAlone(count * kBatch);
    RunOptions options;
    options.devices = devices;
    const ThreadedRun run =
        TrainInThreads<TypeParam>(SolverText(this->source_, kBatch), count, options);
    ExpectBitwiseEqualOnEveryThread<TypeParam>(run);
    EXPECT_EQ(run.iters, std::vector<int>(count, kIterations));
    size_t blob = 0;
    EXPECT_LE(RelativeDifference(run.weights[0], reference, &blob), tolerance) << "blob " << blob;
  }
  Caffe::set_mode(Caffe::CPU);
#endif
}

}  // namespace caffe
