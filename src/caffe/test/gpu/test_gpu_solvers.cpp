// Training on the GPU against training on the CPU: for every gradient-descent solver, the same
// small net (fixed inputs, two InnerProduct layers, EuclideanLoss) starts from the same weights and
// trains the same number of iterations in each mode, under plain settings, L2 and L1 weight decay
// with per-parameter decay_mult and lr_mult, iter_size 2, gradient clipping and all of them at
// once. The weights, the solvers' history blobs and the smoothed loss must agree within a stated
// tolerance, and after GPU training the weights, their diffs and the history must still live on
// the device (the update ran there). A snapshot taken on the GPU and resumed there continues as
// an uninterrupted GPU run. Skips where no GPU can be used.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "caffe/io/io.hpp"
#include "caffe/sgd_solvers.hpp"
#include "caffe/solver.hpp"
#include "caffe/solver_factory.hpp"
#include "caffe/test/gpu_layer_check.hpp"

namespace caffe {

namespace {

// N samples of D inputs; the net maps them through H hidden units to T targets.
constexpr int kSamples = 5, kInputs = 97, kHidden = 13, kTargets = 3;
// 6 iterations with lr_policy "step" (stepsize 3): two learning rates and six Adam corrections.
constexpr int kIterations = 6;

// Settings that make each solver's rule do real work (momentum where it takes one).
std::string BaseSettings(const std::string& type) {
  if (type == "SGD" || type == "Nesterov") return "base_lr: 0.05 momentum: 0.9";
  if (type == "AdaGrad") return "base_lr: 0.05 delta: 1e-6";
  if (type == "RMSProp") return "base_lr: 0.01 rms_decay: 0.9 delta: 1e-6";
  if (type == "AdaDelta") return "base_lr: 1.0 momentum: 0.95 delta: 1e-6";
  if (type == "Adam") return "base_lr: 0.01 momentum: 0.9 momentum2: 0.999 delta: 1e-8";
  ADD_FAILURE() << "no settings for solver " << type;
  return "";
}

struct Variant {
  const char* name;
  const char* settings;
};

// The gradient norm of this problem is far above 0.01 and 0.5, so clipping always scales.
const Variant kVariants[] = {
    {"plain", ""},
    {"L2 decay", "weight_decay: 0.05 regularization_type: 'L2'"},
    {"L1 decay", "weight_decay: 0.01 regularization_type: 'L1'"},
    {"iter_size 2", "iter_size: 2"},
    {"clipping", "clip_gradients: 0.01"},
    {"all together",
     "weight_decay: 0.05 regularization_type: 'L2' iter_size: 2 clip_gradients: 0.5"},
};

SolverParameter MakeSolverParam(const std::string& type, const std::string& settings,
                                const std::string& extra = "") {
  const std::string text =
      "type: '" + type + "' " + BaseSettings(type) + " " + settings + " " + extra + R"(
      lr_policy: "step" gamma: 0.5 stepsize: 3 max_iter: 100 display: 0
      snapshot_after_train: false random_seed: 1701
      net_param {
        layer { name: "data" type: "Input" top: "data" top: "targets"
          input_param { shape { dim: 5 dim: 97 } shape { dim: 5 dim: 3 } } }
        layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
          param { lr_mult: 1 decay_mult: 1 } param { lr_mult: 2 decay_mult: 0 }
          inner_product_param { num_output: 13
            weight_filler { type: "gaussian" std: 0.1 }
            bias_filler { type: "gaussian" std: 0.1 } } }
        layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
          param { lr_mult: 1 decay_mult: 2 } param { lr_mult: 0.5 decay_mult: 0.5 }
          inner_product_param { num_output: 3
            weight_filler { type: "gaussian" std: 0.1 }
            bias_filler { type: "constant" value: 0.1 } } }
        layer { name: "loss" type: "EuclideanLoss" bottom: "ip2" bottom: "targets" top: "loss" }
      })";
  SolverParameter param;
  ParseProtoFromText(text, "GPU solver test", &param);
  return param;
}

template <typename Dtype>
std::unique_ptr<SGDSolver<Dtype>> MakeSolver(const SolverParameter& param) {
  Caffe::set_mode(Caffe::CPU);
  std::unique_ptr<Solver<Dtype>> solver(SolverRegistry<Dtype>::CreateSolver(param));
  auto* sgd = dynamic_cast<SGDSolver<Dtype>*>(solver.get());
  if (sgd == nullptr) {
    ADD_FAILURE() << param.type() << " is not a gradient-descent solver";
    return nullptr;
  }
  solver.release();
  std::unique_ptr<SGDSolver<Dtype>> result(sgd);
  // The same fixed inputs for every solver built here.
  Net<Dtype>& net = *result->net();
  FillGaussian(net.blob_by_name("data").get(), 11);
  FillGaussian(net.blob_by_name("targets").get(), 12);
  EXPECT_EQ(net.blob_by_name("data")->count(), kSamples * kInputs);
  EXPECT_EQ(net.blob_by_name("targets")->count(), kSamples * kTargets);
  return result;
}

// Moves the weights to the device, as the first read by a GPU layer would (a layer still on the
// CPU fallback reads them on the host, and the update then stays there too).
template <typename Dtype>
void MoveWeightsToDevice(Solver<Dtype>* solver) {
  for (Blob<Dtype>* blob : solver->net()->learnable_params()) blob->gpu_data();
}

// Gives `to` the weights of `from`, on the device.
template <typename Dtype>
void CopyWeightsToDevice(Solver<Dtype>* from, Solver<Dtype>* to) {
  const Blobs<Dtype>& source = from->net()->learnable_params();
  const Blobs<Dtype>& target = to->net()->learnable_params();
  ASSERT_EQ(source.size(), target.size());
  for (size_t i = 0; i < source.size(); ++i) target[i]->CopyFrom(*source[i]);
  MoveWeightsToDevice(to);
}

template <typename Dtype>
GpuTolerance TrainingTolerance() {
  // float: a few iterations amplify rounding differences (summation order in the products, cuBLAS
  // against the CPU BLAS) by the rules' divisions; double: the same with 29 more bits.
  GpuTolerance tolerance;
  if (sizeof(Dtype) == sizeof(float)) {
    tolerance.abs = 1e-4;
    tolerance.rel = 1e-3;
  } else {
    tolerance.abs = 1e-10;
    tolerance.rel = 1e-7;
  }
  return tolerance;
}

// Weights and history of `actual` against `expected`, blob by blob.
template <typename Dtype>
void ExpectSameState(const std::string& what, SGDSolver<Dtype>* expected, SGDSolver<Dtype>* actual,
                     const GpuTolerance& tolerance) {
  using gpu_check_detail::ExpectClose;
  const Blobs<Dtype>& want = expected->net()->learnable_params();
  const Blobs<Dtype>& got = actual->net()->learnable_params();
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ExpectClose(what + " param " + std::to_string(i), want[i]->count(), want[i]->cpu_data(),
                got[i]->cpu_data(), tolerance);
  }
  ASSERT_EQ(expected->history().size(), actual->history().size());
  for (size_t i = 0; i < expected->history().size(); ++i) {
    ExpectClose(what + " history " + std::to_string(i), expected->history()[i]->count(),
                expected->history()[i]->cpu_data(), actual->history()[i]->cpu_data(), tolerance);
  }
}

template <typename Dtype>
void ExpectGpuTrainingMatchesCpu(const std::string& type) {
  for (const Variant& variant : kVariants) {
    SCOPED_TRACE(type + ", " + variant.name);
    const SolverParameter param = MakeSolverParam(type, variant.settings);
    std::unique_ptr<SGDSolver<Dtype>> cpu = MakeSolver<Dtype>(param);
    std::unique_ptr<SGDSolver<Dtype>> gpu = MakeSolver<Dtype>(param);
    ASSERT_TRUE(cpu && gpu);
    CopyWeightsToDevice<Dtype>(cpu.get(), gpu.get());

    Caffe::set_mode(Caffe::CPU);
    cpu->Step(kIterations);
    Caffe::set_mode(Caffe::GPU);
    gpu->Step(kIterations);

    // Still in GPU mode: the update ran on the device and left everything there (reading
    // cpu_data below would make the heads SYNCED, so look first).
    for (Blob<Dtype>* blob : gpu->net()->learnable_params()) {
      EXPECT_EQ(blob->data()->head(), SyncedMemory::HEAD_AT_GPU) << "weights left the device";
      EXPECT_EQ(blob->diff()->head(), SyncedMemory::HEAD_AT_GPU) << "diffs left the device";
    }
    for (const auto& history : gpu->history()) {
      EXPECT_EQ(history->data()->head(), SyncedMemory::HEAD_AT_GPU) << "history left the device";
    }
    Caffe::set_mode(Caffe::CPU);

    const GpuTolerance tolerance = TrainingTolerance<Dtype>();
    ExpectSameState<Dtype>(type + " " + variant.name, cpu.get(), gpu.get(), tolerance);
    EXPECT_EQ(cpu->iter(), kIterations);
    EXPECT_EQ(gpu->iter(), kIterations);
    const double cpu_loss = cpu->smoothed_loss(), gpu_loss = gpu->smoothed_loss();
    EXPECT_NEAR(gpu_loss, cpu_loss, tolerance.abs + tolerance.rel * std::fabs(cpu_loss));
  }
}

}  // namespace

template <typename Dtype>
class GpuSolverTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(GpuSolverTest, TestDtypes);

TYPED_TEST(GpuSolverTest, SGDMatchesCpu) { ExpectGpuTrainingMatchesCpu<TypeParam>("SGD"); }

TYPED_TEST(GpuSolverTest, NesterovMatchesCpu) {
  ExpectGpuTrainingMatchesCpu<TypeParam>("Nesterov");
}

TYPED_TEST(GpuSolverTest, AdaGradMatchesCpu) { ExpectGpuTrainingMatchesCpu<TypeParam>("AdaGrad"); }

TYPED_TEST(GpuSolverTest, RMSPropMatchesCpu) { ExpectGpuTrainingMatchesCpu<TypeParam>("RMSProp"); }

TYPED_TEST(GpuSolverTest, AdaDeltaMatchesCpu) {
  ExpectGpuTrainingMatchesCpu<TypeParam>("AdaDelta");
}

TYPED_TEST(GpuSolverTest, AdamMatchesCpu) { ExpectGpuTrainingMatchesCpu<TypeParam>("Adam"); }

// The history (and for Adam the iteration behind its correction) survives a snapshot taken from
// the device and is used on the device again after the restore.
TYPED_TEST(GpuSolverTest, ResumeOnGpuContinuesLikeAnUninterruptedRun) {
  using Dtype = TypeParam;
  for (const char* type : {"SGD", "Adam", "AdaDelta"}) {
    SCOPED_TRACE(type);
    const std::string prefix = MakeTempDir("gpu_solver_resume") + "/snapshot";
    const SolverParameter param =
        MakeSolverParam(type, "weight_decay: 0.05", "snapshot_prefix: '" + prefix + "'");
    std::unique_ptr<SGDSolver<Dtype>> whole = MakeSolver<Dtype>(param);
    std::unique_ptr<SGDSolver<Dtype>> first = MakeSolver<Dtype>(param);
    std::unique_ptr<SGDSolver<Dtype>> resumed = MakeSolver<Dtype>(param);
    ASSERT_TRUE(whole && first && resumed);
    CopyWeightsToDevice<Dtype>(whole.get(), first.get());
    MoveWeightsToDevice<Dtype>(whole.get());

    Caffe::set_mode(Caffe::GPU);
    whole->Step(kIterations);
    first->Step(kIterations / 2);
    first->Snapshot();
    resumed->Restore(
        (prefix + "_iter_" + std::to_string(kIterations / 2) + ".solverstate").c_str());
    EXPECT_EQ(resumed->iter(), kIterations / 2);
    MoveWeightsToDevice<Dtype>(resumed.get());
    resumed->Step(kIterations - kIterations / 2);
    Caffe::set_mode(Caffe::CPU);

    ExpectSameState<Dtype>(std::string(type) + " resumed", whole.get(), resumed.get(),
                           TrainingTolerance<Dtype>());
  }
}

}  // namespace caffe
