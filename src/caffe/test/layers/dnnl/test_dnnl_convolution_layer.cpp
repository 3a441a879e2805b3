// The oneDNN convolution engine: the registry builds the engine util/cpu_engine chooses, and,
// where this build has oneDNN, forward and
// backward against Caffe's own engine with the same weights on 1-D, 2-D and 3-D geometries
// (padding, strides, dilation, groups, no bias, several bottoms, a geometry oneDNN cannot express),
// gradients that accumulate as Caffe's do, and finite-difference gradients.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/kernels/bf16_gemm.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/layer_engine.hpp"
#include "caffe/layer_factory.hpp"
#include "caffe/layers/convolution_layer.hpp"
#include "caffe/test/engine_test_util.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/scoped_env.hpp"
#include "caffe/test/test_caffe_main.hpp"
#ifdef USE_DNNL
#include "caffe/layers/dnnl/dnnl_convolution_layer.hpp"
#endif

namespace caffe {

namespace {

// A 3x3 kernel unless conv_fields give one.
LayerParameter ConvParam(const std::string& extra_layer_fields, const std::string& conv_fields) {
  const bool kernel_given = conv_fields.find("kernel") != std::string::npos;
  return ParseLayerParam("name: 'conv' type: 'Convolution' " + extra_layer_fields +
                         " convolution_param { num_output: 4 " +
                         (kernel_given ? "" : "kernel_size: 3 ") + conv_fields +
                         " weight_filler { type: 'gaussian' } bias_filler { type: 'gaussian' } }");
}

}  // namespace

TEST(DnnlConvolutionEngineTest, TheRegistryBuildsTheChosenEngine) {
  const ScopedEnv default_engine("CAFFE_CPU_ENGINE", nullptr);  // the default, not the user's
  auto float_layer = LayerRegistry<float>::CreateLayer(ConvParam("", ""));
  auto double_layer = LayerRegistry<double>::CreateLayer(ConvParam("", ""));
  auto caffe_layer = LayerRegistry<float>::CreateLayer(ConvParam("", "engine: CAFFE"));
  EXPECT_STREQ(float_layer->type(), "Convolution");
#ifdef USE_DNNL
  EXPECT_NE(dynamic_cast<DnnlConvolutionLayer*>(float_layer.get()), nullptr);
  EXPECT_EQ(dynamic_cast<DnnlConvolutionLayer*>(caffe_layer.get()), nullptr);
#endif
  EXPECT_NE(dynamic_cast<ConvolutionLayer<double>*>(double_layer.get()), nullptr);
  EXPECT_NE(dynamic_cast<ConvolutionLayer<float>*>(caffe_layer.get()), nullptr);
}

#ifdef USE_DNNL

namespace {

// A geometry: the bottom's shape, the convolution_param fields besides num_output, and
// num_output.
struct Case {
  std::string name;
  std::vector<int> bottom_shape;
  std::string conv_fields;
  bool expect_dnnl = true;
  int num_output = 4;
  bool winograd = false;  // a geometry Winograd's algorithm takes (oneDNN's on AVX-512, else ours)
};

// max |actual - expected| <= 1e-4 max |expected| (summation order differs between the engines).
// Measured: the direct algorithm 1e-8 to 2e-6 of the largest value (1.8e-5 summing 16 x 9 x 300
// x 300 products for OneImagePerCall's weight gradient), Winograd's 0.9e-6 to 1.8e-6 (oneDNN's)
// and 2e-6 to 4e-6 (ours): its 6x6 input tiles go through transforms with entries up to 8, whose
// roundings it scales.
void ExpectClose(const Blob<float>& actual, const Blob<float>& expected, bool diff,
                 const std::string& what) {
  ExpectCloseToLargest(actual, expected, diff, 1e-4f, what);
}

class DnnlConvolutionTest : public ::testing::TestWithParam<Case> {
 protected:
  DnnlConvolutionTest() { Caffe::set_mode(Caffe::CPU); }
};

}  // namespace

// Both engines with the same weights and inputs; a second pair of bottoms shares the weights; the
// param diffs start non-zero, so accumulation (not overwriting) is checked too.
TEST_P(DnnlConvolutionTest, MatchesCaffesEngineForwardAndBackward) {
  const Case& c = GetParam();
  const ScopedEnv winograd("CAFFE_WINOGRAD", nullptr);  // the default, not the user's
  LayerParameter param = ConvParam("", c.conv_fields);
  param.mutable_convolution_param()->set_num_output(c.num_output);
  ConvolutionLayer<float> reference(param);
  DnnlConvolutionLayer layer(param, false);
  Blob<float> bottom_a(c.bottom_shape), bottom_b(c.bottom_shape);
  Blob<float> ref_bottom_a(c.bottom_shape), ref_bottom_b(c.bottom_shape);
  FillGaussian(&bottom_a, 11);
  FillGaussian(&bottom_b, 12);
  ref_bottom_a.CopyFrom(bottom_a);
  ref_bottom_b.CopyFrom(bottom_b);
  Blob<float> top_a, top_b, ref_top_a, ref_top_b;
  const vector<Blob<float>*> bottoms{&bottom_a, &bottom_b}, tops{&top_a, &top_b};
  const vector<Blob<float>*> ref_bottoms{&ref_bottom_a, &ref_bottom_b};
  const vector<Blob<float>*> ref_tops{&ref_top_a, &ref_top_b};
  reference.SetUp(ref_bottoms, ref_tops);
  layer.SetUp(bottoms, tops);
  EXPECT_EQ(layer.runs_on_dnnl(), c.expect_dnnl);
  EXPECT_EQ(layer.runs_winograd(), c.winograd);
  ShareWeightsAndParamDiffs(&reference, &layer);  // param diffs that must accumulate
  reference.Forward(ref_bottoms, ref_tops);
  layer.Forward(bottoms, tops);
  ExpectClose(top_a, ref_top_a, false, c.name + " top 0");
  ExpectClose(top_b, ref_top_b, false, c.name + " top 1");

  FillGaussian(&ref_top_a, 31);
  FillGaussian(&ref_top_b, 32);
  caffe_copy(ref_top_a.count(), ref_top_a.cpu_data(), ref_top_a.mutable_cpu_diff());
  caffe_copy(ref_top_b.count(), ref_top_b.cpu_data(), ref_top_b.mutable_cpu_diff());
  caffe_copy(top_a.count(), ref_top_a.cpu_diff(), top_a.mutable_cpu_diff());
  caffe_copy(top_b.count(), ref_top_b.cpu_diff(), top_b.mutable_cpu_diff());
  // Bottom diffs are overwritten, stale values and all (also input no window reaches).
  caffe_set(bottom_a.count(), 7.f, bottom_a.mutable_cpu_diff());
  caffe_set(bottom_b.count(), 7.f, bottom_b.mutable_cpu_diff());
  reference.Backward(ref_tops, {true, true}, ref_bottoms);
  layer.Backward(tops, {true, true}, bottoms);
  ExpectClose(bottom_a, ref_bottom_a, true, c.name + " bottom diff 0");
  ExpectClose(bottom_b, ref_bottom_b, true, c.name + " bottom diff 1");
  for (size_t i = 0; i < reference.blobs().size(); ++i) {
    ExpectClose(*layer.blobs()[i], *reference.blobs()[i], true,
                c.name + " param diff " + std::to_string(i));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Geometries, DnnlConvolutionTest,
    ::testing::Values(
        Case{"Padded", {2, 3, 6, 5}, "pad: 1"},
        Case{"StridedWithARemainder", {2, 3, 7, 8}, "stride: 2 pad: 1"},
        Case{"FirstLayerLike", {2, 3, 35, 35}, "kernel_size: 7 stride: 4"},
        Case{"GroupsAndDilation", {2, 4, 9, 8}, "group: 2 dilation: 2 pad: 2"},
        Case{"NoBiasRectangular", {1, 5, 6, 7}, "bias_term: false kernel_h: 3 kernel_w: 1"},
        Case{"OneByOne", {3, 8, 4, 4}, "kernel_size: 1"},
        // Channels in whole blocks of 16 both ways: the weight gradient comes in 16x16 tiles.
        Case{"OneByOneInWholeBlocks", {2, 32, 3, 5}, "kernel_size: 1", true, 48},
        Case{"OneByOneInWholeBlocksOneAxis", {3, 16, 7}, "kernel_size: 1", true, 32},
        Case{"OneByOneInWholeBlocksThreeAxes", {2, 32, 2, 3, 2}, "kernel_size: 1", true, 16},
        // Grouped 1x1 convolutions, whole blocks per group and one input per group: not tiles.
        Case{"OneByOneGroupsInWholeBlocks", {2, 32, 3, 3}, "kernel_size: 1 group: 2", true, 32},
        Case{"OneByOneOneInputPerGroup", {2, 16, 3, 3}, "kernel_size: 1 group: 16", true, 256},
        Case{"OneSpatialAxis", {2, 3, 11}, "stride: 2 pad: 1"},
        Case{"ThreeSpatialAxes", {1, 2, 5, 6, 4}, "pad: 1 stride: 1 stride: 2 stride: 1"},
        // Activations are staged a few images per oneDNN call (4 MiB at most): 5.8 MB images go
        // one at a time, 1.07 MB images two at a time (four would be 4.3 MB); the gradients add
        // up over the calls.
        Case{"OneImagePerCall", {3, 16, 300, 300}, "pad: 1"},
        Case{"TwoImagesPerCall", {4, 8, 183, 183}, "stride: 2"},
        // The last window stops before the input ends (no window reaches the last row or
        // column): oneDNN sees the input up to where the windows end, strided as the whole.
        Case{"SkippedInputOnTheRight", {2, 3, 8, 8}, "stride: 2"},
        // ResNet's downsampling 1x1 convolutions of stride 2, on even and odd sizes, and others
        // (oneDNN reads every stride-th input through a strided view).
        Case{"OneByOneStrideTwoOnAnEvenSize", {2, 16, 8, 8}, "kernel_size: 1 stride: 2"},
        Case{"OneByOneStrideTwoOnAnOddSize", {3, 16, 7, 9}, "kernel_size: 1 stride: 2"},
        Case{"OneByOneStridesPerAxis", {2, 5, 9, 10}, "kernel_size: 1 stride_h: 3 stride_w: 2"},
        // Rows skipped, columns padded, several images per call.
        Case{"SkippedRowsPaddedColumns", {4, 5, 11, 12}, "kernel_size: 2 stride: 3 pad: 1"},
        Case{"SkippedOnOneSpatialAxisOfThree", {2, 3, 5, 7, 4}, "kernel_size: 1 stride: 2"},
        // 3x3 of stride 1 on whole blocks of 16 channels: Winograd's algorithm, on sizes that are
        // whole 4x4 output tiles and not, padded and not, with a bias and without.
        Case{"Winograd", {2, 32, 12, 12}, "pad: 1", true, 32, true},
        Case{"WinogradPartialTiles", {3, 16, 9, 7}, "pad: 1", true, 48, true},
        Case{"WinogradUnpaddedNoBias", {2, 16, 10, 11}, "bias_term: false", true, 16, true},
        Case{"WinogradResNetLike", {2, 64, 14, 14}, "pad: 1", true, 64, true}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(DnnlConvolutionGradientTest, GradientsMatchFiniteDifferences) {
  Caffe::set_mode(Caffe::CPU);
  DnnlConvolutionLayer layer(ConvParam("", "group: 2 stride: 2 pad: 1"), false);
  Blob<float> bottom(std::vector<int>{2, 4, 4, 4}), top;
  FillGaussian(&bottom, 3);
  const vector<Blob<float>*> bottoms{&bottom}, tops{&top};
  GradientChecker<float> checker(1e-2, 1e-3);
  checker.CheckGradientExhaustive(&layer, bottoms, tops);
  EXPECT_TRUE(layer.runs_on_dnnl());
}

// CAFFE_WINOGRAD=0 keeps 3x3 convolutions direct, and bf16 arithmetic is always direct (Winograd's
// algorithm runs in fp32 only, oneDNN's and ours).
TEST(DnnlConvolutionGradientTest, WinogradOnlyInFp32AndWhereNotSwitchedOff) {
  Caffe::set_mode(Caffe::CPU);
  struct Setting {
    const char* winograd;  // CAFFE_WINOGRAD
    bool bf16;
    bool expected;
  };
  for (const Setting& setting : {Setting{nullptr, false, true}, Setting{"1", false, true},
                                 Setting{"0", false, false}, Setting{nullptr, true, false}}) {
    const ScopedEnv winograd("CAFFE_WINOGRAD", setting.winograd);
    LayerParameter param = ConvParam("", "pad: 1");
    param.mutable_convolution_param()->set_num_output(16);
    if (setting.bf16 && !CpuHasBf16Math()) continue;
    DnnlConvolutionLayer layer(param, false);
    if (setting.bf16) layer.set_math(BFLOAT16, BFLOAT16);
    Blob<float> bottom(std::vector<int>{2, 16, 8, 8}), top;
    layer.SetUp({&bottom}, {&top});
    EXPECT_TRUE(layer.runs_on_dnnl());
    EXPECT_EQ(layer.runs_winograd(), setting.expected)
        << "CAFFE_WINOGRAD " << (setting.winograd ? setting.winograd : "unset") << ", bf16 "
        << setting.bf16;
  }
}

// By default oneDNN takes the shapes it runs faster: channels in whole blocks of 16, or an image's
// few channels in; asked for by name it takes every shape.
TEST(DnnlConvolutionGradientTest, ByDefaultOnlyChannelCountsOneDnnRunsFaster) {
  Caffe::set_mode(Caffe::CPU);
  struct Shape {
    int channels, outputs;
    bool by_default;
  };
  for (const Shape& shape :
       {Shape{3, 32, true}, Shape{32, 64, true}, Shape{1, 20, false}, Shape{20, 48, false}}) {
    for (bool only_where_faster : {true, false}) {
      LayerParameter param = ConvParam("", "");
      param.mutable_convolution_param()->set_num_output(shape.outputs);
      DnnlConvolutionLayer layer(param, only_where_faster);
      Blob<float> bottom(std::vector<int>{1, shape.channels, 6, 6}), top;
      layer.SetUp({&bottom}, {&top});
      EXPECT_EQ(layer.runs_on_dnnl(), shape.by_default || !only_where_faster)
          << shape.channels << " -> " << shape.outputs << " channels, only where faster "
          << only_where_faster;
    }
  }
}

// Frozen weights (lr_mult 0) with a bias that learns: the bias gradient accumulates and the
// weights' gradient stays as it was, although oneDNN computes both in one call.
TEST(DnnlConvolutionGradientTest, FrozenWeightsKeepTheirGradientWhileTheBiasLearns) {
  Caffe::set_mode(Caffe::CPU);
  const LayerParameter param = ConvParam("", "pad: 1");
  ConvolutionLayer<float> reference(param);
  DnnlConvolutionLayer layer(param, false);
  Blob<float> bottom(std::vector<int>{2, 16, 6, 6}), top, ref_top;
  FillGaussian(&bottom, 6);
  reference.SetUp({&bottom}, {&ref_top});
  layer.SetUp({&bottom}, {&top});
  ASSERT_TRUE(layer.runs_on_dnnl());
  for (size_t i = 0; i < reference.blobs().size(); ++i) {
    FillGaussian(reference.blobs()[i].get(), 40 + i);
    caffe_copy(reference.blobs()[i]->count(), reference.blobs()[i]->cpu_data(),
               reference.blobs()[i]->mutable_cpu_diff());
    layer.blobs()[i]->CopyFrom(*reference.blobs()[i], true, true);
    layer.blobs()[i]->CopyFrom(*reference.blobs()[i]);
  }
  reference.set_param_propagate_down(0, false);
  layer.set_param_propagate_down(0, false);
  reference.Forward({&bottom}, {&ref_top});
  layer.Forward({&bottom}, {&top});
  FillGaussian(&ref_top, 7);
  caffe_copy(ref_top.count(), ref_top.cpu_data(), ref_top.mutable_cpu_diff());
  caffe_copy(top.count(), ref_top.cpu_diff(), top.mutable_cpu_diff());
  reference.Backward({&ref_top}, {false}, {&bottom});
  layer.Backward({&top}, {false}, {&bottom});
  const Blob<float>& weights = *layer.blobs()[0];
  for (int i = 0; i < weights.count(); ++i) {
    ASSERT_EQ(weights.cpu_diff()[i], weights.cpu_data()[i]) << "weight gradient " << i;
  }
  ExpectClose(*layer.blobs()[1], *reference.blobs()[1], true, "bias diff");
}

// A net reshaped to another batch makes new primitives for the new shape.
TEST(DnnlConvolutionGradientTest, ReshapeToAnotherBatchKeepsResultsRight) {
  Caffe::set_mode(Caffe::CPU);
  const LayerParameter param = ConvParam("", "pad: 1");
  ConvolutionLayer<float> reference(param);
  DnnlConvolutionLayer layer(param, false);
  Blob<float> bottom(std::vector<int>{1, 3, 5, 5}), top, ref_top;
  FillGaussian(&bottom, 4);
  reference.SetUp({&bottom}, {&ref_top});
  layer.SetUp({&bottom}, {&top});
  for (size_t i = 0; i < reference.blobs().size(); ++i) {
    layer.blobs()[i]->CopyFrom(*reference.blobs()[i]);
  }
  for (int batch : {1, 3}) {
    bottom.Reshape(std::vector<int>{batch, 3, 5, 5});
    FillGaussian(&bottom, 5 + batch);
    reference.Reshape({&bottom}, {&ref_top});
    layer.Reshape({&bottom}, {&top});
    reference.Forward({&bottom}, {&ref_top});
    layer.Forward({&bottom}, {&top});
    ExpectClose(top, ref_top, false, "batch " + std::to_string(batch));
  }
}

#else

TEST(DnnlConvolutionTest, NeedsOneDnn) {
  GTEST_SKIP() << "this build has no oneDNN (libdnnl-dev): Convolution runs on Caffe's engine";
}

#endif  // USE_DNNL

}  // namespace caffe
