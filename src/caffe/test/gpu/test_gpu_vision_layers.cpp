// GPU against CPU for the vision layers on Caffe's own kernels: Convolution, Deconvolution (the
// im2col + cuBLAS machinery of BaseConvolutionLayer), Im2col, Pooling, LRN, InnerProduct and
// Embed. Each parameter that changes the code path gets a case (groups, dilation, stride and
// padding, 1x1 kernels, no bias, N-D, the tiled path for huge images, pooling modes with padding
// and global pooling, both LRN regions, transposed InnerProduct); shapes are not multiples of 32
// and most span several thread blocks. STOCHASTIC pooling has no CPU path, so it is checked
// against its definition. Convolution, Deconvolution, Pooling and LRN ask for engine CAFFE so that
// neither oneDNN (CPU) nor cuDNN (GPU, the default there) replaces the code under test.
// Finite-difference gradient checks of these layers already run on the GPU: their tests in
// src/caffe/test/layers/ (and test_base_conv_layer.cpp's tiled-versus-whole checks) are typed
// over TestDtypesAndDevices.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "caffe/layers/base_conv_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"

namespace caffe {

namespace {

// Lowers BaseConvolutionLayer's column budget for one scope, so images are convolved in tiles.
template <typename Dtype>
class ColumnBudget {
 public:
  explicit ColumnBudget(long values)
      : saved_(BaseConvolutionLayer<Dtype>::max_image_column_values()) {
    BaseConvolutionLayer<Dtype>::set_max_image_column_values(values);
  }
  ~ColumnBudget() { BaseConvolutionLayer<Dtype>::set_max_image_column_values(saved_); }

 private:
  long saved_;
};

}  // namespace

template <typename Dtype>
class GpuVisionLayersTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(GpuVisionLayersTest, TestDtypes);

// ---- Convolution ----

TYPED_TEST(GpuVisionLayersTest, ConvolutionStridePad) {
  // Output 2 x 5 x 5 x 6 (300 values); the input 1782 values.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE", "num_output: 5 kernel_size: 3 stride: 2 pad: 1"),
      {{2, 3, 9, 11}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, ConvolutionLargerThanManyBlocks) {
  // 16 x 9 = 144 column rows, 2 x 32 x 31 x 29 = 57536 outputs.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE", "num_output: 32 kernel_size: 3 pad: 1"),
      {{2, 16, 31, 29}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, ConvolutionGroupsDilationRectangularKernel) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText(
          "Convolution", "CAFFE",
          "num_output: 6 group: 2 kernel_size: 3 kernel_size: 2 dilation: 2 pad: 2 "
          "stride: 1 stride: 2"),
      {{2, 4, 13, 12}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, ConvolutionDepthwiseHeightWidthForms) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText(
          "Convolution", "CAFFE",
          "num_output: 6 group: 6 kernel_h: 5 kernel_w: 3 pad_h: 2 pad_w: 0 stride_h: 2 "
          "stride_w: 1"),
      {{3, 6, 15, 10}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, ConvolutionDepthwiseMultiplierDilation) {
  // The depthwise kernels: 2 filters per channel, dilation, padding; 646 output positions per
  // channel, so each weight gradient's block loops over more values than it has threads.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE",
                           "num_output: 16 group: 8 kernel_size: 3 dilation: 2 pad: 2"),
      {{2, 8, 17, 19}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, ConvolutionDepthwiseStrideTwoWithoutBias) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE", "num_output: 5 group: 5 kernel_size: 3 "
                           "stride: 2 pad: 1", /*bias=*/false),
      {{3, 5, 14, 11}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, ConvolutionOneByOneWithoutBias) {
  // A 1x1 stride-1 unpadded kernel multiplies the image itself (no im2col).
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE", "num_output: 16 kernel_size: 1", /*bias=*/false),
      {{3, 8, 7, 9}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, ConvolutionOneByOneStrideTwoGroups) {
  // 1x1 but strided: not the direct path.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE",
                           "num_output: 6 group: 3 kernel_size: 1 stride: 2"),
      {{2, 9, 11, 8}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, Convolution3d) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText(
          "Convolution", "CAFFE",
          "num_output: 4 kernel_size: 3 kernel_size: 2 kernel_size: 3 pad: 1 pad: 0 pad: 1 "
          "stride: 1 stride: 2 stride: 1 dilation: 1 dilation: 1 dilation: 2"),
      {{2, 3, 5, 6, 7}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, Convolution1d) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE", "num_output: 5 kernel_size: 4 stride: 3 pad: 2"),
      {{3, 4, 50}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, ConvolutionForceNdIm2col) {
  // 2-D through the N-D im2col kernels.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText(
          "Convolution", "CAFFE",
          "num_output: 4 kernel_size: 3 stride: 2 pad: 1 dilation: 2 force_nd_im2col: true"),
      {{2, 3, 10, 9}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, ConvolutionNoSpatialAxes) {
  // (N, C) bottoms: an inner product through the 1x1 path.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE", "num_output: 7 kernel_size: 1"), {{5, 12}},
      GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, ConvolutionTwoBottomsShareWeights) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE", "num_output: 3 kernel_size: 3", /*bias=*/true,
                           "bottom: 'a' bottom: 'b' top: 'c' top: 'd'"),
      {{2, 2, 7, 8}, {2, 2, 7, 8}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, ConvolutionPropagateDownFalse) {
  GpuLayerCase<TypeParam> test_case = MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE", "num_output: 4 kernel_size: 3"), {{2, 3, 8, 9}},
      GpuLongSumTolerance<TypeParam>());
  test_case.propagate_down = {false};
  ExpectGpuMatchesCpu(test_case);
}

TYPED_TEST(GpuVisionLayersTest, ConvolutionTiledImages) {
  // 27 column rows x 143 positions per image; a budget of 3 output lines' columns (27 x 13 x 3)
  // makes both paths convolve in tiles of 3 lines, the last one short.
  ColumnBudget<TypeParam> budget(27 * 13 * 3);
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE", "num_output: 5 kernel_size: 3 pad: 1"),
      {{2, 3, 11, 13}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, ConvolutionTiled3dWithGroups) {
  ColumnBudget<TypeParam> budget(200);
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE",
                           "num_output: 4 group: 2 kernel_size: 2 stride: 1 pad: 1"),
      {{2, 4, 4, 5, 6}}, GpuLongSumTolerance<TypeParam>()));
}

// ---- Deconvolution ----

TYPED_TEST(GpuVisionLayersTest, DeconvolutionUpsamplingWithGroups) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Deconvolution", "CAFFE",
                           "num_output: 6 group: 2 kernel_size: 4 stride: 2 pad: 1"),
      {{2, 4, 9, 7}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, DeconvolutionDilatedRectangular) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText(
          "Deconvolution", "CAFFE",
          "num_output: 3 kernel_size: 3 kernel_size: 2 stride: 3 stride: 1 dilation: 2 "
          "pad: 1"),
      {{2, 5, 6, 8}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, DeconvolutionOneByOneWithoutBias) {
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>(ConvolutionLayerText("Deconvolution", "CAFFE",
                                                  "num_output: 10 kernel_size: 1", /*bias=*/false),
                             {{3, 7, 9, 11}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, Deconvolution3d) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Deconvolution", "CAFFE", "num_output: 3 kernel_size: 2 stride: 2"),
      {{2, 4, 3, 4, 5}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, DeconvolutionTiled) {
  // The image side is the top (17 x 19), the output side the bottom (8 x 9): 2 x 3 x 3 = 18
  // column rows, lines of 9 positions; the budget gives tiles of 3, 3 and 2 lines.
  ColumnBudget<TypeParam> budget(18 * 9 * 3);
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Deconvolution", "CAFFE", "num_output: 2 kernel_size: 3 stride: 2"),
      {{2, 3, 8, 9}}, GpuLongSumTolerance<TypeParam>()));
}

// ---- Im2col ----

TYPED_TEST(GpuVisionLayersTest, Im2colStridePadDilation) {
  // Columns overlap (kernel > stride), so backward sums several entries per input.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'im2col' type: 'Im2col' bottom: 'x' top: 'y' convolution_param { kernel_size: 3 "
      "kernel_size: 4 stride: 2 stride: 1 pad: 1 pad: 2 dilation: 2 dilation: 1 }",
      {{2, 3, 13, 11}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, Im2colForceNd) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'im2col' type: 'Im2col' bottom: 'x' top: 'y' convolution_param { kernel_size: 3 "
      "stride: 2 pad: 1 dilation: 2 force_nd_im2col: true }",
      {{2, 3, 13, 11}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, Im2col3d) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'im2col' type: 'Im2col' bottom: 'x' top: 'y' convolution_param { kernel_size: 2 "
      "kernel_size: 3 kernel_size: 2 stride: 1 stride: 2 stride: 2 pad: 1 pad: 0 pad: 1 "
      "dilation: 2 dilation: 1 dilation: 1 }",
      {{2, 2, 6, 7, 5}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, Im2col1dAxis2) {
  // Leading axes before `axis` are images.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'im2col' type: 'Im2col' bottom: 'x' top: 'y' convolution_param { axis: 2 "
      "kernel_size: 5 stride: 2 pad: 2 }",
      {{2, 3, 4, 37}}, GpuDefaultTolerance<TypeParam>()));
}

// ---- Pooling ----

namespace {

std::string PoolText(const std::string& params, const std::string& tops = "top: 'y'") {
  return "name: 'pool' type: 'Pooling' bottom: 'x' " + tops + " pooling_param { " + params +
         " engine: CAFFE }";
}

}  // namespace

TYPED_TEST(GpuVisionLayersTest, MaxPooling) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: MAX kernel_size: 3 stride: 2"),
                                             {{2, 3, 17, 13}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, MaxPoolingPaddedWithMaskTop) {
  // top[1] holds the argmax; it is compared like any top.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      PoolText("pool: MAX kernel_h: 3 kernel_w: 2 stride_h: 2 stride_w: 3 pad_h: 1 pad_w: 1",
               "top: 'y' top: 'mask'"),
      {{2, 5, 19, 23}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, MaxPoolingFloorStrideLargerThanKernel) {
  // Strides beyond the kernel leave inputs no window reads (their gradient is 0).
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>(PoolText("pool: MAX kernel_size: 2 stride: 3 round_mode: FLOOR"),
                             {{2, 3, 17, 14}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, MaxPoolingEmptyWindows) {
  // CEIL rounding with stride 3 > kernel 1 makes a last window that starts past the input: it
  // outputs -FLT_MAX with index -1 on both paths.
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>(PoolText("pool: MAX kernel_size: 1 stride: 3", "top: 'y' top: 'mask'"),
                             {{2, 3, 11, 8}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, AvePoolingPadded) {
  // Windows at the border are clipped to the padded input (padding counts as zeros).
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: AVE kernel_size: 3 stride: 2 pad: 1"),
                                             {{2, 4, 15, 12}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, AvePoolingCeilPastTheEdge) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: AVE kernel_size: 4 stride: 3 pad: 2"),
                                             {{3, 2, 16, 19}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, GlobalPooling) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: AVE global_pooling: true"),
                                             {{3, 7, 13, 11}}, GpuDefaultTolerance<TypeParam>()));
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: MAX global_pooling: true"),
                                             {{3, 7, 13, 11}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, Pooling3dAnd1d) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: MAX kernel_size: 2 stride: 2 pad: 1"),
                                             {{2, 3, 5, 7, 6}}, GpuDefaultTolerance<TypeParam>()));
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: AVE kernel_size: 3 stride: 2"),
                                             {{2, 3, 5, 7, 6}}, GpuDefaultTolerance<TypeParam>()));
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: AVE kernel_size: 5 stride: 2 pad: 2"),
                                             {{3, 4, 45}}, GpuDefaultTolerance<TypeParam>()));
}

// STOCHASTIC has no CPU path: checked against its definition on non-negative inputs (2 x 3 x
// 9 x 8, kernel 3, stride 2: 4 x 4 outputs per plane, the last column's windows cut to 2 wide).
TYPED_TEST(GpuVisionLayersTest, StochasticPoolingTrainPicksAWindowInput) {
  using Dtype = TypeParam;
  const int planes = 6, height = 9, width = 8, kernel = 3, stride = 2, pooled = 4;
  Blob<Dtype> bottom(std::vector<int>{2, 3, height, width}), top;
  FillUniform<Dtype>(&bottom, 17, Dtype(0.1), Dtype(1));
  Blobs<Dtype> bottoms{&bottom}, tops{&top};
  Caffe::set_mode(Caffe::GPU);
  auto layer = LayerRegistry<Dtype>::CreateLayer(
      ParseLayerParam(PoolText("pool: STOCHASTIC kernel_size: 3 stride: 2") + " phase: TRAIN"));
  layer->SetUp(bottoms, tops);
  ASSERT_EQ(top.shape(), (std::vector<int>{2, 3, pooled, pooled}));
  layer->Forward(bottoms, tops);
  caffe_set(top.count(), Dtype(1), top.mutable_cpu_diff());
  layer->Backward(tops, {true}, bottoms);
  Caffe::set_mode(Caffe::CPU);
  const Dtype* x = bottom.cpu_data();
  const Dtype* y = top.cpu_data();
  const Dtype* dx = bottom.cpu_diff();
  for (int p = 0; p < planes; ++p) {
    for (int oh = 0; oh < pooled; ++oh) {
      for (int ow = 0; ow < pooled; ++ow) {
        const Dtype value = y[(p * pooled + oh) * pooled + ow];
        bool in_window = false;  // the output is one of its window's inputs, which got a gradient
        for (int h = oh * stride; h < std::min(oh * stride + kernel, height); ++h) {
          for (int w = ow * stride; w < std::min(ow * stride + kernel, width); ++w) {
            const int i = (p * height + h) * width + w;
            if (x[i] == value && dx[i] >= 1) in_window = true;
          }
        }
        EXPECT_TRUE(in_window) << "output (" << p << ", " << oh << ", " << ow << ") = " << value;
      }
    }
  }
  // Every output's gradient of 1 went to exactly one input.
  double total = 0;
  for (int i = 0; i < bottom.count(); ++i) total += dx[i];
  EXPECT_EQ(total, top.count());
}

TYPED_TEST(GpuVisionLayersTest, StochasticPoolingTestIsTheProbabilityWeightedAverage) {
  using Dtype = TypeParam;
  const int planes = 6, height = 9, width = 8, kernel = 3, stride = 2, pooled = 4;
  Blob<Dtype> bottom(std::vector<int>{2, 3, height, width}), top;
  FillUniform<Dtype>(&bottom, 18, Dtype(0), Dtype(1));
  Blobs<Dtype> bottoms{&bottom}, tops{&top};
  Caffe::set_mode(Caffe::GPU);
  auto layer = LayerRegistry<Dtype>::CreateLayer(
      ParseLayerParam(PoolText("pool: STOCHASTIC kernel_size: 3 stride: 2") + " phase: TEST"));
  layer->SetUp(bottoms, tops);
  layer->Forward(bottoms, tops);
  Caffe::set_mode(Caffe::CPU);
  const Dtype* x = bottom.cpu_data();
  const Dtype* y = top.cpu_data();
  const double tolerance = sizeof(Dtype) == sizeof(float) ? 1e-5 : 1e-12;
  for (int p = 0; p < planes; ++p) {
    for (int oh = 0; oh < pooled; ++oh) {
      for (int ow = 0; ow < pooled; ++ow) {
        double sum = 0, weighted = 0;
        for (int h = oh * stride; h < std::min(oh * stride + kernel, height); ++h) {
          for (int w = ow * stride; w < std::min(ow * stride + kernel, width); ++w) {
            const double value = x[(p * height + h) * width + w];
            sum += value;
            weighted += value * value;
          }
        }
        EXPECT_NEAR(y[(p * pooled + oh) * pooled + ow], weighted / sum, tolerance)
            << "output (" << p << ", " << oh << ", " << ow << ")";
      }
    }
  }
}

// ---- LRN ----

TYPED_TEST(GpuVisionLayersTest, LRNAcrossChannels) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'lrn' type: 'LRN' bottom: 'x' top: 'y' lrn_param { local_size: 5 alpha: 0.5 "
      "beta: 0.75 k: 2 engine: CAFFE }",
      {{2, 7, 13, 11}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, LRNAcrossChannelsGeneralBeta) {
  // Fewer channels than the window; beta outside the sqrt shortcuts uses pow.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'lrn' type: 'LRN' bottom: 'x' top: 'y' lrn_param { local_size: 7 alpha: 2 "
      "beta: 0.6 k: 1.5 engine: CAFFE }",
      {{3, 3, 17, 9}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, LRNWithinChannel) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'lrn' type: 'LRN' bottom: 'x' top: 'y' lrn_param { local_size: 3 alpha: 0.8 "
      "beta: 0.75 norm_region: WITHIN_CHANNEL engine: CAFFE }",
      {{2, 3, 19, 17}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, LRNWithinChannelWindowLargerThanImage) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'lrn' type: 'LRN' bottom: 'x' top: 'y' lrn_param { local_size: 7 alpha: 1.5 "
      "beta: 0.5 norm_region: WITHIN_CHANNEL engine: CAFFE }",
      {{3, 4, 5, 6}}, GpuDefaultTolerance<TypeParam>()));
}

// ---- InnerProduct ----

namespace {

std::string InnerProductText(const std::string& params, bool bias = true) {
  return "name: 'ip' type: 'InnerProduct' bottom: 'x' top: 'y' inner_product_param { " + params +
         " weight_filler { type: 'gaussian' std: 0.3 }" +
         (bias ? " bias_filler { type: 'gaussian' } }" : " bias_term: false }");
}

}  // namespace

TYPED_TEST(GpuVisionLayersTest, InnerProduct) {
  // K = 5 x 7 x 11 = 385 inputs, N = 19 outputs.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(InnerProductText("num_output: 19"), {{3, 5, 7, 11}},
                                             GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, InnerProductTransposed) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(InnerProductText("num_output: 23 transpose: true"),
                                             {{4, 3, 13}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, InnerProductWithoutBiasAxis2) {
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>(InnerProductText("num_output: 9 axis: 2", /*bias=*/false),
                             {{2, 6, 5, 17}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(GpuVisionLayersTest, InnerProductLargeBatch) {
  // M = 130 examples: the bias gradient sums over all of them.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(InnerProductText("num_output: 100 transpose: true"),
                                             {{130, 300}}, GpuLongSumTolerance<TypeParam>()));
}

// ---- Embed ----

namespace {

// Integer indices in [0, input_dim), with repeats (several indices update one table row).
template <typename Dtype>
std::function<void(const Blobs<Dtype>&)> IndexFill(int input_dim) {
  return [input_dim](const Blobs<Dtype>& bottoms) {
    Dtype* data = bottoms[0]->mutable_cpu_data();
    for (int i = 0; i < bottoms[0]->count(); ++i) {
      data[i] = static_cast<Dtype>((i * 7 + 3) % input_dim);
    }
  };
}

std::string EmbedText(const std::string& params) {
  return "name: 'embed' type: 'Embed' bottom: 'x' top: 'y' embed_param { " + params +
         " weight_filler { type: 'gaussian' } }";
}

}  // namespace

TYPED_TEST(GpuVisionLayersTest, Embed) {
  // 28 indices into 10 rows of 37: 1036 top values.
  GpuLayerCase<TypeParam> test_case = MakeGpuCase<TypeParam>(
      EmbedText("num_output: 37 input_dim: 10 bias_filler { type: 'gaussian' }"), {{4, 7}},
      GpuDefaultTolerance<TypeParam>());
  test_case.fill = IndexFill<TypeParam>(10);
  test_case.propagate_down = {false};
  ExpectGpuMatchesCpu(test_case);
}

TYPED_TEST(GpuVisionLayersTest, EmbedWithoutBiasManyRepeats) {
  // 600 indices into 3 rows: about 200 atomic additions per weight diff value.
  GpuLayerCase<TypeParam> test_case =
      MakeGpuCase<TypeParam>(EmbedText("num_output: 5 input_dim: 3 bias_term: false"), {{600}},
                             GpuLongSumTolerance<TypeParam>());
  test_case.fill = IndexFill<TypeParam>(3);
  test_case.propagate_down = {false};
  ExpectGpuMatchesCpu(test_case);
}

TYPED_TEST(GpuVisionLayersTest, EmbedRejectsBadIndices) {
  using Dtype = TypeParam;
  for (const Dtype bad : {Dtype(-1), Dtype(10), Dtype(2.5)}) {
    Blob<Dtype> bottom(std::vector<int>{3, 4}), top;
    Dtype* data = bottom.mutable_cpu_data();
    for (int i = 0; i < bottom.count(); ++i) data[i] = static_cast<Dtype>(i % 10);
    data[5] = bad;
    Blobs<Dtype> bottoms{&bottom}, tops{&top};
    Caffe::set_mode(Caffe::GPU);
    auto layer = LayerRegistry<Dtype>::CreateLayer(
        ParseLayerParam(EmbedText("num_output: 4 input_dim: 10")));
    layer->SetUp(bottoms, tops);
    try {
      layer->Forward(bottoms, tops);
      ADD_FAILURE() << "index " << bad << " was accepted";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("at position 5"), std::string::npos) << error.what();
    }
    Caffe::set_mode(Caffe::CPU);
  }
}

}  // namespace caffe
