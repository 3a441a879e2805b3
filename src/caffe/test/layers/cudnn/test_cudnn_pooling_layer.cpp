// The cuDNN pooling engine (CuDNNPoolingLayer) against Caffe's CPU engine: each case asks for
// engine CUDNN, which in GPU mode builds CuDNNPoolingLayer (in builds with cuDNN; Caffe's GPU
// layer otherwise) and in CPU mode Caffe's layer, so ExpectGpuMatchesCpu compares the two. The
// cases cover MAX and AVE pooling on shapes where cuDNN's windows are Caffe's (padding, FLOOR
// rounding, global, 1-D and 3-D) and on shapes where they are not (CEIL rounding that adds an
// output, clipped average windows), where the layer falls back to Caffe's kernels. Also: which
// class the creator builds in GPU mode (Caffe's for a mask top and for STOCHASTIC), and where the
// cuDNN class runs on cuDNN. The finite-difference checks of test_pooling_layer.cpp build Caffe's
// class directly; cuDNN's gradients are checked here against the CPU backward pass.
#include <string>
#include <vector>

#include "caffe/test/cudnn_test_util.hpp"

namespace caffe {

namespace {

std::string PoolText(const std::string& params) {
  return "name: 'pool' type: 'Pooling' bottom: 'x' top: 'y' pooling_param { " + params +
         " engine: CUDNN }";
}

}  // namespace

template <typename Dtype>
class CuDNNPoolingLayerTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(CuDNNPoolingLayerTest, TestDtypes);

TYPED_TEST(CuDNNPoolingLayerTest, MaxNonOverlapping) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: MAX kernel_size: 2 stride: 2"),
                                             {{4, 16, 32, 34}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNPoolingLayerTest, MaxPaddedSizesAgree) {
  // (9 + 2 - 3) / 2 + 1 = 5 with either rounding: cuDNN runs.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: MAX kernel_size: 3 stride: 2 pad: 1"),
                                             {{2, 3, 9, 9}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNPoolingLayerTest, MaxCeilRoundingFallsBack) {
  // 8 x 8, kernel 3, stride 2: CEIL gives 4, cuDNN's floor 3, so Caffe's kernels run.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: MAX kernel_size: 3 stride: 2"),
                                             {{2, 3, 8, 8}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNPoolingLayerTest, MaxFloorRoundingRectangular) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      PoolText("pool: MAX kernel_h: 3 kernel_w: 2 stride_h: 2 stride_w: 1 pad_h: 1 pad_w: 0 "
               "round_mode: FLOOR"),
      {{2, 5, 10, 11}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNPoolingLayerTest, AvePaddedSizesAgree) {
  // (11 + 2 - 3) / 2 + 1 = 6 either way; every window lies in the padded input, divisor 9.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: AVE kernel_size: 3 stride: 2 pad: 1"),
                                             {{2, 3, 11, 11}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNPoolingLayerTest, AveClippedWindowsFallBack) {
  // 10 x 10: CEIL gives 6 outputs whose last window is clipped; cuDNN's 5 differ: Caffe's runs.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: AVE kernel_size: 3 stride: 2 pad: 1"),
                                             {{2, 3, 10, 10}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNPoolingLayerTest, GlobalAve) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: AVE global_pooling: true"),
                                             {{2, 5, 7, 9}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNPoolingLayerTest, MaxThreeD) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: MAX kernel_size: 2 stride: 2"),
                                             {{2, 2, 6, 8, 10}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNPoolingLayerTest, AveOneD) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(PoolText("pool: AVE kernel_size: 4 stride: 4"),
                                             {{3, 4, 20}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNPoolingLayerTest, GpuModeBuildsCuDNNUnlessCaffeIsAsked) {
  ExpectGpuModeBuildsCuDNNUnlessCaffeIsAsked<TypeParam>("Pooling");
}

TYPED_TEST(CuDNNPoolingLayerTest, GpuModeKeepsCaffeWhereCuDNNCannotMatch) {
  // cuDNN gives no argmax top, and has no STOCHASTIC pooling.
  ExpectGpuModeKeepsCaffe<TypeParam>(
      "name: 'p' type: 'Pooling' top: 'y' top: 'mask' "
      "pooling_param { pool: MAX kernel_size: 2 engine: CUDNN }");
  ExpectGpuModeKeepsCaffe<TypeParam>(
      "name: 'p' type: 'Pooling' pooling_param { pool: STOCHASTIC kernel_size: 2 "
      "engine: CUDNN }");
}

#ifdef USE_CUDNN

TYPED_TEST(CuDNNPoolingLayerTest, RunsOnCuDNNWhereItMatchesCaffe) {
  auto runs = [](const std::string& params, const std::vector<int>& shape) {
    return RunsOnCuDNN<CuDNNPoolingLayer, TypeParam>(PoolText(params), shape);
  };
  EXPECT_TRUE(runs("pool: MAX kernel_size: 3 stride: 2 pad: 1", {2, 3, 9, 9}));
  EXPECT_TRUE(runs("pool: AVE global_pooling: true", {2, 3, 9, 7}));
  EXPECT_FALSE(runs("pool: MAX kernel_size: 3 stride: 2", {2, 3, 8, 8}));
  EXPECT_FALSE(runs("pool: AVE kernel_size: 3 stride: 2 pad: 1", {2, 3, 10, 10}));
}

#else

TEST(CuDNNPoolingEngineTest, RunsOnCuDNNWhereItMatchesCaffe) {
  GTEST_SKIP() << "built without cuDNN: engine CUDNN builds Caffe's PoolingLayer";
}

#endif  // USE_CUDNN

}  // namespace caffe
