// Activations held channel-blocked (memory/channel_layout.hpp) between the layers that take them:
// oneDNN's convolutions leave their outputs so, and BatchNorm (alone and with its Scale and
// ReLU), ReLU, Eltwise SUM (alone and with its ReLU) and Split work on them where they are. A net
// must end every pass as the same net held plain: the same blobs, diffs, parameters and their
// gradients, running statistics. BatchNorm's sums run per lane of a block rather than per plane,
// another order, hence a relative tolerance.
#include <cmath>
#include <memory>
#include <string>

#include "caffe/net.hpp"
#include "caffe/test/fusion_test_util.hpp"
#include "caffe/test/scoped_env.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

std::unique_ptr<Net<float>> MakeNet(const std::string& text, const char* fusion,
                                    const char* blocked) {
  ScopedEnv fusion_env("CAFFE_FUSION", fusion);
  ScopedEnv blocked_env("CAFFE_BLOCKED_LAYOUT", blocked);
  return SeededNet(text, "blocked layout test net");
}

// Every blob's data and diff and every layer's blobs and their diffs agree within `tolerance`
// relative (to values of at least 1).
void ExpectSameState(Net<float>* expected, Net<float>* actual, float tolerance) {
  auto compare = [&](const std::string& what, const float* want, const float* got, int count) {
    for (int i = 0; i < count; ++i) {
      ASSERT_NEAR(want[i], got[i], tolerance * std::max(1.0f, std::fabs(want[i])))
          << what << " at " << i;
    }
  };
  for (size_t b = 0; b < expected->blobs().size(); ++b) {
    const Blob<float>& want = *expected->blobs()[b];
    const Blob<float>& got = *actual->blobs()[b];
    const std::string& name = expected->blob_names()[b];
    compare("blob " + name + " data", want.cpu_data(), got.cpu_data(), want.count());
    compare("blob " + name + " diff", want.cpu_diff(), got.cpu_diff(), want.count());
  }
  for (size_t l = 0; l < expected->layers().size(); ++l) {
    const auto& want = expected->layers()[l]->blobs();
    const auto& got = actual->layers()[l]->blobs();
    for (size_t p = 0; p < want.size(); ++p) {
      const std::string what = expected->layer_names()[l] + " blob " + std::to_string(p);
      compare(what + " data", want[p]->cpu_data(), got[p]->cpu_data(), want[p]->count());
      compare(what + " diff", want[p]->cpu_diff(), got[p]->cpu_diff(), want[p]->count());
    }
  }
}

// data (4, 16, 5, 7) -> BatchNorm, Scale, ReLU -> "bn"; Eltwise SUM of "bn" and data (data
// goes through a Split), its ReLU -> "sum" -> EuclideanLoss against a target.
const char kElementWiseNet[] = R"(
  name: "Blocked"
  state { phase: TRAIN }
  layer { name: "data" type: "Input" top: "data" top: "target"
    input_param { shape { dim: 4 dim: 16 dim: 5 dim: 7 } shape { dim: 4 dim: 16 dim: 5 dim: 7 } } }
  layer { name: "bn" type: "BatchNorm" bottom: "data" top: "bn" }
  layer { name: "scale" type: "Scale" bottom: "bn" top: "bn"
    scale_param { bias_term: true filler { type: "uniform" min: 0.5 max: 1.5 }
                  bias_filler { type: "gaussian" std: 0.4 } } }
  layer { name: "relu" type: "ReLU" bottom: "bn" top: "bn" }
  layer { name: "sum" type: "Eltwise" bottom: "bn" bottom: "data" top: "sum" }
  layer { name: "relu_sum" type: "ReLU" bottom: "sum" top: "sum" }
  layer { name: "loss" type: "EuclideanLoss" bottom: "sum" bottom: "target" top: "loss" }
)";

// A residual block on oneDNN's convolutions: 3x3 and 1x1 with BatchNorm, Scale and ReLU between,
// a 1x1 shortcut, their sum and its ReLU.
const char kResidualNet[] = R"(
  name: "Residual"
  state { phase: TRAIN }
  layer { name: "data" type: "Input" top: "data" top: "target"
    input_param { shape { dim: 4 dim: 16 dim: 8 dim: 8 } shape { dim: 4 dim: 32 dim: 4 dim: 4 } } }
  layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
    convolution_param { num_output: 32 kernel_size: 3 pad: 1 stride: 2 bias_term: false engine: MKLDNN
                        weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1" }
  layer { name: "scale1" type: "Scale" bottom: "conv1" top: "conv1" scale_param { bias_term: true } }
  layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
  layer { name: "conv2" type: "Convolution" bottom: "conv1" top: "conv2"
    convolution_param { num_output: 32 kernel_size: 1 bias_term: false engine: MKLDNN
                        weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "bn2" type: "BatchNorm" bottom: "conv2" top: "conv2" }
  layer { name: "scale2" type: "Scale" bottom: "conv2" top: "conv2" scale_param { bias_term: true } }
  layer { name: "shortcut" type: "Convolution" bottom: "data" top: "shortcut"
    convolution_param { num_output: 32 kernel_size: 1 stride: 2 engine: MKLDNN
                        weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "sum" type: "Eltwise" bottom: "conv2" bottom: "shortcut" top: "sum" }
  layer { name: "relu_sum" type: "ReLU" bottom: "sum" top: "sum" }
  layer { name: "loss" type: "EuclideanLoss" bottom: "sum" bottom: "target" top: "loss" }
)";

}  // namespace

class BlockedLayoutTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { Caffe::set_mode(Caffe::CPU); }
  const char* fusion() const { return GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(Fusion, BlockedLayoutTest, ::testing::Values("1", "0"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param[0] == '1' ? "Fused" : "Apart");
                         });

// The element-wise layers given a blocked input (as a oneDNN convolution leaves it) keep it
// blocked, and end each pass as the net given it plain.
TEST_P(BlockedLayoutTest, ElementWiseLayersWorkOnBlockedValuesWhereTheyAre) {
  std::unique_ptr<Net<float>> plain = MakeNet(kElementWiseNet, fusion(), "1");
  std::unique_ptr<Net<float>> blocked = MakeNet(kElementWiseNet, fusion(), "1");
  for (int iteration = 0; iteration < 2; ++iteration) {
    blocked->blob_by_name("data")->mutable_cpu_data_in(16, /*keep_values=*/true);
    const float want = plain->ForwardBackward();
    const float got = blocked->ForwardBackward();
    EXPECT_NEAR(want, got, 1e-5f * std::fabs(want)) << "loss of iteration " << iteration;
    // Read before ExpectSameState reads them plain. Fused, the group keeps "bn" blocked for the
    // sum, and the gradients go where their values went (the Scale apart takes plain values, and
    // the sum then converts the data to plain too; the net wants no gradient of the data).
    if (std::string(fusion()) == "1") {
      EXPECT_EQ(16, blocked->blob_by_name("data")->cpu_data_block()) << iteration;
      EXPECT_EQ(16, blocked->blob_by_name("bn")->cpu_data_block()) << iteration;
      EXPECT_EQ(16, blocked->blob_by_name("bn")->cpu_diff_block()) << iteration;
    }
    ExpectSameState(plain.get(), blocked.get(), 1e-5f);
  }
}

// oneDNN's convolutions hand their outputs on blocked to the layers that take them: the same
// net as with CAFFE_BLOCKED_LAYOUT=0 (every convolution reordering to plain and back).
TEST_P(BlockedLayoutTest, ResidualBlockOnOneDnnRunsAsWithPlainActivations) {
#ifndef USE_DNNL
  GTEST_SKIP() << "this build has no oneDNN";
#else
  std::unique_ptr<Net<float>> plain = MakeNet(kResidualNet, fusion(), "0");
  std::unique_ptr<Net<float>> blocked = MakeNet(kResidualNet, fusion(), "1");
  for (int iteration = 0; iteration < 3; ++iteration) {
    const float want = plain->ForwardBackward();
    const float got = blocked->ForwardBackward();
    EXPECT_NEAR(want, got, 1e-4f * std::fabs(want)) << "loss of iteration " << iteration;
    EXPECT_EQ(1, plain->blob_by_name("conv1")->cpu_data_block());
    // Apart, the Scale reads plain and so does the sum after it: blocks survive only where the
    // group runs. Fused, the first block's output and its gradient stay blocked, as does the
    // shortcut, which the sum reads in the block of its first bottom.
    if (std::string(fusion()) == "1") {
      const int block = blocked->blob_by_name("conv1")->cpu_data_block();
      if (iteration == 0 && block == 1) {
        GTEST_SKIP() << "oneDNN wants no channel blocks on this CPU (neither AVX2 nor AVX-512)";
      }
      EXPECT_GT(block, 1) << "iteration " << iteration;
      EXPECT_EQ(block, blocked->blob_by_name("conv1")->cpu_diff_block())
          << "iteration " << iteration;
      EXPECT_EQ(block, blocked->blob_by_name("conv2")->cpu_data_block())
          << "iteration " << iteration;
      EXPECT_EQ(block, blocked->blob_by_name("shortcut")->cpu_data_block())
          << "iteration " << iteration;
    }
  }
  // Reading every blob plain makes the convolutions hand on plain from then on: once, at the end.
  ExpectSameState(plain.get(), blocked.get(), 1e-4f);
#endif
}

// An Inception-like block on oneDNN's convolutions: two branches (the second with `channels`
// outputs) joined by a Concat, a 3x3 stride-2 MAX pooling, a convolution and a global AVE
// pooling before the loss.
std::string InceptionNet(int channels) {
  return R"(
    name: "Inception"
    state { phase: TRAIN }
    layer { name: "data" type: "Input" top: "data" top: "target"
      input_param { shape { dim: 2 dim: 16 dim: 9 dim: 9 } shape { dim: 2 dim: 16 dim: 1 dim: 1 } } }
    layer { name: "branch1" type: "Convolution" bottom: "data" top: "branch1"
      convolution_param { num_output: 16 kernel_size: 1 engine: MKLDNN
                          weight_filler { type: "gaussian" std: 0.1 } } }
    layer { name: "branch2" type: "Convolution" bottom: "data" top: "branch2"
      convolution_param { num_output: )" +
         std::to_string(channels) + R"( kernel_size: 3 pad: 1 engine: MKLDNN
                          weight_filler { type: "gaussian" std: 0.1 } } }
    layer { name: "concat" type: "Concat" bottom: "branch1" bottom: "branch2" top: "concat" }
    layer { name: "pool" type: "Pooling" bottom: "concat" top: "pool"
      pooling_param { pool: MAX kernel_size: 3 stride: 2 } }
    layer { name: "conv" type: "Convolution" bottom: "pool" top: "conv"
      convolution_param { num_output: 16 kernel_size: 3 pad: 1 engine: MKLDNN
                          weight_filler { type: "gaussian" std: 0.1 } } }
    layer { name: "global" type: "Pooling" bottom: "conv" top: "global"
      pooling_param { pool: AVE global_pooling: true } }
    layer { name: "loss" type: "EuclideanLoss" bottom: "global" bottom: "target" top: "loss" }
  )";
}

// Concat and Pooling take blocked values where they are, and the net ends each pass as with
// plain activations; a branch whose channels the block does not divide is joined plain (20:
// neither AVX-512's blocks of 16 nor AVX2's of 8 divide it).
TEST(BlockedLayoutInceptionTest, ConcatAndPoolingRunAsWithPlainActivations) {
#ifndef USE_DNNL
  GTEST_SKIP() << "this build has no oneDNN";
#else
  Caffe::set_mode(Caffe::CPU);
  for (int channels : {32, 20}) {
    std::unique_ptr<Net<float>> plain = MakeNet(InceptionNet(channels), "1", "0");
    std::unique_ptr<Net<float>> blocked = MakeNet(InceptionNet(channels), "1", "1");
    for (int iteration = 0; iteration < 2; ++iteration) {
      const float want = plain->ForwardBackward();
      const float got = blocked->ForwardBackward();
      EXPECT_NEAR(want, got, 1e-4f * std::fabs(want)) << channels << ", iteration " << iteration;
      // The concat reads its first bottom's block, and converts a branch it cannot join so.
      const int block = blocked->blob_by_name("concat")->cpu_data_block();
      if (channels == 32 && block == 1) {
        GTEST_SKIP() << "oneDNN wants no channel blocks on this CPU";
      }
      if (channels == 32) {
        for (const char* name : {"concat", "pool"}) {
          EXPECT_EQ(block, blocked->blob_by_name(name)->cpu_data_block()) << name;
        }
        EXPECT_EQ(block, blocked->blob_by_name("concat")->cpu_diff_block());
        EXPECT_EQ(block, blocked->blob_by_name("branch1")->cpu_diff_block());
      } else {
        EXPECT_EQ(1, block);
      }
    }
    ExpectSameState(plain.get(), blocked.get(), 1e-4f);
  }
#endif
}

// A blocked blob that a layer without blocks reads (here the loss) is read plain, and the
// convolution that left it blocked hands it on plain from then on.
TEST(BlockedLayoutConvolutionTest, ConvolutionHandsOnPlainWhereTheNextLayerWantsItSo) {
#ifndef USE_DNNL
  GTEST_SKIP() << "this build has no oneDNN";
#else
  Caffe::set_mode(Caffe::CPU);
  std::unique_ptr<Net<float>> net = MakeNet(R"(
    name: "ConvLoss"
    layer { name: "data" type: "Input" top: "data" top: "target"
      input_param { shape { dim: 2 dim: 16 dim: 6 dim: 6 } shape { dim: 2 dim: 16 dim: 6 dim: 6 } } }
    layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
      convolution_param { num_output: 16 kernel_size: 3 pad: 1 engine: MKLDNN
                          weight_filler { type: "gaussian" std: 0.1 } } }
    layer { name: "loss" type: "EuclideanLoss" bottom: "conv" bottom: "target" top: "loss" }
  )",
                                            "1", "1");
  const int conv = 1;
  net->ForwardFromTo(0, conv);
  const int block = net->blob_by_name("conv")->cpu_data_block();
  if (block == 1) GTEST_SKIP() << "oneDNN wants no channel blocks on this CPU";
  float loss = 0;
  net->Forward(&loss);  // the loss converts the blob to plain, in place
  EXPECT_EQ(1, net->blob_by_name("conv")->cpu_data_block());
  net->ForwardFromTo(0, conv);
  EXPECT_EQ(1, net->blob_by_name("conv")->cpu_data_block())
      << "the convolution should hand on plain";
  float again = 0;
  net->Forward(&again);
  EXPECT_EQ(loss, again);
#endif
}

}  // namespace caffe
