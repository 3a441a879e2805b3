// A oneDNN convolution with the BatchNorm (stored statistics), Scale and ReLU after it folded in
// (DnnlConvolutionLayer::FuseWithNext): which layers it takes, and that a net so fused ends its
// forward and a backward after it as the same net with CAFFE_FUSION=0. Forward convolves with
// weights[o] * a[o] and adds the folded bias, where apart the BatchNorm and Scale multiply and add
// after the sums: the products round otherwise, hence 1e-5 relative to the blob's largest value
// (measured: up to 1.4e-6). Backward forwards the layers again, the BatchNorm's group as its own
// (whose Scale gradients sum by channels, apart by planes), then runs their backward: the diffs
// agree within the same tolerance (measured: up to 1.6e-6).
#include <cmath>
#include <memory>
#include <string>

#include "caffe/kernels/bf16_gemm.hpp"
#include "caffe/net.hpp"
#include "caffe/test/fusion_test_util.hpp"
#include "caffe/test/scoped_env.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

#ifdef USE_DNNL

namespace {

// data (2, 16, 10, 10) -> conv (32 outputs, `geometry`, no bias unless `conv_bias`) -> `after`
// (layers in place on "conv") -> conv2 (1x1) -> loss against a target; `phase` TEST or TRAIN.
std::string FoldNet(const std::string& after, const std::string& phase = "TEST",
                    bool conv_bias = false, const std::string& geometry = "kernel_size: 3 pad: 1") {
  return R"(
    name: "Fold"
    state { phase: )" +
         phase + R"( }
    force_backward: true
    layer { name: "data" type: "Input" top: "data" top: "target"
      input_param { shape { dim: 2 dim: 16 dim: 10 dim: 10 }
                    shape { dim: 2 dim: 16 )" +
         std::string(geometry.find("stride: 2") != std::string::npos ? "dim: 5 dim: 5"
                                                                     : "dim: 10 dim: 10") +
         R"( } } }
    layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
      convolution_param { num_output: 32 engine: MKLDNN )" +
         geometry + R"(
        bias_term: )" +
         (conv_bias ? "true" : "false") + R"(
        weight_filler { type: "gaussian" std: 0.3 }
        bias_filler { type: "gaussian" std: 0.5 } } }
  )" + after +
         R"(
    layer { name: "conv2" type: "Convolution" bottom: "conv" top: "conv2"
      convolution_param { num_output: 16 kernel_size: 1 engine: MKLDNN
        weight_filler { type: "gaussian" std: 0.3 } } }
    layer { name: "loss" type: "EuclideanLoss" bottom: "conv2" bottom: "target" top: "loss" }
  )";
}

const char kBatchNorm[] = R"(
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "conv" })";
const char kScale[] = R"(
    layer { name: "scale" type: "Scale" bottom: "conv" top: "conv"
      scale_param { bias_term: true filler { type: "uniform" min: -1.5 max: 1.5 }
                    bias_filler { type: "gaussian" std: 0.4 } } })";
const char kReLU[] = R"(
    layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" })";

std::unique_ptr<Net<float>> MakeNet(const std::string& text, const char* fusion) {
  ScopedEnv env("CAFFE_FUSION", fusion);
  std::unique_ptr<Net<float>> net = SeededNet(text, "fold test net");
  FillStoredStatistics(net->layer_by_name("bn").get());
  return net;
}

// max |want - got| <= tolerance max |want| over the blob's data (or diff).
void ExpectClose(const Blob<float>& want, const Blob<float>& got, bool diff,
                 const std::string& what, float tolerance = 1e-5f) {
  const float* w = diff ? want.cpu_diff() : want.cpu_data();
  const float* g = diff ? got.cpu_diff() : got.cpu_data();
  float scale = 0, error = 0;
  for (int i = 0; i < want.count(); ++i) {
    scale = std::max(scale, std::fabs(w[i]));
    error = std::max(error, std::fabs(w[i] - g[i]));
  }
  EXPECT_LE(error, tolerance * scale) << what << ": max error " << error << " of " << scale;
}

// The group forms with `followers` layers after conv; forward, and a backward after it, end as
// apart: every blob's data and diff, every parameter's diff.
void ExpectFoldedLikeApart(const std::string& text, int followers) {
  Caffe::set_mode(Caffe::CPU);
  std::unique_ptr<Net<float>> apart = MakeNet(text, "0");
  std::unique_ptr<Net<float>> fused = MakeNet(text, "1");
  const int conv = 1;
  ASSERT_EQ(fused->layer_names()[conv], "conv");
  ASSERT_TRUE(fused->RunsFused(conv));
  ASSERT_EQ(fused->fused_followers()[conv], followers);
  for (int pass = 0; pass < 2; ++pass) {  // the second reuses the folded primitive
    apart->Forward();
    fused->Forward();
    for (const char* blob : {"conv", "conv2", "loss"}) {
      ExpectClose(*apart->blob_by_name(blob), *fused->blob_by_name(blob), false, blob);
    }
  }
  apart->ClearParamDiffs();
  fused->ClearParamDiffs();
  apart->Backward();
  fused->Backward();
  for (size_t b = 0; b < apart->blobs().size(); ++b) {
    const std::string& name = apart->blob_names()[b];
    ExpectClose(*apart->blobs()[b], *fused->blobs()[b], false, name + " data after backward");
    ExpectClose(*apart->blobs()[b], *fused->blobs()[b], true, name + " diff");
  }
  for (size_t p = 0; p < apart->learnable_params().size(); ++p) {
    ExpectClose(*apart->learnable_params()[p], *fused->learnable_params()[p], true,
                "parameter " + std::to_string(p) + " diff");
  }
}

}  // namespace

TEST(DnnlConvolutionFusionTest, BatchNormScaleAndReLUFoldIntoTheConvolution) {
  ExpectFoldedLikeApart(FoldNet(std::string(kBatchNorm) + kScale + kReLU), 3);
}

TEST(DnnlConvolutionFusionTest, AConvolutionBiasAndALeakyReLUFoldToo) {
  ExpectFoldedLikeApart(FoldNet(std::string(kBatchNorm) + kScale + R"(
    layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv"
      relu_param { negative_slope: 0.1 } })",
                                "TEST", /*conv_bias=*/true),
                        3);
}

// ResNet's downsampling shortcut: a 1x1 convolution of stride 2, shown only the positions it reads.
TEST(DnnlConvolutionFusionTest, ADownsamplingConvolutionFolds) {
  ExpectFoldedLikeApart(
      FoldNet(std::string(kBatchNorm) + kScale, "TEST", false, "kernel_size: 1 stride: 2"), 2);
}

// In bf16 arithmetic the weights are rounded after the scaling, apart before it: each product's
// factors differ by up to 2^-8 relative, and the 144-term sums by up to that of their scale, so
// the outputs agree within 2^-6 of the largest (measured: 2.4e-3).
TEST(DnnlConvolutionFusionTest, Bf16ConvolutionsFoldToo) {
  if (!CpuHasBf16Math()) GTEST_SKIP() << "no bf16 arithmetic here: " << CpuBf16Explanation();
  Caffe::set_mode(Caffe::CPU);
  std::string text = FoldNet(std::string(kBatchNorm) + kScale + kReLU);
  text.insert(text.find("force_backward"), "default_forward_type: BFLOAT16\n    ");
  std::unique_ptr<Net<float>> apart = MakeNet(text, "0");
  std::unique_ptr<Net<float>> fused = MakeNet(text, "1");
  ASSERT_EQ(fused->layer_by_name("conv")->forward_math(), BFLOAT16);
  ASSERT_EQ(fused->fused_followers()[1], 3);
  apart->Forward();
  fused->Forward();
  ExpectClose(*apart->blob_by_name("conv"), *fused->blob_by_name("conv"), false, "conv", 1.0f / 64);
}

TEST(DnnlConvolutionFusionTest, BatchNormAloneOrWithAReLUFolds) {
  ExpectFoldedLikeApart(FoldNet(kBatchNorm), 1);
  ExpectFoldedLikeApart(FoldNet(std::string(kBatchNorm) + kReLU), 2);
}

// Statistics the user changes between passes (pycaffe) are the ones the next forward folds.
TEST(DnnlConvolutionFusionTest, ChangedStatisticsFoldAnew) {
  Caffe::set_mode(Caffe::CPU);
  const std::string text = FoldNet(std::string(kBatchNorm) + kScale + kReLU);
  std::unique_ptr<Net<float>> apart = MakeNet(text, "0");
  std::unique_ptr<Net<float>> fused = MakeNet(text, "1");
  fused->Forward();
  for (Net<float>* net : {apart.get(), fused.get()}) {
    FillGaussian(net->layer_by_name("bn")->blobs()[0].get(), 21, 3.0f);
    FillGaussian(net->layer_by_name("scale")->blobs()[0].get(), 22);
    net->Forward();
  }
  ExpectClose(*apart->blob_by_name("conv"), *fused->blob_by_name("conv"), false, "conv");
}

// Batch statistics (TRAIN) are the BatchNorm's own group; a layer between, or a ReLU before the
// Scale, ends the convolution's.
TEST(DnnlConvolutionFusionTest, OnlyStoredStatisticsInPlaceFold) {
  Caffe::set_mode(Caffe::CPU);
  const std::string group = std::string(kBatchNorm) + kScale + kReLU;
  std::unique_ptr<Net<float>> train = MakeNet(FoldNet(group, "TRAIN"), "1");
  EXPECT_FALSE(train->RunsFused(1));
  EXPECT_TRUE(train->RunsFused(2)) << "the BatchNorm heads its own group";
  std::unique_ptr<Net<float>> relu_first =
      MakeNet(FoldNet(std::string(kBatchNorm) + kReLU + kScale), "1");
  EXPECT_EQ(relu_first->fused_followers()[1], 2) << "BatchNorm and ReLU; the Scale after apart";
  std::unique_ptr<Net<float>> not_in_place = MakeNet(FoldNet(R"(
    layer { name: "bn" type: "BatchNorm" bottom: "conv" top: "bn" }
    layer { name: "back" type: "Split" bottom: "bn" top: "conv2_in" })"),
                                                     "1");
  EXPECT_FALSE(not_in_place->RunsFused(1));
}

#else

TEST(DnnlConvolutionFusionTest, NeedsOneDnn) {
  GTEST_SKIP() << "this build has no oneDNN (libdnnl-dev): Convolution runs on Caffe's engine";
}

#endif  // USE_DNNL

}  // namespace caffe
