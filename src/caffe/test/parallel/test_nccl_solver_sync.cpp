// NcclSolverSync (pycaffe's caffe.NCCL) with one thread per rank, each with its own GPU and
// solver, as the processes of python/train.py have: Broadcast gives every solver rank 0's
// weights, on_gradients_ready leaves every solver the mean of the gradients. Without NCCL, the
// clear error. (python/test/test_nccl.py trains with it across processes.)
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "caffe/io/io.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/parallel/nccl_solver_sync.hpp"
#include "caffe/solver_factory.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {
namespace {

// A solver whose net has two learned blobs of 24 and 4 values.
constexpr char kSolver[] = R"(
  base_lr: 0.1 lr_policy: "fixed" max_iter: 1 solver_mode: GPU
  net_param {
    layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 6 } } }
    layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
            inner_product_param { num_output: 4 weight_filler { type: "gaussian" } } }
  })";

TEST(NcclSolverSyncTest, WithoutNcclItSaysWhatItNeeds) {
  if (NcclSolverSyncBuilt()) GTEST_SKIP() << "this build has NCCL";
  try {
    NcclSolverSync<float>::NewUid();
    FAIL() << "a unique id without NCCL";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("caffe.NCCL needs a GPU build of Caffe with NCCL"),
              std::string::npos)
        << error.what();
  }
}

#ifndef CPU_ONLY
// Rank r's thread: its GPU, solver and sync; it fills its gradients with r + 1 (and its
// weights with 10 r), broadcasts, reduces, and records what it then holds.
struct Rank {
  std::vector<float> weights, gradients;
  std::string error;
};

void RunRank(int rank, int count, const std::string& uid, Rank* out) {
  try {
    Caffe::SetDevice(rank);
    Caffe::set_mode(Caffe::GPU);
    Caffe::set_solver_count(count);
    Caffe::set_solver_rank(rank);
    SolverParameter param;
    ParseProtoFromText(kSolver, "NCCL test solver", &param);
    std::unique_ptr<Solver<float>> solver(SolverRegistry<float>::CreateSolver(param));
    NcclSolverSync<float> sync(solver.get(), uid);
    EXPECT_EQ(sync.rank(), rank);
    EXPECT_EQ(sync.size(), count);
    for (Blob<float>* param : solver->net()->learnable_params()) {
      caffe_set(param->count(), static_cast<float>(10 * rank), param->mutable_cpu_data());
      caffe_set(param->count(), rank + 1.0f, param->mutable_cpu_diff());
    }
    sync.Broadcast();
    sync.on_gradients_ready();
    for (Blob<float>* param : solver->net()->learnable_params()) {
      out->weights.insert(out->weights.end(), param->cpu_data(),
                          param->cpu_data() + param->count());
      out->gradients.insert(out->gradients.end(), param->cpu_diff(),
                            param->cpu_diff() + param->count());
    }
  } catch (const std::exception& error) {
    out->error = error.what();
  }
  Caffe::set_solver_count(1);
  Caffe::set_solver_rank(0);
}

TEST(NcclSolverSyncTest, BroadcastGivesRankZerosWeightsAndGradientsBecomeTheirMean) {
  if (!NcclSolverSyncBuilt()) GTEST_SKIP() << "this build has no NCCL";
  int gpus = 0;
  if (!Caffe::GpuAvailable() || cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 2) {
    GTEST_SKIP() << "needs two GPUs (NCCL puts one rank on each)";
  }
  const std::string uid = NcclSolverSync<float>::NewUid();
  std::vector<Rank> ranks(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back(RunRank, rank, 2, uid, &ranks[rank]);
  }
  for (std::thread& thread : threads) thread.join();
  for (int rank = 0; rank < 2; ++rank) {
    ASSERT_EQ(ranks[rank].error, "") << "rank " << rank;
    ASSERT_EQ(ranks[rank].weights.size(), 28u);
    EXPECT_EQ(ranks[rank].weights, std::vector<float>(28, 0.0f)) << "rank " << rank;
    EXPECT_EQ(ranks[rank].gradients, std::vector<float>(28, 1.5f)) << "rank " << rank;
  }
}

TEST(NcclSolverSyncTest, AUidOfTheWrongSizeIsAClearError) {
  if (!NcclSolverSyncBuilt() || !Caffe::GpuAvailable()) GTEST_SKIP() << "needs NCCL and a GPU";
  Caffe::SetDevice(0);
  Caffe::set_mode(Caffe::GPU);
  SolverParameter param;
  ParseProtoFromText(kSolver, "NCCL test solver", &param);
  std::unique_ptr<Solver<float>> solver(SolverRegistry<float>::CreateSolver(param));
  try {
    NcclSolverSync<float> sync(solver.get(), "short");
    FAIL() << "a 5-byte uid was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("the NCCL unique id has 5 bytes"), std::string::npos)
        << error.what();
  }
  Caffe::set_mode(Caffe::CPU);
}
#endif  // CPU_ONLY

}  // namespace
}  // namespace caffe
