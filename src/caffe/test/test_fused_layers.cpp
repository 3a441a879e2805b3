// Layers that run as one (Net::RunsFused: BatchNorm, the Scale after it and the ReLU after that;
// Eltwise SUM and the ReLU after it; on the GPU a convolution on cuDNN and the ReLU after it), on
// the CPU and on the GPU. A net whose group runs fused must end every pass as the same net with
// CAFFE_FUSION=0: the same blobs, diffs, parameters, parameter gradients and running statistics.
// Forward is the same arithmetic (equal bit for bit); the gradients sum in another order (on the
// GPU the Scale's are the same sums, equal bit for bit), hence a tolerance of 1e-5 relative there.
// Also: which layers fuse, forwards and backwards that stop inside a group, the mode a group runs
// in, and the variable's bad values.
#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include "caffe/memory/gpu_memory.hpp"
#include "caffe/net.hpp"
#include "caffe/test/fusion_test_util.hpp"
#include "caffe/test/scoped_env.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

// data (4, 3, `spatial`: 5, 7) -> conv (8 channels) -> `middle` (reads "conv", writes `out`) ->
// `after` (a layer of that type in place on `out`, named "relu") -> EuclideanLoss against a
// target input.
std::string FusionNet(const std::string& middle, const std::string& out = "conv",
                      const std::string& after = "ReLU",
                      const std::string& spatial = "dim: 5 dim: 7") {
  return R"(
    name: "Fusion"
    state { phase: TRAIN }
    layer { name: "data" type: "Input" top: "data" top: "target"
      input_param { shape { dim: 4 dim: 3 )" +
         spatial + R"( }
                    shape { dim: 4 dim: 8 )" +
         spatial + R"( } } }
    layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
      convolution_param { num_output: 8 kernel_size: 3 pad: 1 engine: CAFFE
        weight_filler { type: "gaussian" std: 0.3 }
        bias_filler { type: "constant" value: 0.7 } } }
  )" + middle +
         "\nlayer { name: 'relu' type: '" + after + "' bottom: '" + out + "' top: '" + out +
         "' }\nlayer { name: 'loss' type: 'EuclideanLoss' bottom: '" + out +
         "' bottom: 'target' top: 'loss' }\n";
}

// ResNet's pair: BatchNorm and Scale (with bias) both in place; FusionNet's ReLU makes the group
// of three.
const char kInPlacePair[] = R"(
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv" }
    layer { name: "scale" type: "Scale" bottom: "conv" top: "conv"
      scale_param { bias_term: true filler { type: "uniform" min: 0.5 max: 1.5 }
                    bias_filler { type: "gaussian" std: 0.4 } } })";

// BatchNorm with stored statistics (use_global_stats) in FusionNet's place of `middle`.
const char kStoredStatisticsPair[] = R"(
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv"
      batch_norm_param { use_global_stats: true } }
    layer { name: "scale" type: "Scale" bottom: "conv" top: "conv"
      scale_param { bias_term: true filler { type: "uniform" min: -1.5 max: 1.5 }
                    bias_filler { type: "gaussian" std: 0.4 } } })";

std::unique_ptr<Net<float>> MakeNet(const std::string& text, const char* fusion) {
  ScopedEnv env("CAFFE_FUSION", fusion);
  std::unique_ptr<Net<float>> net = SeededNet(text, "fusion test net");
  if (net->has_layer("bn")) FillStoredStatistics(net->layer_by_name("bn").get());
  return net;
}

int LayerIndex(const Net<float>& net, const std::string& name) {
  for (size_t i = 0; i < net.layer_names().size(); ++i) {
    if (net.layer_names()[i] == name) return static_cast<int>(i);
  }
  ADD_FAILURE() << "no layer " << name;
  return 0;
}

// Every blob's data and diff and every layer's blobs (parameters, running statistics) and their
// diffs agree: data exactly where `exact_data`, diffs within `diff_tolerance` relative (to values
// of at least 1).
void ExpectSameState(Net<float>* expected, Net<float>* actual, bool exact_data,
                     float diff_tolerance = 1e-5f) {
  auto compare = [&](const std::string& what, const float* want, const float* got, int count,
                     bool exact) {
    for (int i = 0; i < count; ++i) {
      const float tolerance = exact ? 0.0f : diff_tolerance * std::max(1.0f, std::fabs(want[i]));
      ASSERT_NEAR(want[i], got[i], tolerance) << what << " at " << i;
    }
  };
  for (size_t b = 0; b < expected->blobs().size(); ++b) {
    const Blob<float>& want = *expected->blobs()[b];
    const Blob<float>& got = *actual->blobs()[b];
    const std::string& name = expected->blob_names()[b];
    compare("blob " + name + " data", want.cpu_data(), got.cpu_data(), want.count(), exact_data);
    compare("blob " + name + " diff", want.cpu_diff(), got.cpu_diff(), want.count(), false);
  }
  for (size_t l = 0; l < expected->layers().size(); ++l) {
    const auto& want = expected->layers()[l]->blobs();
    const auto& got = actual->layers()[l]->blobs();
    for (size_t p = 0; p < want.size(); ++p) {
      const std::string what = expected->layer_names()[l] + " blob " + std::to_string(p);
      compare(what + " data", want[p]->cpu_data(), got[p]->cpu_data(), want[p]->count(),
              exact_data);
      compare(what + " diff", want[p]->cpu_diff(), got[p]->cpu_diff(), want[p]->count(), false);
    }
  }
}

// Two iterations (gradients accumulate, running statistics advance twice) of `text`, with
// `followers` layers after `head` fused, and apart: the same state after each (diffs within
// `diff_tolerance`, ExpectSameState's).
void ExpectFusedLikeApart(const std::string& text, int followers = 2,
                          const std::string& head = "bn", float diff_tolerance = 1e-5f) {
  std::unique_ptr<Net<float>> apart = MakeNet(text, "0");
  std::unique_ptr<Net<float>> fused = MakeNet(text, "1");
  const int first = LayerIndex(*fused, head);
  ASSERT_TRUE(fused->RunsFused(first)) << "the group should run as one";
  ASSERT_EQ(followers, fused->fused_followers()[first]) << "layers that run with " << head;
  ASSERT_FALSE(apart->RunsFused(first)) << "CAFFE_FUSION=0 should keep it apart";
  for (int iteration = 0; iteration < 2; ++iteration) {
    const float want = apart->ForwardBackward();
    const float got = fused->ForwardBackward();
    EXPECT_NEAR(want, got, 1e-5f * std::fabs(want)) << "loss of iteration " << iteration;
    ExpectSameState(apart.get(), fused.get(), /*exact_data=*/iteration == 0, diff_tolerance);
    // On the GPU the Scale's gradients sum the same values in the same order: equal bit for
    // bit. (On the CPU the Scale apart sums by pieces of planes, the group by channels.)
    if (Caffe::mode() != Caffe::GPU || !apart->has_layer("scale")) continue;
    const auto& want_blobs = apart->layer_by_name("scale")->blobs();
    const auto& got_blobs = fused->layer_by_name("scale")->blobs();
    for (size_t p = 0; p < want_blobs.size(); ++p) {
      EXPECT_EQ(0, std::memcmp(want_blobs[p]->cpu_diff(), got_blobs[p]->cpu_diff(),
                               want_blobs[p]->count() * sizeof(float)))
          << "scale's blob " << p << " diff, iteration " << iteration;
    }
  }
}

// Each test runs in CPU mode and in GPU mode (skipped where there is no GPU).
class FusedLayersTest : public ::testing::TestWithParam<Caffe::Brew> {
 protected:
  void SetUp() override {
    if (GetParam() == Caffe::GPU) {
      if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
      Caffe::SetDevice(0);
    }
    Caffe::set_mode(GetParam());
  }
  void TearDown() override { Caffe::set_mode(Caffe::CPU); }
};

INSTANTIATE_TEST_SUITE_P(Modes, FusedLayersTest, ::testing::Values(Caffe::CPU, Caffe::GPU),
                         [](const ::testing::TestParamInfo<Caffe::Brew>& info) {
                           return std::string(info.param == Caffe::GPU ? "GPU" : "CPU");
                         });

// What only the GPU has (its memory, cuDNN).
class GpuFusedLayersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
    Caffe::SetDevice(0);
    Caffe::set_mode(Caffe::GPU);
  }
  void TearDown() override { Caffe::set_mode(Caffe::CPU); }
};

TEST_P(FusedLayersTest, InPlaceGroupRunsLikeTheLayersApart) {
  ExpectFusedLikeApart(FusionNet(kInPlacePair));
}

// 4 x 8 x 40 x 40 values, past kParallelMinElements: on the CPU the passes run on the threads.
// The sums of 6400 gradient terms per channel round differently in the group (the convolution's
// bias gradient, which the BatchNorm makes nearly 0, is all rounding), hence 1e-4.
TEST_P(FusedLayersTest, LargeGroupsRunLikeTheLayersApart) {
  const std::string spatial = "dim: 40 dim: 40";
  const float tolerance = 1e-4f;
  ExpectFusedLikeApart(FusionNet(kInPlacePair, "conv", "ReLU", spatial), 2, "bn", tolerance);
  ExpectFusedLikeApart(FusionNet(std::string(kInPlacePair) + R"(
    layer { name: "leaky" type: "ReLU" bottom: "conv" top: "conv"
      relu_param { negative_slope: 0.25 } })",
                                 "conv", "TanH", spatial),
                       2, "bn", tolerance);
  ExpectFusedLikeApart(FusionNet(kStoredStatisticsPair, "conv", "ReLU", spatial), 2, "bn",
                       tolerance);
  ExpectFusedLikeApart(FusionNet(R"(
    layer { name: "conv2" type: "Convolution" bottom: "data" top: "conv2"
      convolution_param { num_output: 8 kernel_size: 1 engine: CAFFE
        weight_filler { type: "gaussian" std: 0.5 } bias_filler { type: "constant" value: -0.9 } } }
    layer { name: "sum" type: "Eltwise" bottom: "conv" bottom: "conv2" top: "sum" })",
                                 "sum", "ReLU", spatial),
                       1, "sum", tolerance);
}

// Without a ReLU after it (here a TanH) the pair runs as one.
TEST_P(FusedLayersTest, InPlacePairRunsLikeTheLayersApart) {
  ExpectFusedLikeApart(FusionNet(kInPlacePair, "conv", "TanH"), 1);
}

// Stored statistics (use_global_stats, as in a TEST-phase net): no statistics forward, dx =
// scale * dv * inv_std backward, the Scale's gradients from the normalized values kept.
TEST_P(FusedLayersTest, StoredStatisticsRunLikeTheLayersApart) {
  ExpectFusedLikeApart(FusionNet(kStoredStatisticsPair));
  ExpectFusedLikeApart(FusionNet(kStoredStatisticsPair, "conv", "TanH"), 1);
  ExpectFusedLikeApart(FusionNet(std::string(kStoredStatisticsPair) + R"(
    layer { name: "leaky" type: "ReLU" bottom: "conv" top: "conv"
      relu_param { negative_slope: 0.25 } })",
                                 "conv", "TanH"));
  // The test phase's default, with frozen parameters (no Scale gradients: no summing pass).
  std::string text = FusionNet(R"(
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv" }
    layer { name: "scale" type: "Scale" bottom: "conv" top: "conv"
      param { lr_mult: 0 } param { lr_mult: 0 }
      scale_param { bias_term: true filler { type: "uniform" min: 0.5 max: 1.5 } } })");
  text.replace(text.find("phase: TRAIN"), std::strlen("phase: TRAIN"), "phase: TEST");
  ExpectFusedLikeApart(text);
}

// A leaky ReLU's gradient (negative_slope where the Scale's output is not positive; a TanH
// after it, since a plain ReLU there would cut those gradients).
TEST_P(FusedLayersTest, LeakyReLURunsLikeTheLayersApart) {
  ExpectFusedLikeApart(FusionNet(std::string(kInPlacePair) + R"(
    layer { name: "leaky" type: "ReLU" bottom: "conv" top: "conv"
      relu_param { negative_slope: 0.25 } })",
                                 "conv", "TanH"));
}

#ifndef CPU_ONLY
// As one, the Scale keeps no copy of its bottom (and needs no partial sums of its own): the GPU
// holds at least one activation less.
TEST_F(GpuFusedLayersTest, InPlaceGroupHoldsNoCopyOfTheScalesBottom) {
  const auto bytes_used = [](const char* fusion) {
    const size_t before = GpuMemory::GetUsage(0).in_use;
    std::unique_ptr<Net<float>> net = MakeNet(FusionNet(kInPlacePair), fusion);
    net->ForwardBackward();
    return GpuMemory::GetUsage(0).in_use - before;
  };
  const size_t apart = bytes_used("0");
  const size_t fused = bytes_used("1");
  const size_t activation = 4 * 8 * 5 * 7 * sizeof(float);
  EXPECT_GE(apart, fused + activation) << "apart " << apart << " bytes, as one " << fused;
}
#endif

// Scales of both signs: the ReLU's cut moves with them.
TEST_P(FusedLayersTest, ScaleWithoutBiasRunsLikeTheLayersApart) {
  ExpectFusedLikeApart(FusionNet(R"(
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv" }
    layer { name: "scale" type: "Scale" bottom: "conv" top: "conv"
      scale_param { filler { type: "uniform" min: -1.5 max: 1.5 } } })"));
}

// The Scale's diff of its bottom (dz) lands in the BatchNorm's top diff, as apart.
TEST_P(FusedLayersTest, BatchNormWithATopOfItsOwnRunsLikeTheLayersApart) {
  const std::string middle = R"(
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "normed" }
    layer { name: "scale" type: "Scale" bottom: "normed" top: "normed"
      scale_param { bias_term: true filler { type: "uniform" min: 0.5 max: 1.5 } } })";
  ExpectFusedLikeApart(FusionNet(middle, "normed"));
  ExpectFusedLikeApart(FusionNet(middle, "normed", "TanH"), 1);
}

// Frozen scale and bias (fine-tuning): no parameter gradients, the bottom gradient still.
TEST_P(FusedLayersTest, FrozenScaleRunsLikeTheLayersApart) {
  ExpectFusedLikeApart(FusionNet(R"(
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv" }
    layer { name: "scale" type: "Scale" bottom: "conv" top: "conv"
      param { lr_mult: 0 } param { lr_mult: 0 }
      scale_param { bias_term: true filler { type: "uniform" min: 0.5 max: 1.5 } } })"));
}

// On the input (no gradient below): only the Scale's parameter gradients, and the top's diff
// left as the layers apart leave it. As in BVLC, a BatchNorm without `param { lr_mult: 0 }`
// counts as learning and so asks the Scale for dz, which stays in the top's diff; with them the
// Scale passes nothing down and the diff keeps the ReLU's bottom diff, dv (or the loss's).
TEST_P(FusedLayersTest, GroupOnTheInputRunsLikeTheLayersApart) {
  const auto text = [](const std::string& bn_params, const std::string& after) {
    return R"(
    name: "FusionOnInput"
    state { phase: TRAIN }
    layer { name: "data" type: "Input" top: "data" top: "target"
      input_param { shape { dim: 4 dim: 3 dim: 5 dim: 7 } shape { dim: 4 dim: 3 dim: 5 dim: 7 } } }
    layer { name: "bn" type: "BatchNorm" bottom: "data" top: "data" )" +
           bn_params + R"( }
    layer { name: "scale" type: "Scale" bottom: "data" top: "data"
      scale_param { bias_term: true filler { type: "uniform" min: 0.5 max: 1.5 }
                    bias_filler { type: "gaussian" std: 0.5 } } }
    )" + after +
           R"(
    layer { name: "loss" type: "EuclideanLoss" bottom: "data" bottom: "target" top: "loss" }
  )";
  };
  for (const std::string bn_params : {"",
                                      "param { lr_mult: 0 } param { lr_mult: 0 } "
                                      "param { lr_mult: 0 }"}) {
    for (const std::string after :
         {"", "layer { name: 'relu' type: 'ReLU' bottom: 'data' top: 'data' }"}) {
      SCOPED_TRACE(bn_params + " " + after);
      std::unique_ptr<Net<float>> apart = MakeNet(text(bn_params, after), "0");
      std::unique_ptr<Net<float>> fused = MakeNet(text(bn_params, after), "1");
      const int bn = LayerIndex(*fused, "bn");
      ASSERT_TRUE(fused->RunsFused(bn));
      ASSERT_EQ(after.empty() ? 1 : 2, fused->fused_followers()[bn]);
      ASSERT_FALSE(fused->bottom_need_backward()[bn][0]);
      ASSERT_EQ(bn_params.empty(), fused->bottom_need_backward()[bn + 1][0]) << "the Scale's";
      apart->ForwardBackward();
      fused->ForwardBackward();
      ExpectSameState(apart.get(), fused.get(), /*exact_data=*/true);
    }
  }
}

// A forward or backward that stops inside the group runs each layer alone; after a fused
// forward the Scale's backward alone finds its bottom in the BatchNorm's normalized values, and
// the ReLU's its output in the top.
TEST_P(FusedLayersTest, PassesThatStopInsideTheGroupRunEachLayerAlone) {
  for (const auto& [text, split] :
       {std::pair(FusionNet(kInPlacePair), "bn"), std::pair(FusionNet(kInPlacePair), "scale"),
        std::pair(FusionNet(kStoredStatisticsPair), "bn")}) {
    SCOPED_TRACE(std::string("stopping after ") + split);
    std::unique_ptr<Net<float>> apart = MakeNet(text, "0");
    std::unique_ptr<Net<float>> fused = MakeNet(text, "1");
    const int stop = LayerIndex(*fused, split);
    const int last = static_cast<int>(fused->layers().size()) - 1;
    for (Net<float>* net : {apart.get(), fused.get()}) {
      net->ForwardTo(stop);  // the normalized (or scaled) values, not yet through the rest
    }
    ExpectSameState(apart.get(), fused.get(), /*exact_data=*/true);
    for (Net<float>* net : {apart.get(), fused.get()}) {
      net->ForwardFrom(stop + 1);
      net->BackwardFromTo(last, stop + 1);
      net->BackwardFromTo(stop, 0);
    }
    ExpectSameState(apart.get(), fused.get(), /*exact_data=*/true);
    // Fused forward of new inputs, then the backward in two parts.
    for (Net<float>* net : {apart.get(), fused.get()}) {
      FillGaussian(net->blob_by_name("data").get(), 13, 3.0f);
      net->ClearParamDiffs();
      net->Forward();
      net->BackwardFromTo(last, stop + 1);
      net->BackwardFromTo(stop, 0);
    }
    ExpectSameState(apart.get(), fused.get(), /*exact_data=*/true);
  }
}

// A whole backward after a forward that ran the group's layers alone runs them alone too: the
// group's backward reads what only its forward keeps (with stored statistics, the normalized
// values, which the BatchNorm alone does not keep).
TEST_P(FusedLayersTest, ABackwardAfterAForwardApartRunsApart) {
  for (const std::string middle : {kInPlacePair, kStoredStatisticsPair}) {
    std::unique_ptr<Net<float>> apart = MakeNet(FusionNet(middle), "0");
    std::unique_ptr<Net<float>> fused = MakeNet(FusionNet(middle), "1");
    const int bn = LayerIndex(*fused, "bn");
    for (Net<float>* net : {apart.get(), fused.get()}) {
      net->ForwardTo(bn);
      net->ForwardFrom(bn + 1);
      net->Backward();
    }
    ExpectSameState(apart.get(), fused.get(), /*exact_data=*/true);
    // A forward as one after it: the backward as one again.
    for (Net<float>* net : {apart.get(), fused.get()}) {
      net->ClearParamDiffs();
      net->ForwardBackward();
    }
    ExpectSameState(apart.get(), fused.get(), /*exact_data=*/true);
  }
}

TEST_P(FusedLayersTest, OnlyABatchNormAndItsInPlaceFollowersFuse) {
  // The layers that run with "bn" (0: it runs alone).
  const auto followers = [](const std::string& middle, const std::string& out = "conv") {
    std::unique_ptr<Net<float>> net = MakeNet(FusionNet(middle, out), "1");
    return net->fused_followers()[LayerIndex(*net, "bn")];
  };
  EXPECT_EQ(2, followers(kInPlacePair));
  EXPECT_EQ(2, followers(kStoredStatisticsPair)) << "stored statistics";
  EXPECT_EQ(0, followers(R"(
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv" }
    layer { name: "scale" type: "Scale" bottom: "conv" top: "scaled" })",
                         "scaled"))
      << "a Scale with a top of its own";
  EXPECT_EQ(0, followers(R"(
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv" }
    layer { name: "scale" type: "Scale" bottom: "conv" top: "conv"
      scale_param { num_axes: 0 } })"))
      << "one scale for every channel";
  EXPECT_EQ(0, followers(R"(
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv" }
    layer { name: "relu0" type: "ReLU" bottom: "conv" top: "conv" }
    layer { name: "scale" type: "Scale" bottom: "conv" top: "conv" })"))
      << "a layer between";
  EXPECT_EQ(1, followers(std::string(kInPlacePair) + R"(
    layer { name: "relu0" type: "ReLU" bottom: "conv" top: "rectified" })",
                         "rectified"))
      << "a ReLU with a top of its own";
  EXPECT_EQ(1, followers(std::string(kInPlacePair) + R"(
    layer { name: "relu0" type: "ReLU" bottom: "conv" top: "conv"
      relu_param { negative_slope: -0.5 } })"))
      << "a negative slope (the output's sign is not the input's)";
  EXPECT_EQ(2, followers(std::string(kInPlacePair) + R"(
    layer { name: "relu0" type: "ReLU" bottom: "conv" top: "conv" })"))
      << "a second ReLU";
  // debug_info shows each layer's blobs: the group then runs apart.
  std::unique_ptr<Net<float>> net = MakeNet(FusionNet(kInPlacePair), "1");
  const int bn = LayerIndex(*net, "bn");
  net->set_debug_info(true);
  EXPECT_FALSE(net->RunsFused(bn));
  net->set_debug_info(false);
  EXPECT_TRUE(net->RunsFused(bn));
}

// A ReLU that runs alone after the pair (negative slope) still gets the pair's output.
TEST_P(FusedLayersTest, PairBeforeAReLUThatRunsAloneRunsLikeTheLayersApart) {
  ExpectFusedLikeApart(FusionNet(std::string(kInPlacePair) + R"(
    layer { name: "negative" type: "ReLU" bottom: "conv" top: "conv"
      relu_param { negative_slope: -0.5 } })",
                                 "conv", "TanH"),
                       1);
}

// ResNet's residual sum: "conv" plus a second convolution of the data (`eltwise`: the sum's
// eltwise_param; `conv2_params`: the convolution's param specs), then FusionNet's `after` (a
// ReLU: in place on "sum").
std::string ResidualNet(const std::string& eltwise = "operation: SUM",
                        const std::string& conv2_params = "", const std::string& after = "ReLU") {
  return FusionNet(R"(
    layer { name: "conv2" type: "Convolution" bottom: "data" top: "conv2" )" +
                       conv2_params + R"(
      convolution_param { num_output: 8 kernel_size: 1 engine: CAFFE
        weight_filler { type: "gaussian" std: 0.5 } bias_filler { type: "constant" value: -0.9 } } }
    layer { name: "sum" type: "Eltwise" bottom: "conv" bottom: "conv2" top: "sum"
      eltwise_param { )" +
                       eltwise + R"( } })",
                   "sum", after);
}

TEST_P(FusedLayersTest, EltwiseSumAndItsReLURunLikeTheLayersApart) {
  ExpectFusedLikeApart(ResidualNet(), 1, "sum");
  ExpectFusedLikeApart(ResidualNet("coeff: 0.5 coeff: -1.5"), 1, "sum");
}

// A leaky ReLU after the sum (a TanH after it, as a ReLU there would cut what leaks).
TEST_P(FusedLayersTest, EltwiseSumAndALeakyReLURunLikeTheLayersApart) {
  ExpectFusedLikeApart(FusionNet(R"(
    layer { name: "conv2" type: "Convolution" bottom: "data" top: "conv2"
      convolution_param { num_output: 8 kernel_size: 1 engine: CAFFE
        weight_filler { type: "gaussian" std: 0.5 } } }
    layer { name: "sum" type: "Eltwise" bottom: "conv" bottom: "conv2" top: "sum" }
    layer { name: "leaky" type: "ReLU" bottom: "sum" top: "sum" relu_param { negative_slope: 0.1 } })",
                                 "sum", "TanH"),
                       1, "sum");
}

// A frozen second convolution on the data: no gradient to its top, only to the first bottom.
TEST_P(FusedLayersTest, EltwiseSumWithOneBottomWithoutGradientRunsLikeTheLayersApart) {
  const std::string text =
      ResidualNet("operation: SUM", "param { lr_mult: 0 } param { lr_mult: 0 }");
  std::unique_ptr<Net<float>> net = MakeNet(text, "1");
  ASSERT_FALSE(net->bottom_need_backward()[LayerIndex(*net, "sum")][1]);
  ExpectFusedLikeApart(text, 1, "sum");
}

TEST_P(FusedLayersTest, OnlyASumOfTwoAndItsInPlaceReLUFuse) {
  const auto followers = [](const std::string& text) {
    std::unique_ptr<Net<float>> net = MakeNet(text, "1");
    return net->fused_followers()[LayerIndex(*net, "sum")];
  };
  EXPECT_EQ(1, followers(ResidualNet()));
  EXPECT_EQ(0, followers(ResidualNet("operation: SUM", "", "TanH"))) << "no ReLU after it";
  const std::string sum_of_three = R"(
    layer { name: "conv2" type: "Convolution" bottom: "data" top: "conv2"
      convolution_param { num_output: 8 kernel_size: 1 weight_filler { type: "gaussian" } } }
    layer { name: "conv3" type: "Convolution" bottom: "data" top: "conv3"
      convolution_param { num_output: 8 kernel_size: 1 weight_filler { type: "gaussian" } } }
    layer { name: "sum" type: "Eltwise" bottom: "conv" bottom: "conv2" bottom: "conv3" top: "sum" )";
  EXPECT_EQ(0, followers(FusionNet(sum_of_three + "}", "sum"))) << "three bottoms";
  for (const char* operation : {"PROD", "MAX"}) {
    EXPECT_EQ(0, followers(ResidualNet(std::string("operation: ") + operation))) << operation;
  }
  EXPECT_EQ(0, followers(FusionNet(std::string(R"(
    layer { name: "conv2" type: "Convolution" bottom: "data" top: "conv2"
      convolution_param { num_output: 8 kernel_size: 1 weight_filler { type: "gaussian" } } }
    layer { name: "sum" type: "Eltwise" bottom: "conv" bottom: "conv2" top: "sum" }
    layer { name: "relu0" type: "ReLU" bottom: "sum" top: "rectified" })"),
                                   "rectified")))
      << "a ReLU with a top of its own";
  EXPECT_EQ(0, followers(FusionNet(std::string(R"(
    layer { name: "conv2" type: "Convolution" bottom: "data" top: "conv2"
      convolution_param { num_output: 8 kernel_size: 1 weight_filler { type: "gaussian" } } }
    layer { name: "sum" type: "Eltwise" bottom: "conv" bottom: "conv2" top: "sum" }
    layer { name: "relu0" type: "ReLU" bottom: "sum" top: "sum" relu_param { negative_slope: -1 } })"),
                                   "sum", "TanH")))
      << "a negative slope";
}

#ifdef USE_CUDNN
// FusionNet with a second convolution, on cuDNN, on "conv" (so that its bottom gets a gradient):
// `params` its param specs, `convolution` more of its convolution_param, `after_it` a layer in
// place on its top "conv2" before FusionNet's `after` ("relu", also in place on "conv2").
std::string CuDNNConvNet(const std::string& params = "", const std::string& convolution = "",
                         const std::string& after_it = "", const std::string& after = "ReLU") {
  return FusionNet(R"(
    layer { name: "conv2" type: "Convolution" bottom: "conv" top: "conv2" )" +
                       params + R"(
      convolution_param { num_output: 8 kernel_size: 3 pad: 1 engine: CUDNN )" +
                       convolution + R"(
        weight_filler { type: "gaussian" std: 0.3 } bias_filler { type: "gaussian" std: 0.5 } } }
    )" + after_it,
                   "conv2", after);
}

TEST_F(GpuFusedLayersTest, CuDNNConvolutionAndItsReLURunLikeTheLayersApart) {
  ExpectFusedLikeApart(CuDNNConvNet(), 1, "conv2");
  ExpectFusedLikeApart(CuDNNConvNet("", "group: 2"), 1, "conv2");
}

// A leaky ReLU's gradient (a TanH after it, as a ReLU there would cut what leaks).
TEST_F(GpuFusedLayersTest, CuDNNConvolutionAndALeakyReLURunLikeTheLayersApart) {
  ExpectFusedLikeApart(CuDNNConvNet("", "", R"(
    layer { name: "leaky" type: "ReLU" bottom: "conv2" top: "conv2"
      relu_param { negative_slope: 0.2 } })",
                                    "TanH"),
                       1, "conv2");
}

// A frozen bias (the ReLU's gradient alone, then the weights' and the bottom's from it), and a
// frozen convolution that still passes the gradient down.
TEST_F(GpuFusedLayersTest, FrozenCuDNNConvolutionRunsLikeTheLayersApart) {
  ExpectFusedLikeApart(CuDNNConvNet("param { lr_mult: 1 } param { lr_mult: 0 }"), 1, "conv2");
  ExpectFusedLikeApart(CuDNNConvNet("param { lr_mult: 0 } param { lr_mult: 0 }"), 1, "conv2");
}

// Four spatial axes: cuDNN cannot run it, so the group runs on Caffe's GPU path with the ReLU
// after it.
TEST_F(GpuFusedLayersTest, ConvolutionCuDNNCannotRunStillRunsWithItsReLU) {
  const std::string text = R"(
    name: "FourSpatialAxes"
    state { phase: TRAIN }
    layer { name: "data" type: "Input" top: "data" top: "target"
      input_param { shape { dim: 2 dim: 3 dim: 3 dim: 4 dim: 3 dim: 5 }
                    shape { dim: 2 dim: 4 dim: 3 dim: 4 dim: 3 dim: 5 } } }
    layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
      convolution_param { num_output: 4 kernel_size: 3 pad: 1 engine: CUDNN
        weight_filler { type: "gaussian" std: 0.3 } bias_filler { type: "gaussian" std: 0.5 } } }
    layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
    layer { name: "loss" type: "EuclideanLoss" bottom: "conv" bottom: "target" top: "loss" }
  )";
  ExpectFusedLikeApart(text, 1, "conv");
}

TEST_F(GpuFusedLayersTest, OnlyACuDNNConvolutionWithABiasAndItsInPlaceReLUFuse) {
  const auto followers = [](const std::string& text, const std::string& head = "conv2") {
    std::unique_ptr<Net<float>> net = MakeNet(text, "1");
    return net->fused_followers()[LayerIndex(*net, head)];
  };
  EXPECT_EQ(1, followers(CuDNNConvNet()));
  EXPECT_EQ(0, followers(CuDNNConvNet("", "bias_term: false"))) << "no bias";
  EXPECT_EQ(0, followers(CuDNNConvNet("", "", "", "TanH"))) << "no ReLU after it";
  EXPECT_EQ(0, followers(FusionNet(R"(
    layer { name: "conv2" type: "Convolution" bottom: "conv" top: "conv2"
      convolution_param { num_output: 8 kernel_size: 3 pad: 1 engine: CUDNN } }
    layer { name: "relu0" type: "ReLU" bottom: "conv2" top: "rectified" })",
                                   "rectified")))
      << "a ReLU with a top of its own";
  EXPECT_EQ(0, followers(CuDNNConvNet("", "", R"(
    layer { name: "relu0" type: "ReLU" bottom: "conv2" top: "conv2"
      relu_param { negative_slope: -0.5 } })",
                                      "TanH")))
      << "a negative slope";
  EXPECT_EQ(0, followers(FusionNet("", "conv"), "conv")) << "Caffe's engine";
}
#endif  // USE_CUDNN

// A group runs as one in the mode the net was set up in; in the other mode each layer runs
// alone (with the same results, the group's output and diffs being the layers').
TEST_P(FusedLayersTest, AGroupRunsAsOneOnlyInTheModeItWasFormedIn) {
  std::unique_ptr<Net<float>> net = MakeNet(FusionNet(kInPlacePair), "1");
  std::unique_ptr<Net<float>> apart = MakeNet(FusionNet(kInPlacePair), "0");
  const int bn = LayerIndex(*net, "bn");
  ASSERT_TRUE(net->RunsFused(bn));
  const Caffe::Brew other = GetParam() == Caffe::GPU ? Caffe::CPU : Caffe::GPU;
  Caffe::set_mode(other);
  EXPECT_FALSE(net->RunsFused(bn)) << "in the other mode";
  Caffe::set_mode(GetParam());
  EXPECT_TRUE(net->RunsFused(bn));
  if (!Caffe::GpuAvailable()) return;
  // Forward and backward in the other mode, then in this one: the layers apart in each.
  for (const Caffe::Brew mode : {other, GetParam()}) {
    Caffe::set_mode(mode);
    apart->ForwardBackward();
    net->ForwardBackward();
  }
  ExpectSameState(apart.get(), net.get(), /*exact_data=*/false);
}

TEST_P(FusedLayersTest, ABadValueOfTheVariableIsAnErrorNamingIt) {
  try {
    MakeNet(FusionNet(kInPlacePair), "yes");
    FAIL() << "CAFFE_FUSION=yes was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("CAFFE_FUSION is \"yes\"; expected 1"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace

}  // namespace caffe
