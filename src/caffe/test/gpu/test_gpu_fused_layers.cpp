// Layers that run as one on the GPU (Net::RunsFused: BatchNorm and the Scale after it). A net
// whose pair runs fused must end every pass as the same net with CAFFE_GPU_FUSION=0: the same
// blobs, diffs, parameters, parameter gradients and running statistics. Forward and the Scale's
// gradients are the same kernels' arithmetic (equal bit for bit); the bottom gradient sums
// scale * dy in another order, hence a tolerance of 1e-5 relative there. Also: which pairs fuse,
// forwards and backwards that stop between the two layers, and the variable's bad values.
#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include "caffe/net.hpp"
#include "caffe/test/scoped_env.hpp"
#include "caffe/test/test_caffe_main.hpp"
#include "caffe/util/gpu_memory.hpp"
#include "caffe/util/io.hpp"

namespace caffe {

namespace {

// data (4, 3, 5, 7) -> conv (8 channels) -> `middle` (reads "conv", writes `out`) -> ReLU ->
// EuclideanLoss against a target input.
std::string FusionNet(const std::string& middle, const std::string& out = "conv") {
  return R"(
    name: "Fusion"
    state { phase: TRAIN }
    layer { name: "data" type: "Input" top: "data" top: "target"
      input_param { shape { dim: 4 dim: 3 dim: 5 dim: 7 } shape { dim: 4 dim: 8 dim: 5 dim: 7 } } }
    layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
      convolution_param { num_output: 8 kernel_size: 3 pad: 1 engine: CAFFE
        weight_filler { type: "gaussian" std: 0.3 }
        bias_filler { type: "constant" value: 0.7 } } }
  )" + middle + "\nlayer { name: 'relu' type: 'ReLU' bottom: '" + out + "' top: '" + out +
         "' }\nlayer { name: 'loss' type: 'EuclideanLoss' bottom: '" + out +
         "' bottom: 'target' top: 'loss' }\n";
}

// ResNet's pair: BatchNorm and Scale (with bias) both in place.
const char kInPlacePair[] = R"(
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv" }
    layer { name: "scale" type: "Scale" bottom: "conv" top: "conv"
      scale_param { bias_term: true filler { type: "uniform" min: 0.5 max: 1.5 }
                    bias_filler { type: "gaussian" std: 0.4 } } })";

std::unique_ptr<Net<float>> MakeNet(const std::string& text, const char* fusion) {
  ScopedEnv env("CAFFE_GPU_FUSION", fusion);
  NetParameter param;
  ParseProtoFromText(text, "fusion test net", &param);
  Caffe::set_random_seed(1701);  // the same weights in every net
  auto net = std::make_unique<Net<float>>(param);
  FillGaussian(net->blob_by_name("data").get(), 11, 2.0f);
  FillGaussian(net->blob_by_name("target").get(), 12);
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
// diffs agree: data exactly where `exact_data`, diffs within 1e-5 relative.
void ExpectSameState(Net<float>* expected, Net<float>* actual, bool exact_data) {
  auto compare = [&](const std::string& what, const float* want, const float* got, int count,
                     bool exact) {
    for (int i = 0; i < count; ++i) {
      const float tolerance = exact ? 0.0f : 1e-5f * std::max(1.0f, std::fabs(want[i]));
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

class GpuFusedLayersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
    Caffe::SetDevice(0);
    Caffe::set_mode(Caffe::GPU);
  }
  void TearDown() override { Caffe::set_mode(Caffe::CPU); }

  // Two iterations (gradients accumulate, running statistics advance twice) of the net with
  // `middle`, fused and apart: the same state after each.
  void ExpectFusedLikeApart(const std::string& middle, const std::string& out = "conv") {
    const std::string text = FusionNet(middle, out);
    std::unique_ptr<Net<float>> apart = MakeNet(text, "0");
    std::unique_ptr<Net<float>> fused = MakeNet(text, "1");
    const int bn = LayerIndex(*fused, "bn");
    ASSERT_TRUE(fused->RunsFused(bn)) << "the pair should run as one";
    ASSERT_FALSE(apart->RunsFused(bn)) << "CAFFE_GPU_FUSION=0 should keep it apart";
    for (int iteration = 0; iteration < 2; ++iteration) {
      const float want = apart->ForwardBackward();
      const float got = fused->ForwardBackward();
      EXPECT_NEAR(want, got, 1e-5f * std::fabs(want)) << "loss of iteration " << iteration;
      ExpectSameState(apart.get(), fused.get(), /*exact_data=*/iteration == 0);
      // The Scale's gradients sum the same values in the same order: equal bit for bit.
      const auto& want_blobs = apart->layer_by_name("scale")->blobs();
      const auto& got_blobs = fused->layer_by_name("scale")->blobs();
      for (size_t p = 0; p < want_blobs.size(); ++p) {
        EXPECT_EQ(0, std::memcmp(want_blobs[p]->cpu_diff(), got_blobs[p]->cpu_diff(),
                                 want_blobs[p]->count() * sizeof(float)))
            << "scale's blob " << p << " diff, iteration " << iteration;
      }
    }
  }
};

TEST_F(GpuFusedLayersTest, InPlacePairRunsLikeTheLayersApart) {
  ExpectFusedLikeApart(kInPlacePair);
}

#ifndef CPU_ONLY
// As one, the Scale keeps no copy of its bottom (and needs no partial sums of its own): the GPU
// holds at least one activation less.
TEST_F(GpuFusedLayersTest, InPlacePairHoldsNoCopyOfTheScalesBottom) {
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

TEST_F(GpuFusedLayersTest, ScaleWithoutBiasRunsLikeTheLayersApart) {
  ExpectFusedLikeApart(R"(
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv" }
    layer { name: "scale" type: "Scale" bottom: "conv" top: "conv"
      scale_param { filler { type: "uniform" min: -1.5 max: 1.5 } } })");
}

// The Scale's diff of its bottom (dz) lands in the BatchNorm's top diff, as apart.
TEST_F(GpuFusedLayersTest, BatchNormWithATopOfItsOwnRunsLikeTheLayersApart) {
  ExpectFusedLikeApart(R"(
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "normed" }
    layer { name: "scale" type: "Scale" bottom: "normed" top: "normed"
      scale_param { bias_term: true filler { type: "uniform" min: 0.5 max: 1.5 } } })",
                       "normed");
}

// Frozen scale and bias (fine-tuning): no parameter gradients, the bottom gradient still.
TEST_F(GpuFusedLayersTest, FrozenScaleRunsLikeTheLayersApart) {
  ExpectFusedLikeApart(R"(
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv" }
    layer { name: "scale" type: "Scale" bottom: "conv" top: "conv"
      param { lr_mult: 0 } param { lr_mult: 0 }
      scale_param { bias_term: true filler { type: "uniform" min: 0.5 max: 1.5 } } })");
}

// On the input (no gradient below): only the Scale's parameter gradients.
TEST_F(GpuFusedLayersTest, PairOnTheInputRunsLikeTheLayersApart) {
  const std::string text = R"(
    name: "FusionOnInput"
    state { phase: TRAIN }
    layer { name: "data" type: "Input" top: "data" top: "target"
      input_param { shape { dim: 4 dim: 3 dim: 5 dim: 7 } shape { dim: 4 dim: 3 dim: 5 dim: 7 } } }
    layer { name: "bn" type: "BatchNorm" bottom: "data" top: "data" }
    layer { name: "scale" type: "Scale" bottom: "data" top: "data"
      scale_param { bias_term: true filler { type: "uniform" min: 0.5 max: 1.5 } } }
    layer { name: "loss" type: "EuclideanLoss" bottom: "data" bottom: "target" top: "loss" }
  )";
  std::unique_ptr<Net<float>> apart = MakeNet(text, "0");
  std::unique_ptr<Net<float>> fused = MakeNet(text, "1");
  ASSERT_TRUE(fused->RunsFused(LayerIndex(*fused, "bn")));
  ASSERT_FALSE(fused->bottom_need_backward()[LayerIndex(*fused, "bn")][0]);
  apart->ForwardBackward();
  fused->ForwardBackward();
  ExpectSameState(apart.get(), fused.get(), /*exact_data=*/true);
}

// A forward or backward that stops between the two layers runs each alone; after a fused
// forward the Scale's backward alone finds its bottom in the BatchNorm's normalized values.
TEST_F(GpuFusedLayersTest, PassesThatStopBetweenThePairRunEachLayerAlone) {
  const std::string text = FusionNet(kInPlacePair);
  std::unique_ptr<Net<float>> apart = MakeNet(text, "0");
  std::unique_ptr<Net<float>> fused = MakeNet(text, "1");
  const int bn = LayerIndex(*fused, "bn");
  const int last = static_cast<int>(fused->layers().size()) - 1;
  for (Net<float>* net : {apart.get(), fused.get()}) {
    net->ForwardTo(bn);  // the normalized values, not yet scaled
  }
  ExpectSameState(apart.get(), fused.get(), /*exact_data=*/true);
  for (Net<float>* net : {apart.get(), fused.get()}) {
    net->ForwardFrom(bn + 1);
    net->BackwardFromTo(last, bn + 1);
    net->BackwardFromTo(bn, 0);
  }
  ExpectSameState(apart.get(), fused.get(), /*exact_data=*/true);
  // Fused forward of new inputs, then the Scale's backward and the BatchNorm's apart.
  for (Net<float>* net : {apart.get(), fused.get()}) {
    FillGaussian(net->blob_by_name("data").get(), 13, 3.0f);
    net->ClearParamDiffs();
    net->Forward();
    net->BackwardFromTo(last, bn + 1);
    net->BackwardFromTo(bn, 0);
  }
  ExpectSameState(apart.get(), fused.get(), /*exact_data=*/true);
}

TEST_F(GpuFusedLayersTest, OnlyABatchNormWithBatchStatisticsAndItsInPlaceScaleFuse) {
  const auto fuses = [](const std::string& middle, const std::string& out = "conv") {
    std::unique_ptr<Net<float>> net = MakeNet(FusionNet(middle, out), "1");
    return net->RunsFused(LayerIndex(*net, "bn"));
  };
  EXPECT_TRUE(fuses(kInPlacePair));
  EXPECT_FALSE(fuses(R"(
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv"
      batch_norm_param { use_global_stats: true } }
    layer { name: "scale" type: "Scale" bottom: "conv" top: "conv" })"))
      << "stored statistics";
  EXPECT_FALSE(fuses(R"(
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv" }
    layer { name: "scale" type: "Scale" bottom: "conv" top: "scaled" })",
                     "scaled"))
      << "a Scale with a top of its own";
  EXPECT_FALSE(fuses(R"(
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv" }
    layer { name: "scale" type: "Scale" bottom: "conv" top: "conv"
      scale_param { num_axes: 0 } })"))
      << "one scale for every channel";
  EXPECT_FALSE(fuses(R"(
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv" }
    layer { name: "relu0" type: "ReLU" bottom: "conv" top: "conv" }
    layer { name: "scale" type: "Scale" bottom: "conv" top: "conv" })"))
      << "a layer between";
  // debug_info shows each layer's blobs: the pair then runs apart.
  std::unique_ptr<Net<float>> net = MakeNet(FusionNet(kInPlacePair), "1");
  const int bn = LayerIndex(*net, "bn");
  net->set_debug_info(true);
  EXPECT_FALSE(net->RunsFused(bn));
  net->set_debug_info(false);
  EXPECT_TRUE(net->RunsFused(bn));
  Caffe::set_mode(Caffe::CPU);
  EXPECT_FALSE(net->RunsFused(bn)) << "CPU mode";
}

TEST_F(GpuFusedLayersTest, ANetMadeInCpuModeFusesNothing) {
  Caffe::set_mode(Caffe::CPU);
  std::unique_ptr<Net<float>> net = MakeNet(FusionNet(kInPlacePair), "1");
  Caffe::set_mode(Caffe::GPU);
  EXPECT_FALSE(net->RunsFused(LayerIndex(*net, "bn")));
}

TEST_F(GpuFusedLayersTest, ABadValueOfTheVariableIsAnErrorNamingIt) {
  try {
    MakeNet(FusionNet(kInPlacePair), "yes");
    FAIL() << "CAFFE_GPU_FUSION=yes was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("CAFFE_GPU_FUSION is \"yes\"; expected 1"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace

}  // namespace caffe
