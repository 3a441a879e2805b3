// The LMS planner over the fake device. A net whose buffers total several times the device's
// capacity runs forward and backward step by step: before each step the planner makes the
// layer's declared buffers resident and prefetches the next steps', the layer's CPU kernels then
// run on the device copies themselves (HostView), and after the step the planner releases what
// the pass no longer needs. Every blob, diff and parameter must be bit-identical to a plain run:
// a swap schedule that lost a write, dropped a dirty copy, or let a layer read a stale or
// never-copied (poisoned) buffer would show up as a difference. In GPU builds with a GPU the
// same holds on the real CUDA device with Caffe's GPU kernels, through lms::Session.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "caffe/diagnostics/reference_check.hpp"
#include "caffe/io/io.hpp"
#include "caffe/layers/neuron_layer.hpp"
#include "caffe/lms/planner.hpp"
#include "caffe/lms/session.hpp"
#include "caffe/test/log_counter.hpp"
#include "caffe/test/scoped_env.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

/// A layer the planner cannot see into: top = 2 * bottom, declaring nothing (on demand).
template <typename Dtype>
class LmsOpaqueLayer : public NeuronLayer<Dtype> {
 public:
  using NeuronLayer<Dtype>::NeuronLayer;
  const char* type() const override { return "LmsOpaque"; }
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override {
    return false;
  }

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {
    caffe_cpu_scale(bottom[0]->count(), Dtype(2), bottom[0]->cpu_data(),
                    top[0]->mutable_cpu_data());
  }
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override {
    if (!propagate_down[0]) return;
    caffe_cpu_scale(top[0]->count(), Dtype(2), top[0]->cpu_diff(), bottom[0]->mutable_cpu_diff());
  }
};
REGISTER_LAYER_CLASS(LmsOpaque);

namespace lms {

namespace {

// Eight 3x3 convolutions with in-place ReLUs, max pooling, an inner product and a softmax loss;
// `middle` is spliced in after the pooling (it reads "pool" and writes "mid").
std::string NetText(const std::string& middle = "") {
  std::string text = R"(
    name: "LmsNet"
    force_backward: true
    layer { name: "data" type: "Input" top: "data" top: "label"
      input_param { shape { dim: 4 dim: 3 dim: 16 dim: 16 } shape { dim: 4 } } }
  )";
  std::string bottom = "data";
  for (int i = 1; i <= 8; ++i) {
    const std::string name = "conv" + std::to_string(i);
    text += "layer { name: '" + name + "' type: 'Convolution' bottom: '" + bottom + "' top: '" +
            name + "' convolution_param { num_output: 8 kernel_size: 3 pad: 1 " +
            "weight_filler { type: 'gaussian' std: 0.2 } bias_filler { type: 'constant' " +
            "value: 0.01 } } }\n";
    text += "layer { name: 'relu" + std::to_string(i) + "' type: 'ReLU' bottom: '" + name +
            "' top: '" + name + "' }\n";
    bottom = name;
  }
  text += "layer { name: 'pool' type: 'Pooling' bottom: '" + bottom +
          "' top: 'pool' pooling_param { pool: MAX kernel_size: 2 stride: 2 } }\n";
  text += middle;
  text += "layer { name: 'ip' type: 'InnerProduct' bottom: '" +
          std::string(middle.empty() ? "pool" : "mid") +
          "' top: 'ip' inner_product_param { num_output: 10 "
          "weight_filler { type: 'gaussian' std: 0.05 } } }\n"
          "layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'ip' bottom: 'label' "
          "top: 'loss' }\n";
  return text;
}

std::unique_ptr<Net<float>> MakeNet(const std::string& text) {
  NetParameter param;
  ParseProtoFromText(text, "LMS test net", &param);
  Caffe::set_random_seed(1701);
  auto net = std::make_unique<Net<float>>(param);
  FillGaussian(net->blob_by_name("data").get(), /*seed=*/7);
  float* label = net->blob_by_name("label")->mutable_cpu_data();
  for (int i = 0; i < 4; ++i) label[i] = static_cast<float>((3 * i + 1) % 10);
  return net;
}

// One forward and backward through the planner, each planned step's kernels on device copies.
// `prefetched_at[s]` receives the buffers prefetched while preparing step s.
void RunThroughPlanner(Net<float>* net, Planner<float>* planner, MemoryManager* manager,
                       std::vector<std::vector<const SyncedMemory*>>* prefetched_at = nullptr) {
  const int steps = 2 * planner->num_layers();
  if (prefetched_at != nullptr) prefetched_at->assign(steps, {});
  for (int s = 0; s < steps; ++s) {
    const size_t logged = manager->prefetch_log().size();
    planner->BeforeStep(s);
    if (prefetched_at != nullptr) {
      (*prefetched_at)[s].assign(manager->prefetch_log().begin() + logged,
                                 manager->prefetch_log().end());
    }
    const Planner<float>::Step& step = planner->steps()[s];
    {
      std::vector<std::unique_ptr<HostView>> views;
      if (step.planned) {
        for (const MemoryUse& use : step.uses) {
          views.emplace_back(new HostView(use.memory, use.access));
        }
      }
      const int i = step.layer;
      if (step.pass == Pass::kForward) {
        net->layers()[i]->Forward(net->bottom_vecs()[i], net->top_vecs()[i]);
      } else if (net->layer_need_backward()[i]) {
        net->layers()[i]->Backward(net->top_vecs()[i], net->bottom_need_backward()[i],
                                   net->bottom_vecs()[i]);
      }
    }
    planner->AfterStep(s);
  }
}

// Calls `compare(what, name, expected values, actual values, count)` for every blob's data and
// diff and every parameter's, of two runs of the same net.
template <typename Compare>
void CompareNets(Net<float>* expected, Net<float>* actual, Compare compare) {
  auto both = [&](const std::string& name, const Blob<float>& want, const Blob<float>& got) {
    compare("data", name, want.cpu_data(), got.cpu_data(), want.count());
    compare("diff", name, want.cpu_diff(), got.cpu_diff(), want.count());
  };
  for (size_t i = 0; i < expected->blobs().size(); ++i) {
    both(expected->blob_names()[i], *expected->blobs()[i], *actual->blobs()[i]);
  }
  for (size_t i = 0; i < expected->params().size(); ++i) {
    both("param " + std::to_string(i), *expected->params()[i], *actual->params()[i]);
  }
}

void ExpectBitIdentical(Net<float>* expected, Net<float>* actual) {
  CompareNets(expected, actual,
              [](const char* what, const std::string& name, const float* want, const float* got,
                 int count) {
                EXPECT_EQ(std::memcmp(want, got, count * sizeof(float)), 0)
                    << what << " of " << name << " differs from the run without LMS";
              });
}

#ifndef CPU_ONLY
// Every blob's data and diff and every parameter's: max |actual - expected| <= tolerance *
// max |expected| (NaN, as from poisoned memory, fails).
void ExpectWithin(Net<float>* expected, Net<float>* actual, double tolerance) {
  CompareNets(expected, actual,
              [tolerance](const char* what, const std::string& name, const float* want,
                          const float* got, int count) {
                double max_diff = 0, max_expected = 0;
                bool nan = false;
                for (int i = 0; i < count; ++i) {
                  const double diff = std::fabs(static_cast<double>(got[i]) - want[i]);
                  nan = nan || std::isnan(diff);
                  max_diff = std::max(max_diff, diff);
                  max_expected = std::max(max_expected, std::fabs(static_cast<double>(want[i])));
                }
                EXPECT_TRUE(!nan && max_diff <= tolerance * max_expected)
                    << what << " of " << name << " differs from the run without LMS: max "
                    << "|difference| " << max_diff << (nan ? " (NaN)" : "") << ", max |value| "
                    << max_expected;
              });
}
#endif  // CPU_ONLY

// Bytes of every buffer the plan declares, and the most one step needs at once.
void PlanSizes(const Planner<float>& planner, size_t* total, size_t* largest_step) {
  std::set<SyncedMemory*> buffers;
  *largest_step = 0;
  for (const auto& step : planner.steps()) {
    size_t bytes = 0;
    for (const MemoryUse& use : step.uses) {
      buffers.insert(use.memory);
      bytes += DeviceAllocator::SizeClass(use.memory->size());
    }
    *largest_step = std::max(*largest_step, bytes);
  }
  *total = 0;
  for (SyncedMemory* memory : buffers) *total += memory->size();
}

class PlannerTest : public ::testing::Test {
 protected:
  void SetUp() override { Caffe::set_mode(Caffe::CPU); }
  void TearDown() override { MemoryManager::Install(nullptr); }

  // Runs `iterations` plain iterations of a fresh net as the reference.
  std::unique_ptr<Net<float>> Reference(const std::string& text, int iterations) {
    std::unique_ptr<Net<float>> net = MakeNet(text);
    for (int i = 0; i < iterations; ++i) {
      net->Forward();
      net->Backward();
    }
    return net;
  }

  // A manager over a fake device a quarter the size of the net's buffers (at least one step's
  // worth), installed on this thread; `deferred`: its copies run as late as a copy stream may.
  std::shared_ptr<MemoryManager> SmallDevice(Net<float>* net, const Options& base, size_t* total,
                                             size_t* capacity, bool deferred = false) {
    Options options = base;
    auto probe = std::make_shared<MemoryManager>(std::make_unique<FakeDevice>(1), options);
    Planner<float> plan(net, probe);
    size_t largest_step = 0;
    PlanSizes(plan, total, &largest_step);
    *capacity = std::max(*total / 4, largest_step);
    auto device = std::make_unique<FakeDevice>(*capacity, deferred);
    device_ = device.get();
    auto manager = std::make_shared<MemoryManager>(std::move(device), options);
    MemoryManager::Install(manager);
    return manager;
  }

  FakeDevice* device_ = nullptr;
};

}  // namespace

TEST_F(PlannerTest, NetSeveralTimesTheCapacityGivesBitIdenticalResults) {
  const std::string text = NetText();
  std::unique_ptr<Net<float>> expected = Reference(text, 2);
  for (int depth : {0, 1, 2}) {
    for (double frac : {0.0, 0.5}) {
      // Copies as they come, and as late as a copy stream may run them (every wait needed).
      const bool deferred = depth == 1 || frac > 0.0;
      SCOPED_TRACE("prefetch depth " + std::to_string(depth) + ", lms_frac " +
                   std::to_string(frac) + (deferred ? ", deferred copies" : ""));
      std::unique_ptr<Net<float>> net = MakeNet(text);
      Options options;
      options.threshold_kb = 0;
      options.frac = frac;
      options.prefetch_depth = depth;
      size_t total = 0, capacity = 0;
      std::shared_ptr<MemoryManager> manager =
          SmallDevice(net.get(), options, &total, &capacity, deferred);
      ASSERT_GE(total, 3 * capacity) << "the test net should be several times the device";
      Planner<float> planner(net.get(), manager);
      RunThroughPlanner(net.get(), &planner, manager.get());
      RunThroughPlanner(net.get(), &planner, manager.get());
      EXPECT_LE(device_->peak_allocated_bytes(), capacity);
      EXPECT_GT(manager->stats().swaps_out, 0u);
      EXPECT_GT(manager->stats().clean_drops, 0u);
      EXPECT_GT(manager->stats().bytes_in, total / 4) << "buffers came back in for backward";
      EXPECT_GT(manager->stats().overwrites, 0u) << "outputs overwritten whole were copied in";
      ExpectBitIdentical(expected.get(), net.get());
      MemoryManager::Install(nullptr);
    }
  }
}

// BVLC's golden nets, whose layers span most types, on a fake device a quarter of their size:
// every layer that says it overwrites its outputs (no copy in, the memory poisoned instead)
// must give the bits of a plain run, as must the scratch it discards and everything else.
class GoldenPlannerTest : public PlannerTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(GoldenPlannerTest, PlannedRunEqualsAPlainOneBitForBit) {
  CAFFE_REQUIRE_SHARED_DIR();
  const std::string folder = SharedDir() + "/fixtures/golden/" + GetParam();
  if (!std::ifstream(folder + "/net.prototxt")) GTEST_SKIP() << folder << " is not there";
  ScopedEnv engine("CAFFE_CPU_ENGINE", "caffe");  // oneDNN may pick kernels by alignment
  const ReferenceData reference(folder + "/blobs.h5");
  auto load = [&] {
    auto net = std::make_unique<Net<float>>(folder + "/net.prototxt", TEST);
    net->CopyTrainedLayersFrom(folder + "/weights.caffemodel");
    FeedReferenceInputs(net.get(), reference);
    return net;
  };
  std::unique_ptr<Net<float>> expected = load();
  for (int i = 0; i < 2; ++i) {  // the second finds outputs released to host memory
    expected->Forward();
    expected->Backward();
  }
  std::unique_ptr<Net<float>> net = load();
  Options options;
  options.threshold_kb = 0;
  size_t total = 0, capacity = 0;
  std::shared_ptr<MemoryManager> manager =
      SmallDevice(net.get(), options, &total, &capacity, /*deferred=*/true);
  Planner<float> planner(net.get(), manager);
  RunThroughPlanner(net.get(), &planner, manager.get());
  RunThroughPlanner(net.get(), &planner, manager.get());
  EXPECT_GT(manager->stats().overwrites, 0u);
  ExpectBitIdentical(expected.get(), net.get());
}

INSTANTIATE_TEST_SUITE_P(Bvlc, GoldenPlannerTest,
                         ::testing::Values("lenet", "cifar10_quick", "caffenet_small",
                                           "googlenet_small", "layerzoo"));

#ifndef CPU_ONLY
namespace {

// What a GPU run under LMS left: its manager (kept alive past the session) and budget.
struct GpuLmsRun {
  std::shared_ptr<MemoryManager> manager;
  size_t budget = 0;
  size_t total = 0;  // bytes of the buffers the plan declares
};

// Runs `iterations` forward and backward passes of `net` (in GPU mode) as `caffe train|time -gpu
// 0 -lms 0 -gpu_mem_limit <B>` does, B a quarter of the net's declared buffers (at least what one
// step needs): the net's own Forward/Backward follow the plan on the CUDA device.
GpuLmsRun RunOnGpuUnderLms(Net<float>* net, int iterations) {
  GpuLmsRun run;
  size_t largest_step = 0;
  PlanSizes(Planner<float>(
                net, std::make_shared<MemoryManager>(std::make_unique<FakeDevice>(1), Options())),
            &run.total, &largest_step);
  Options options;
  options.threshold_kb = 0;
  options.budget = run.budget = std::max(run.total / 4, largest_step);
  options.poison_overwritten = true;  // a layer reading what it says it overwrites shows
  Session session(options, 0);
  std::shared_ptr<Planner<float>> planner = session.Plan(net, /*attach=*/true);
  EXPECT_NE(planner, nullptr);
  for (int i = 0; i < iterations; ++i) {
    net->Forward();
    net->Backward();
  }
  run.manager = MemoryManager::Current();
  return run;
}

// Every buffer a layer's GPU kernels touched was one its declaration names (else it was swapped
// on demand, unplanned).
void ExpectEveryUseDeclared(const MemoryManager& manager) {
  std::string undeclared;
  for (const auto& [step, sizes] : manager.undeclared_uses()) {
    undeclared += "\n  " + step + ":";
    for (size_t bytes : sizes) undeclared += " " + std::to_string(bytes);
  }
  EXPECT_EQ(manager.stats().undeclared, 0u)
      << "steps using LMS-managed buffers they do not declare (bytes):" << undeclared;
}

// Two iterations of a net from `make`, plain and under LMS (RunOnGpuUnderLms): the planned run
// swaps, stays within its budget, uses only declared buffers and gives the plain run's results
// within 1e-4 (cuDNN's fallback algorithms sum in other orders on a GPU).
void ExpectGpuLmsRunLikePlainOne(const std::function<std::unique_ptr<Net<float>>()>& make) {
  std::unique_ptr<Net<float>> expected = make();
  for (int i = 0; i < 2; ++i) {
    expected->Forward();
    expected->Backward();
  }
  std::unique_ptr<Net<float>> net = make();
  const GpuLmsRun run = RunOnGpuUnderLms(net.get(), 2);
  EXPECT_GT(run.manager->stats().swaps_out, 0u);
  EXPECT_LE(run.manager->allocator().peak_reserved(), run.budget);
  ExpectEveryUseDeclared(*run.manager);
  ExpectWithin(expected.get(), net.get(), 1e-4);
}

}  // namespace

// The eight-convolution net on the CUDA device under a quarter of its size. Convolution runs on
// Caffe's engine, whose results do not depend on the workspace a budget leaves.
TEST_F(PlannerTest, OnTheGpuANetSeveralTimesTheBudgetGivesBitIdenticalResults) {
  if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
  Caffe::SetDevice(0);
  Caffe::set_mode(Caffe::GPU);
  std::string text = NetText();
  for (size_t at = text.find("convolution_param { "); at != std::string::npos;
       at = text.find("convolution_param { ", at + 1)) {
    text.insert(at + std::string("convolution_param { ").size(), "engine: CAFFE ");
  }
  std::unique_ptr<Net<float>> expected = Reference(text, 2);
  std::unique_ptr<Net<float>> net = MakeNet(text);
  const GpuLmsRun run = RunOnGpuUnderLms(net.get(), 2);
  ASSERT_GE(run.total, 3 * run.budget) << "the test net should be several times the budget";
  EXPECT_GT(run.manager->stats().swaps_out, 0u);
  EXPECT_GT(run.manager->stats().bytes_in, run.total / 4) << "buffers came back in for backward";
  EXPECT_GT(run.manager->stats().overwrites, 0u) << "outputs overwritten whole were copied in";
  EXPECT_LE(run.manager->allocator().peak_reserved(), run.budget);
  ExpectEveryUseDeclared(*run.manager);
  ExpectBitIdentical(expected.get(), net.get());
}

// Layers whose TRAIN phase keeps more for backward than TEST: BatchNorm's batch statistics and
// normalized values, Dropout's mask, STOCHASTIC pooling's picks, in-place Scale's and PReLU's
// copies of their bottoms, MAX Eltwise's winners; and the partial sums of the per-channel
// gradients (BatchNorm, Scale, PReLU, Bias). Random draws come from the same seed in both runs.
// The BatchNorm/Scale groups (one in place with a ReLU after it, one with a top of its own, one
// with stored statistics and a frozen Scale, whose backward needs no normalized values) and the
// residual sum with its ReLU run as one on the GPU (Net::RunsFused) and apart (CAFFE_FUSION=0):
// both ways declare what they use.
TEST_F(PlannerTest, OnTheGpuTrainPhaseLayersDeclareWhatTheyKeep) {
  if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
  Caffe::SetDevice(0);
  Caffe::set_mode(Caffe::GPU);
  const std::string middle = R"(
    layer { name: 'bn' type: 'BatchNorm' bottom: 'pool' top: 'pool' }
    layer { name: 'scale' type: 'Scale' bottom: 'pool' top: 'pool' scale_param { bias_term: true } }
    layer { name: 'relu' type: 'ReLU' bottom: 'pool' top: 'pool' }
    layer { name: 'drop' type: 'Dropout' bottom: 'pool' top: 'drop' }
    layer { name: 'spool' type: 'Pooling' bottom: 'drop' top: 'spool'
      pooling_param { pool: STOCHASTIC kernel_size: 2 stride: 2 } }
    layer { name: 'prelu' type: 'PReLU' bottom: 'spool' top: 'prelu' }
    layer { name: 'emax' type: 'Eltwise' bottom: 'spool' bottom: 'prelu' top: 'emax'
      eltwise_param { operation: MAX } }
    layer { name: 'prelu_in_place' type: 'PReLU' bottom: 'emax' top: 'emax' }
    layer { name: 'bias' type: 'Bias' bottom: 'emax' top: 'emax' }
    layer { name: 'bn2' type: 'BatchNorm' bottom: 'emax' top: 'normed' }
    layer { name: 'scale2' type: 'Scale' bottom: 'normed' top: 'normed' }
    layer { name: 'sum' type: 'Eltwise' bottom: 'emax' bottom: 'normed' top: 'mid' }
    layer { name: 'sum_relu' type: 'ReLU' bottom: 'mid' top: 'mid' }
    layer { name: 'bn3' type: 'BatchNorm' bottom: 'mid' top: 'mid'
      batch_norm_param { use_global_stats: true eps: 1 } }
    layer { name: 'scale3' type: 'Scale' bottom: 'mid' top: 'mid'
      param { lr_mult: 0 } param { lr_mult: 0 } scale_param { bias_term: true } }
  )";
  const std::string text = "state { phase: TRAIN }\n" + NetText(middle);
  for (const char* fusion : {"1", "0"}) {
    SCOPED_TRACE(std::string("CAFFE_FUSION=") + fusion);
    ScopedEnv env("CAFFE_FUSION", fusion);
    ExpectGpuLmsRunLikePlainOne([&] {
      std::unique_ptr<Net<float>> net = MakeNet(text);
      const std::vector<int>& followers = net->fused_followers();
      // The groups in `middle`, and NetText's eight convolutions on cuDNN with their ReLUs.
#ifdef USE_CUDNN
      const int groups = 5 + 8;
#else
      const int groups = 5;
#endif
      EXPECT_EQ(std::accumulate(followers.begin(), followers.end(), 0),
                fusion[0] == '1' ? groups : 0);
      Caffe::set_random_seed(4242);  // the same dropout masks and stochastic picks
      return net;
    });
  }
}

// BVLC's golden nets, TEST phase, with the default GPU engines (cuDNN's where built), as
// `caffe time` runs them under LMS: every buffer declared, the results those of a plain GPU run.
// Under the budget cuDNN's convolutions fall back to algorithms with less workspace, which on a
// GPU sum in other orders (the emulator's are exact): hence a tolerance, and no caffenet_small,
// whose pool5 has windows with near-ties that such low-bit differences flip (see
// test_golden_nets); its layer types are all in googlenet_small.
class GoldenGpuPlannerTest : public GoldenPlannerTest {};

TEST_P(GoldenGpuPlannerTest, LayersDeclareEveryBufferTheirKernelsUse) {
  CAFFE_REQUIRE_SHARED_DIR();
  if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
  const std::string folder = SharedDir() + "/fixtures/golden/" + GetParam();
  if (!std::ifstream(folder + "/net.prototxt")) GTEST_SKIP() << folder << " is not there";
  Caffe::SetDevice(0);
  Caffe::set_mode(Caffe::GPU);
  const ReferenceData reference(folder + "/blobs.h5");
  ExpectGpuLmsRunLikePlainOne([&] {
    auto net = std::make_unique<Net<float>>(folder + "/net.prototxt", TEST);
    net->CopyTrainedLayersFrom(folder + "/weights.caffemodel");
    FeedReferenceInputs(net.get(), reference);
    return net;
  });
}

INSTANTIATE_TEST_SUITE_P(Bvlc, GoldenGpuPlannerTest,
                         ::testing::Values("lenet", "cifar10_quick", "googlenet_small",
                                           "layerzoo"));
#endif  // CPU_ONLY

TEST_F(PlannerTest, PrefetchesFollowThePlanAndHideSwapIns) {
  const std::string text = NetText();
  uint64_t on_demand[3] = {0, 0, 0};
  for (int depth : {0, 1, 2}) {
    std::unique_ptr<Net<float>> net = MakeNet(text);
    Options options;
    options.threshold_kb = 0;
    options.prefetch_depth = depth;
    size_t total = 0, capacity = 0;
    std::shared_ptr<MemoryManager> manager = SmallDevice(net.get(), options, &total, &capacity);
    manager->set_record_prefetches(true);
    Planner<float> planner(net.get(), manager);
    std::vector<std::vector<const SyncedMemory*>> prefetched_at;
    RunThroughPlanner(net.get(), &planner, manager.get(), &prefetched_at);
    // Each step's prefetches are buffers of the next `depth` steps, in the plan's order.
    for (size_t s = 0; s < prefetched_at.size(); ++s) {
      const std::vector<SyncedMemory*> candidates = planner.PrefetchCandidates(s);
      size_t next = 0;
      for (const SyncedMemory* memory : prefetched_at[s]) {
        while (next < candidates.size() && candidates[next] != memory) ++next;
        ASSERT_LT(next, candidates.size())
            << "step " << s << " prefetched a buffer out of the plan's order";
        ++next;
      }
    }
    if (depth == 0) {
      EXPECT_TRUE(manager->prefetch_log().empty());
    } else {
      EXPECT_GT(manager->prefetch_log().size(), 0u);
      // Depth 1: exactly the next step's declared buffers are the candidates.
      if (depth == 1) {
        std::vector<SyncedMemory*> next_uses;
        for (const MemoryUse& use : planner.steps()[1].uses) {
          if (!Overwrites(use.access)) next_uses.push_back(use.memory);
        }
        EXPECT_EQ(planner.PrefetchCandidates(0), next_uses);
      }
    }
    on_demand[depth] = manager->stats().swaps_in - manager->stats().prefetches;
    MemoryManager::Install(nullptr);
  }
  EXPECT_LT(on_demand[1], on_demand[0]);
  EXPECT_LT(on_demand[2], on_demand[0]);
}

TEST_F(PlannerTest, LayerThatCannotDeclareRunsOnDemandWithOneWarning) {
  const std::string middle =
      "layer { name: 'opaque1' type: 'LmsOpaque' bottom: 'pool' top: 'opaque1' }\n"
      "layer { name: 'opaque2' type: 'LmsOpaque' bottom: 'opaque1' top: 'mid' }\n";
  const std::string text = NetText(middle);
  std::unique_ptr<Net<float>> expected = Reference(text, 1);
  std::unique_ptr<Net<float>> net = MakeNet(text);
  Options options;
  options.threshold_kb = 0;
  size_t total = 0, capacity = 0;
  std::shared_ptr<MemoryManager> manager = SmallDevice(net.get(), options, &total, &capacity);
  LogCounter warnings("[LMS] layer type LmsOpaque");
  Planner<float> planner(net.get(), manager);
  planner.Build();  // building again (a replan) does not warn again
  EXPECT_EQ(warnings.count, 1);
  EXPECT_EQ(planner.on_demand_types(), std::set<std::string>{"LmsOpaque"});
  int on_demand_steps = 0;
  for (const auto& step : planner.steps()) on_demand_steps += step.planned ? 0 : 1;
  EXPECT_EQ(on_demand_steps, 4);  // two layers, forward and backward
  EXPECT_NE(planner.SummaryLine().find("on demand: LmsOpaque"), std::string::npos)
      << planner.SummaryLine();
  RunThroughPlanner(net.get(), &planner, manager.get());
  ExpectBitIdentical(expected.get(), net.get());
}

TEST_F(PlannerTest, DefaultDeclarationCoversBottomsTopsAndParams) {
  std::unique_ptr<Net<float>> net = MakeNet(NetText());
  const int ip = 2 * 8 + 2;  // data, 8 x (conv, relu), pool, ip
  ASSERT_EQ(net->layer_names()[ip], "ip");
  Layer<float>& layer = *net->layers()[ip];
  Blob<float>& bottom = *net->bottom_vecs()[ip][0];
  Blob<float>& top = *net->top_vecs()[ip][0];
  Blob<float>& weights = *layer.blobs()[0];
  MemoryUses forward;
  ASSERT_TRUE(layer.DeclareMemoryUse(Pass::kForward, net->bottom_vecs()[ip], net->top_vecs()[ip],
                                     {true}, &forward));
  const std::vector<MemoryUse> want_forward = {{bottom.data().get(), kRead},
                                               {weights.data().get(), kRead},
                                               {layer.blobs()[1]->data().get(), kRead},
                                               {top.data().get(), kOverwrite}};
  ASSERT_EQ(forward.uses().size(), want_forward.size());
  for (size_t i = 0; i < want_forward.size(); ++i) {
    EXPECT_EQ(forward.uses()[i].memory, want_forward[i].memory) << i;
    EXPECT_EQ(forward.uses()[i].access, want_forward[i].access) << i;
  }
  MemoryUses backward;
  layer.DeclareMemoryUse(Pass::kBackward, net->bottom_vecs()[ip], net->top_vecs()[ip], {true},
                         &backward);
  auto access_of = [&](SyncedMemory* memory) {
    for (const MemoryUse& use : backward.uses()) {
      if (use.memory == memory) return use.access;
    }
    return 0u;
  };
  EXPECT_EQ(access_of(top.diff().get()), kRead);
  EXPECT_EQ(access_of(top.data().get()), 0u) << "InnerProduct's backward reads no top data";
  EXPECT_EQ(access_of(bottom.data().get()), kRead) << "the weights' gradient needs the bottom";
  EXPECT_EQ(access_of(bottom.diff().get()), kOverwrite);
  EXPECT_EQ(access_of(weights.diff().get()), kReadWrite);
  EXPECT_EQ(access_of(weights.data().get()), kRead);
  MemoryUses no_propagation;
  layer.DeclareMemoryUse(Pass::kBackward, net->bottom_vecs()[ip], net->top_vecs()[ip], {false},
                         &no_propagation);
  for (const MemoryUse& use : no_propagation.uses()) EXPECT_NE(use.memory, bottom.diff().get());
  // A layer that does not say it overwrites its outputs, like the Input layer whose top the
  // user fills, only writes them: their values are copied in.
  MemoryUses input;
  net->layers()[0]->DeclareMemoryUse(Pass::kForward, net->bottom_vecs()[0], net->top_vecs()[0], {},
                                     &input);
  ASSERT_EQ(input.uses().size(), 2u);
  EXPECT_EQ(input.uses()[0].access, kWrite);
}

// Uses of one buffer merge: it is overwritten (or scratch) only when every use says so.
TEST_F(PlannerTest, MergedUsesOverwriteOnlyWhenAllDo) {
  SyncedMemory a(4), b(4), c(4);
  MemoryUses uses;
  uses.Add(&a, kRead);
  uses.Add(&a, kOverwrite);  // an in-place layer: reads its bottom, writes the same buffer
  uses.Add(&b, kScratch);
  uses.Add(&b, kOverwrite);
  uses.Add(&c, kScratch);
  uses.Add(&c, kScratch);
  ASSERT_EQ(uses.uses().size(), 3u);
  EXPECT_EQ(uses.uses()[0].access, kReadWrite);
  EXPECT_FALSE(Overwrites(uses.uses()[0].access));
  EXPECT_EQ(uses.uses()[1].access, kOverwrite);
  EXPECT_EQ(uses.uses()[2].access, kScratch);
  EXPECT_TRUE(Overwrites(kScratch));
}

TEST_F(PlannerTest, LayersWithInternalBuffersDeclareThem) {
  std::unique_ptr<Net<float>> net = MakeNet(NetText());
  for (const char* name : {"conv1", "pool", "loss"}) {
    const int i = std::find(net->layer_names().begin(), net->layer_names().end(), name) -
                  net->layer_names().begin();
    const Layer<float>& layer = *net->layers()[i];
    MemoryUses own, base;
    layer.DeclareMemoryUse(Pass::kForward, net->bottom_vecs()[i], net->top_vecs()[i],
                           net->bottom_need_backward()[i], &own);
    layer.Layer<float>::DeclareMemoryUse(Pass::kForward, net->bottom_vecs()[i], net->top_vecs()[i],
                                         net->bottom_need_backward()[i], &base);
    EXPECT_GT(own.uses().size(), base.uses().size()) << name << " declares no internal buffer";
  }
}

// MAX pooling's backward pass reads the top's gradient and the argmax only: under LMS the
// bottom's data (the largest buffer around a pooling layer) need not come back for it.
TEST_F(PlannerTest, PoolingBackwardReadsNeitherDataBlob) {
  std::unique_ptr<Net<float>> net = MakeNet(NetText());
  const int pool = 2 * 8 + 1;  // data, 8 x (conv, relu), pool
  ASSERT_EQ(net->layer_names()[pool], "pool");
  const Layer<float>& layer = *net->layers()[pool];
  Blob<float>& bottom = *net->bottom_vecs()[pool][0];
  Blob<float>& top = *net->top_vecs()[pool][0];
  MemoryUses backward;
  ASSERT_TRUE(layer.DeclareMemoryUse(Pass::kBackward, net->bottom_vecs()[pool],
                                     net->top_vecs()[pool], {true}, &backward));
  unsigned top_diff = 0, bottom_diff = 0;
  for (const MemoryUse& use : backward.uses()) {
    EXPECT_NE(use.memory, bottom.data().get()) << "the bottom's data";
    EXPECT_NE(use.memory, top.data().get()) << "the top's data";
    if (use.memory == top.diff().get()) top_diff |= use.access;
    if (use.memory == bottom.diff().get()) bottom_diff |= use.access;
  }
  EXPECT_EQ(top_diff, kRead);
  EXPECT_EQ(bottom_diff, kOverwrite);
  EXPECT_EQ(backward.uses().size(), 3u) << "the top's diff, the argmax, the bottom's diff";
}

TEST_F(PlannerTest, ReleasesEachBufferAfterItsLastUseInThePass) {
  std::unique_ptr<Net<float>> net = MakeNet(NetText());
  Options options;
  options.threshold_kb = 0;
  auto manager = std::make_shared<MemoryManager>(std::make_unique<FakeDevice>(1 << 20), options);
  Planner<float> planner(net.get(), manager);
  const int layers = planner.num_layers();
  for (int pass = 0; pass < 2; ++pass) {
    std::map<SyncedMemory*, int> last;
    for (int s = pass * layers; s < (pass + 1) * layers; ++s) {
      for (const MemoryUse& use : planner.steps()[s].uses) last[use.memory] = s;
    }
    size_t released = 0, discarded = 0;
    for (int s = pass * layers; s < (pass + 1) * layers; ++s) {
      for (SyncedMemory* memory : planner.steps()[s].release_after) {
        EXPECT_EQ(last[memory], s);
        ++released;
      }
      // Scratch (the convolutions' column buffers, the softmax's) goes without a copy home.
      for (SyncedMemory* memory : planner.steps()[s].discard_after) {
        EXPECT_EQ(last[memory], s);
        for (const MemoryUse& use : planner.steps()[s].uses) {
          if (use.memory == memory) {
            EXPECT_EQ(use.access, kScratch);
          }
        }
        ++discarded;
      }
    }
    EXPECT_EQ(released + discarded, last.size());
    EXPECT_GE(discarded, 8u) << "the eight convolutions' column buffers";
  }
  EXPECT_NE(planner.SummaryLine().find("[LMS] plan of net 'LmsNet': " + std::to_string(2 * layers) +
                                       " steps"),
            std::string::npos)
      << planner.SummaryLine();
}

}  // namespace lms
}  // namespace caffe
