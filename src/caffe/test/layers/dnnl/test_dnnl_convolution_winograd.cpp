// DnnlConvolutionLayer's own Winograd passes (dnnl_convolution_winograd.cpp), which run 3x3
// convolutions of stride 1 where oneDNN has no Winograd (CPUs without AVX-512): which layers take
// them, forward and backward against Caffe's engine with bottoms plain and channel-blocked (as a
// oneDNN layer before hands them on) and param diffs that accumulate, and finite-difference
// gradients. Tolerance as test_dnnl_convolution_layer's, 1e-4 of the largest value (measured
// here: 2e-6 to 4e-6, the transforms' roundings; kernels/test_winograd_convolution holds the
// kernels to 1e-5).
#include <cmath>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/layers/convolution_layer.hpp"
#include "caffe/test/engine_test_util.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/scoped_env.hpp"
#include "caffe/test/test_caffe_main.hpp"
#ifdef USE_DNNL
#include <oneapi/dnnl/dnnl.hpp>

#include "caffe/layers/dnnl/dnnl_convolution_layer.hpp"
#endif

namespace caffe {

#ifdef USE_DNNL

namespace {

// Where oneDNN runs AVX-512 kernels it has Winograd's algorithm itself, and these passes stand
// aside.
bool OneDnnHasWinograd() {
  const auto want = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  return (static_cast<unsigned>(dnnl::get_effective_cpu_isa()) & want) == want;
}

LayerParameter ConvParam(int num_output, const std::string& fields) {
  LayerParameter param = ParseLayerParam(
      "name: 'conv' type: 'Convolution' convolution_param { kernel_size: 3 " + fields +
      " weight_filler { type: 'gaussian' } bias_filler { type: 'gaussian' } }");
  param.mutable_convolution_param()->set_num_output(num_output);
  return param;
}

void ExpectClose(const Blob<float>& actual, const Blob<float>& expected, bool diff,
                 const std::string& what) {
  ExpectCloseToLargest(actual, expected, diff, 1e-4f, what);
}

struct Case {
  std::string name;
  std::vector<int> bottom_shape;
  std::string fields;
  int num_output;
  int bottom_block;  // the bottom's channel blocks as the layer gets it (1: plain)
};

class DnnlConvolutionWinogradTest : public ::testing::TestWithParam<Case> {
 protected:
  DnnlConvolutionWinogradTest() { Caffe::set_mode(Caffe::CPU); }
};

}  // namespace

TEST_P(DnnlConvolutionWinogradTest, MatchesCaffesEngine) {
  if (OneDnnHasWinograd()) GTEST_SKIP() << "oneDNN runs its own Winograd on this CPU (AVX-512)";
  const Case& c = GetParam();
  const ScopedEnv winograd("CAFFE_WINOGRAD", nullptr);  // the default, not the user's
  const LayerParameter param = ConvParam(c.num_output, c.fields);
  ConvolutionLayer<float> reference(param);
  DnnlConvolutionLayer layer(param, false);
  Blob<float> bottom(c.bottom_shape), ref_bottom(c.bottom_shape), top, ref_top;
  FillGaussian(&bottom, 11);
  ref_bottom.CopyFrom(bottom);
  reference.SetUp({&ref_bottom}, {&ref_top});
  layer.SetUp({&bottom}, {&top});
  ASSERT_TRUE(layer.runs_winograd());
  ShareWeightsAndParamDiffs(&reference, &layer);  // param diffs that must accumulate
  // As a oneDNN layer before would hand it on: blocked in place, values kept.
  if (c.bottom_block > 1) bottom.mutable_cpu_data_in(c.bottom_block, /*keep_values=*/true);
  reference.Forward({&ref_bottom}, {&ref_top});
  layer.Forward({&bottom}, {&top});
  ExpectClose(top, ref_top, false, c.name + " top");

  FillGaussian(&ref_top, 31);
  caffe_copy(ref_top.count(), ref_top.cpu_data(), ref_top.mutable_cpu_diff());
  caffe_copy(top.count(), ref_top.cpu_diff(), top.mutable_cpu_diff());
  caffe_set(bottom.count(), 7.f, bottom.mutable_cpu_diff());  // overwritten
  if (c.bottom_block > 1) bottom.mutable_cpu_data_in(c.bottom_block, /*keep_values=*/true);
  reference.Backward({&ref_top}, {true}, {&ref_bottom});
  layer.Backward({&top}, {true}, {&bottom});
  ExpectClose(bottom, ref_bottom, true, c.name + " bottom diff");
  for (size_t i = 0; i < reference.blobs().size(); ++i) {
    ExpectClose(*layer.blobs()[i], *reference.blobs()[i], true,
                c.name + " param diff " + std::to_string(i));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Geometries, DnnlConvolutionWinogradTest,
    ::testing::Values(Case{"PlainPadded", {2, 16, 9, 7}, "pad: 1", 32, 1},
                      // Channels in 8s, not 16s: oneDNN's direct AVX2 kernels block by 8.
                      Case{"BlocksOfEight", {2, 24, 10, 10}, "pad: 1", 40, 8},
                      Case{"UnpaddedNoBias", {3, 8, 7, 12}, "bias_term: false", 8, 8},
                      Case{"PaddedTwiceBlocksOfSixteen", {2, 32, 6, 5}, "pad: 2", 16, 16}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// Which layers take the passes: 3x3, stride 1, ungrouped, undilated, whole 8s of channels, fp32,
// CAFFE_WINOGRAD not 0.
TEST(DnnlConvolutionWinogradChoiceTest, OnlyThreeByThreeOfStrideOneInEightsOfChannels) {
  if (OneDnnHasWinograd()) GTEST_SKIP() << "oneDNN runs its own Winograd on this CPU (AVX-512)";
  Caffe::set_mode(Caffe::CPU);
  struct Choice {
    const char* fields;
    int channels, outputs;
    const char* winograd;  // CAFFE_WINOGRAD
    bool expected;
  };
  for (const Choice& choice :
       {Choice{"pad: 1", 16, 16, nullptr, true}, Choice{"pad: 1", 16, 16, "0", false},
        Choice{"pad: 1 stride: 2", 16, 16, nullptr, false},
        Choice{"pad: 2 dilation: 2", 16, 16, nullptr, false},
        Choice{"pad: 1 group: 2", 32, 32, nullptr, false}, Choice{"pad: 1", 12, 16, nullptr, false},
        Choice{"pad: 1 kernel_size: 5", 16, 16, nullptr, false}}) {
    const ScopedEnv winograd("CAFFE_WINOGRAD", choice.winograd);
    LayerParameter param = ConvParam(choice.outputs, choice.fields);
    if (std::string(choice.fields).find("kernel_size: 5") != std::string::npos) {
      param.mutable_convolution_param()->clear_kernel_size();
      param.mutable_convolution_param()->add_kernel_size(5);
    }
    DnnlConvolutionLayer layer(param, false);
    Blob<float> bottom(std::vector<int>{2, choice.channels, 8, 8}), top;
    layer.SetUp({&bottom}, {&top});
    EXPECT_EQ(layer.runs_winograd(), choice.expected)
        << choice.fields << ", " << choice.channels << " -> " << choice.outputs
        << " channels, CAFFE_WINOGRAD " << (choice.winograd ? choice.winograd : "unset");
  }
}

// Per output (the sum of the squared outputs adds up every output's roundings, 3e-6 of a value,
// Winograd's, to 6e-3 of a derivative), with a step of 1: central differences are exact at any
// step for a layer linear in its input and weights, and the roundings shrink with the step (1e-2
// steps made them 2e-3 of a derivative, over the bound).
TEST(DnnlConvolutionWinogradGradientTest, GradientsMatchFiniteDifferences) {
  if (OneDnnHasWinograd()) GTEST_SKIP() << "oneDNN runs its own Winograd on this CPU (AVX-512)";
  Caffe::set_mode(Caffe::CPU);
  const ScopedEnv winograd("CAFFE_WINOGRAD", nullptr);
  DnnlConvolutionLayer layer(ConvParam(8, "pad: 1"), false);
  Blob<float> bottom(std::vector<int>{1, 8, 3, 5}), top;
  FillGaussian(&bottom, 3);
  const vector<Blob<float>*> bottoms{&bottom}, tops{&top};
  GradientChecker<float> checker(1.f, 1e-3f);
  checker.CheckGradientExhaustive(&layer, bottoms, tops);
  EXPECT_TRUE(layer.runs_winograd());
}

#endif  // USE_DNNL

}  // namespace caffe
