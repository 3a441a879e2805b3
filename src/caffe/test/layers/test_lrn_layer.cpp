// LRNLayer: both normalization regions against their definitions (including BVLC's quirk that
// WITHIN_CHANNEL ignores k and divides by local_size^2), every exponent path (0.75, 0.5, 1 and
// the general pow), finite-difference gradients, and bad parameters or inputs.
// LRNLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
// Legend: N images, C channels, H/W height/width, n local_size.
#include <cmath>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/lrn_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

LayerParameter LrnParam(const std::string& lrn_param) {
  return ParseLayerParam("name: 'norm' type: 'LRN' lrn_param { " + lrn_param + " }");
}

// The definitions, computed in double.
template <typename Dtype>
std::vector<double> ReferenceLrn(const Blob<Dtype>& bottom, bool across, int size, double alpha,
                                 double beta, double k) {
  const int num = bottom.num(), channels = bottom.channels();
  const int height = bottom.height(), width = bottom.width();
  const int pad = (size - 1) / 2;
  std::vector<double> top(bottom.count());
  for (int n = 0; n < num; ++n) {
    for (int c = 0; c < channels; ++c) {
      for (int h = 0; h < height; ++h) {
        for (int w = 0; w < width; ++w) {
          double sum = 0;
          if (across) {
            for (int cc = std::max(c - pad, 0); cc <= std::min(c + pad, channels - 1); ++cc) {
              sum += std::pow(bottom.data_at(n, cc, h, w), 2);
            }
          } else {
            for (int hh = std::max(h - pad, 0); hh <= std::min(h + pad, height - 1); ++hh) {
              for (int ww = std::max(w - pad, 0); ww <= std::min(w + pad, width - 1); ++ww) {
                sum += std::pow(bottom.data_at(n, c, hh, ww), 2);
              }
            }
          }
          const double scale = across ? k + alpha / size * sum : 1 + alpha / (size * size) * sum;
          top[bottom.offset(n, c, h, w)] = bottom.data_at(n, c, h, w) * std::pow(scale, -beta);
        }
      }
    }
  }
  return top;
}

}  // namespace

template <typename TypeParam>
class LRNLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  LRNLayerTest() : bottom_(std::vector<int>{2, 7, 3, 3}) { FillGaussian(&bottom_, 1701); }

  void CheckForward(const std::string& param, bool across, int size, double alpha, double beta,
                    double k) {
    LRNLayer<Dtype> layer(LrnParam(param));
    layer.SetUp(bottom_vec_, top_vec_);
    layer.Forward(bottom_vec_, top_vec_);
    const std::vector<double> expected = ReferenceLrn(bottom_, across, size, alpha, beta, k);
    for (int i = 0; i < top_.count(); ++i) {
      ASSERT_NEAR(top_.cpu_data()[i], expected[i], 1e-5 * (1 + std::abs(expected[i])))
          << param << ": " << i;
    }
  }

  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(LRNLayerTest, TestDtypesAndDevices);

TYPED_TEST(LRNLayerTest, TopHasBottomShape) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* region : {"ACROSS_CHANNELS", "WITHIN_CHANNEL"}) {
    LRNLayer<Dtype> layer(LrnParam(std::string("norm_region: ") + region));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    EXPECT_EQ(this->top_.shape(), this->bottom_.shape()) << region;
  }
}

TYPED_TEST(LRNLayerTest, AcrossChannelsHandComputed) {
  using Dtype = typename TypeParam::Dtype;
  // Channels 1, 2, 3; n = 3, alpha / n = 1, beta 1, k 1: scale = 1 + x[c-1]^2 + x[c]^2 +
  // x[c+1]^2 = 6, 15, 14.
  Blob<Dtype> bottom(std::vector<int>{1, 3, 1, 1});
  for (int c = 0; c < 3; ++c) bottom.mutable_cpu_data()[c] = c + 1;
  Blobs<Dtype> bottoms{&bottom};
  LRNLayer<Dtype> layer(LrnParam("local_size: 3 alpha: 3 beta: 1 k: 1"));
  layer.SetUp(bottoms, this->top_vec_);
  layer.Forward(bottoms, this->top_vec_);
  EXPECT_NEAR(this->top_.cpu_data()[0], 1.0 / 6, 1e-6);
  EXPECT_NEAR(this->top_.cpu_data()[1], 2.0 / 15, 1e-6);
  EXPECT_NEAR(this->top_.cpu_data()[2], 3.0 / 14, 1e-6);
}

TYPED_TEST(LRNLayerTest, AcrossChannelsMatchesDefinition) {
  this->CheckForward("", true, 5, 1, 0.75, 1);
  this->CheckForward("local_size: 3 alpha: 0.5 beta: 0.6 k: 2", true, 3, 0.5, 0.6, 2);
  this->CheckForward("local_size: 7 alpha: 2 beta: 0.5 k: 0.5", true, 7, 2, 0.5, 0.5);
  this->CheckForward("local_size: 1 alpha: 1 beta: 1 k: 3", true, 1, 1, 1, 3);
  this->CheckForward("local_size: 9 alpha: 0.1", true, 9, 0.1, 0.75, 1);  // wider than C
}

TYPED_TEST(LRNLayerTest, WithinChannelMatchesDefinitionAndIgnoresK) {
  this->CheckForward("norm_region: WITHIN_CHANNEL local_size: 3 alpha: 0.5", false, 3, 0.5, 0.75,
                     1);
  this->CheckForward("norm_region: WITHIN_CHANNEL local_size: 3 alpha: 2 beta: 0.6 k: 5", false, 3,
                     2, 0.6, 1);
  this->bottom_.Reshape({1, 2, 6, 4});
  FillGaussian(&this->bottom_, 3);
  this->CheckForward("norm_region: WITHIN_CHANNEL local_size: 5 alpha: 1.5 beta: 0.5", false, 5,
                     1.5, 0.5, 1);
  this->CheckForward("norm_region: WITHIN_CHANNEL local_size: 9", false, 9, 1, 0.75, 1);
}

TYPED_TEST(LRNLayerTest, AcrossChannelsGradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* param : {"local_size: 3", "local_size: 5 alpha: 2 beta: 0.6 k: 1.5"}) {
    LRNLayer<Dtype> layer(LrnParam(param));
    GradientChecker<Dtype> checker(1e-2, 1e-2);
    checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_);
  }
}

TYPED_TEST(LRNLayerTest, WithinChannelGradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  this->bottom_.Reshape({1, 2, 4, 3});
  FillGaussian(&this->bottom_, 4);
  for (const char* param : {"local_size: 3 alpha: 2", "local_size: 5 alpha: 1 beta: 0.6"}) {
    LRNLayer<Dtype> layer(LrnParam(std::string("norm_region: WITHIN_CHANNEL ") + param));
    GradientChecker<Dtype> checker(1e-2, 1e-2);
    checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_);
  }
}

TYPED_TEST(LRNLayerTest, RejectsEvenSizesAndNonImageBottoms) {
  using Dtype = typename TypeParam::Dtype;
  LRNLayer<Dtype> even(LrnParam("local_size: 4"));
  EXPECT_THROW(even.SetUp(this->bottom_vec_, this->top_vec_), Error);
  Blob<Dtype> flat(std::vector<int>{2, 7, 9});
  Blobs<Dtype> flats{&flat};
  LRNLayer<Dtype> layer(LrnParam("local_size: 3"));
  EXPECT_THROW(layer.SetUp(flats, this->top_vec_), Error);
}

// Forward overwrites what backward needs (the input), so in place is refused at setup.
TYPED_TEST(LRNLayerTest, RejectsInPlace) {
  using Dtype = typename TypeParam::Dtype;
  LRNLayer<Dtype> layer(LrnParam("local_size: 3"));
  try {
    layer.SetUp(this->bottom_vec_, this->bottom_vec_);
    FAIL() << "in-place LRN was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("LRN cannot run in place"), std::string::npos)
        << error.what();
  }
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----
// The cases name engine CAFFE, so that neither DNNL (CPU) nor cuDNN (GPU, the default there)
// replaces the code under test.

template <typename Dtype>
class LRNLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(LRNLayerGpuTest, TestDtypes);

TYPED_TEST(LRNLayerGpuTest, LRNAcrossChannels) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'lrn' type: 'LRN' bottom: 'x' top: 'y' lrn_param { local_size: 5 alpha: 0.5 "
      "beta: 0.75 k: 2 engine: CAFFE }",
      {{2, 7, 13, 11}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(LRNLayerGpuTest, LRNAcrossChannelsGeneralBeta) {
  // Fewer channels than the window; beta outside the sqrt shortcuts uses pow.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'lrn' type: 'LRN' bottom: 'x' top: 'y' lrn_param { local_size: 7 alpha: 2 "
      "beta: 0.6 k: 1.5 engine: CAFFE }",
      {{3, 3, 17, 9}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(LRNLayerGpuTest, LRNWithinChannel) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'lrn' type: 'LRN' bottom: 'x' top: 'y' lrn_param { local_size: 3 alpha: 0.8 "
      "beta: 0.75 norm_region: WITHIN_CHANNEL engine: CAFFE }",
      {{2, 3, 19, 17}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(LRNLayerGpuTest, LRNWithinChannelWindowLargerThanImage) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'lrn' type: 'LRN' bottom: 'x' top: 'y' lrn_param { local_size: 7 alpha: 1.5 "
      "beta: 0.5 norm_region: WITHIN_CHANNEL engine: CAFFE }",
      {{3, 4, 5, 6}}, GpuDefaultTolerance<TypeParam>()));
}

}  // namespace caffe
