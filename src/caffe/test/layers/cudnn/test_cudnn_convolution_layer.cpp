// The cuDNN convolution engine (CuDNNConvolutionLayer) against Caffe's CPU engine: each case asks
// for engine CUDNN, which in GPU mode builds CuDNNConvolutionLayer (in builds with cuDNN; Caffe's
// GPU layer otherwise) and in CPU mode Caffe's layer, so ExpectGpuMatchesCpu compares the two.
// The cases cover each parameter that changes cuDNN's setup (groups, dilation, stride, padding,
// bias or none, 1-D / 2-D / 3-D, two bottoms sharing the weights, 4-D where Caffe's kernels take
// over) with shapes that are not multiples of 32, one over many thread blocks. Also: which class
// the creator builds in GPU mode, and where the cuDNN class runs on cuDNN. The finite-difference
// checks of test_convolution_layer.cpp build Caffe's class directly; cuDNN's gradients are checked
// here against the CPU backward pass those tests verify.
#include <string>
#include <vector>

#include "caffe/test/cudnn_test_util.hpp"

namespace caffe {

template <typename Dtype>
class CuDNNConvolutionLayerTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(CuDNNConvolutionLayerTest, TestDtypes);

TYPED_TEST(CuDNNConvolutionLayerTest, StridePad) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CUDNN", "num_output: 5 kernel_size: 3 stride: 2 pad: 1"),
      {{2, 3, 9, 11}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNConvolutionLayerTest, LargerThanManyBlocks) {
  // 16 x 9 = 144 products per output, 2 x 32 x 31 x 29 = 57536 outputs.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CUDNN", "num_output: 32 kernel_size: 3 pad: 1"),
      {{2, 16, 31, 29}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNConvolutionLayerTest, GroupsDilationRectangularKernel) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText(
          "Convolution", "CUDNN",
          "num_output: 9 group: 3 kernel_size: 3 kernel_size: 2 dilation: 2 pad: 2 "
          "stride: 1 stride: 2"),
      {{2, 6, 13, 12}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNConvolutionLayerTest, DepthwiseHeightWidthFormsWithoutBias) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CUDNN",
                           "num_output: 6 group: 6 kernel_h: 5 kernel_w: 3 pad_h: 2 pad_w: 0 "
                           "stride_h: 2 stride_w: 1",
                           /*bias=*/false),
      {{3, 6, 15, 10}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNConvolutionLayerTest, OneByOne) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CUDNN", "num_output: 7 kernel_size: 1"), {{2, 13, 7, 9}},
      GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNConvolutionLayerTest, ThreeD) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CUDNN",
                           "num_output: 4 kernel_size: 3 pad: 1 stride: 1 stride: 2 stride: 2"),
      {{2, 3, 5, 7, 6}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNConvolutionLayerTest, OneD) {
  // One spatial axis: cuDNN sees (N, C, 1, W).
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CUDNN", "num_output: 5 kernel_size: 5 stride: 2 pad: 1"),
      {{3, 4, 37}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNConvolutionLayerTest, TwoBottoms) {
  // Both bottoms share the weights; their gradients accumulate into one weight diff.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CUDNN", "num_output: 4 kernel_size: 3", /*bias=*/true,
                           "bottom: 'x1' bottom: 'x2' top: 'y1' top: 'y2'"),
      {{2, 3, 8, 9}, {2, 3, 8, 9}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNConvolutionLayerTest, FourDFallsBackToCaffe) {
  // Four spatial axes: beyond cuDNN, so Caffe's N-D kernels run.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CUDNN", "num_output: 2 kernel_size: 2"),
      {{1, 2, 3, 4, 3, 4}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNConvolutionLayerTest, GpuModeBuildsCuDNNUnlessCaffeIsAsked) {
  ExpectGpuModeBuildsCuDNNUnlessCaffeIsAsked<TypeParam>("Convolution");
}

#ifdef USE_CUDNN

TYPED_TEST(CuDNNConvolutionLayerTest, RunsOnCuDNNWhereItMatchesCaffe) {
  auto runs = [](const std::string& params, const std::vector<int>& shape) {
    return RunsOnCuDNN<CuDNNConvolutionLayer, TypeParam>(
        ConvolutionLayerText("Convolution", "CUDNN", params), shape);
  };
  EXPECT_TRUE(runs("num_output: 4 kernel_size: 3 group: 2", {2, 4, 9, 8}));
  EXPECT_TRUE(runs("num_output: 4 kernel_size: 3", {2, 4, 5, 6, 7}));
  EXPECT_TRUE(runs("num_output: 4 kernel_size: 3", {2, 4, 9}));
  EXPECT_FALSE(runs("num_output: 2 kernel_size: 2", {1, 2, 3, 4, 3, 4}));
}

#else

TEST(CuDNNConvolutionEngineTest, RunsOnCuDNNWhereItMatchesCaffe) {
  GTEST_SKIP() << "built without cuDNN: engine CUDNN builds Caffe's ConvolutionLayer";
}

#endif  // USE_CUDNN

}  // namespace caffe
