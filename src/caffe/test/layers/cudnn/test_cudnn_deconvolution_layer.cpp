// The cuDNN deconvolution engine (CuDNNDeconvolutionLayer) against Caffe's CPU engine: each case
// asks for engine CUDNN, which in GPU mode builds CuDNNDeconvolutionLayer (in builds with cuDNN;
// Caffe's GPU layer otherwise) and in CPU mode Caffe's layer, so ExpectGpuMatchesCpu compares the
// two. The cases cover strides with padding, groups with dilation, and 3-D without bias, on
// shapes that are not multiples of 32. Also: which class the creator builds in GPU mode, and that
// the cuDNN class runs on cuDNN. The finite-difference checks of test_deconvolution_layer.cpp
// build Caffe's class directly; cuDNN's gradients are checked here against the CPU backward pass.
#include <string>
#include <vector>

#include "caffe/test/cudnn_test_util.hpp"

namespace caffe {

template <typename Dtype>
class CuDNNDeconvolutionLayerTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(CuDNNDeconvolutionLayerTest, TestDtypes);

TYPED_TEST(CuDNNDeconvolutionLayerTest, StridePad) {
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>(ConvolutionLayerText("Deconvolution", "CUDNN",
                                                  "num_output: 3 kernel_size: 4 stride: 2 pad: 1"),
                             {{2, 4, 5, 6}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNDeconvolutionLayerTest, GroupsDilation) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Deconvolution", "CUDNN",
                           "num_output: 6 group: 2 kernel_size: 3 dilation: 2 stride: 3"),
      {{2, 4, 7, 5}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNDeconvolutionLayerTest, ThreeDWithoutBias) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Deconvolution", "CUDNN", "num_output: 3 kernel_size: 2 stride: 2",
                           /*bias=*/false),
      {{2, 4, 3, 4, 5}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNDeconvolutionLayerTest, GpuModeBuildsCuDNNUnlessCaffeIsAsked) {
  ExpectGpuModeBuildsCuDNNUnlessCaffeIsAsked<TypeParam>("Deconvolution");
}

#ifdef USE_CUDNN

TYPED_TEST(CuDNNDeconvolutionLayerTest, RunsOnCuDNNWhereItMatchesCaffe) {
  EXPECT_TRUE((RunsOnCuDNN<CuDNNDeconvolutionLayer, TypeParam>(
      ConvolutionLayerText("Deconvolution", "CUDNN", "num_output: 3 kernel_size: 4 stride: 2"),
      {2, 4, 5, 6})));
}

#else

TEST(CuDNNDeconvolutionEngineTest, RunsOnCuDNNWhereItMatchesCaffe) {
  GTEST_SKIP() << "built without cuDNN: engine CUDNN builds Caffe's DeconvolutionLayer";
}

#endif  // USE_CUDNN

}  // namespace caffe
