// The cuDNN ReLU engine (CuDNNReLULayer) against Caffe's CPU engine: each case asks for engine
// CUDNN, which in GPU mode builds CuDNNReLULayer (in builds with cuDNN; Caffe's GPU layer
// otherwise) and in CPU mode Caffe's layer, so the GPU results are compared with the CPU's, out
// of place and in place. Also: which class the creator builds in GPU mode (Caffe's for a leaky
// ReLU, which cuDNN lacks). The finite-difference checks of test_relu_layer.cpp build Caffe's
// class directly; cuDNN's gradients are checked here against the CPU backward pass.
#include <string>

#include "caffe/test/cudnn_test_util.hpp"

namespace caffe {

template <typename Dtype>
class CuDNNReLULayerTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(CuDNNReLULayerTest, TestDtypes);

TYPED_TEST(CuDNNReLULayerTest, MatchesCpu) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'relu' type: 'ReLU' bottom: 'x' top: 'y' relu_param { engine: CUDNN }",
      {{2, 3, 17, 19}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNReLULayerTest, InPlace) {
  ExpectInPlaceGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'relu' type: 'ReLU' bottom: 'x' top: 'x' relu_param { engine: CUDNN }",
      {{3, 5, 7, 11}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNReLULayerTest, GpuModeBuildsCuDNNUnlessCaffeIsAsked) {
  ExpectGpuModeBuildsCuDNNUnlessCaffeIsAsked<TypeParam>("ReLU");
}

TYPED_TEST(CuDNNReLULayerTest, GpuModeKeepsCaffeForNegativeSlope) {
  ExpectGpuModeKeepsCaffe<TypeParam>(
      "name: 'r' type: 'ReLU' relu_param { negative_slope: 0.1 engine: CUDNN }");
}

#ifdef USE_CUDNN

TYPED_TEST(CuDNNReLULayerTest, GpuModeBuildsCuDNNReLULayer) {
  ExpectGpuModeBuildsCuDNNClass<CuDNNReLULayer, TypeParam>("ReLU");
}

#else

TEST(CuDNNReLUEngineTest, GpuModeBuildsCuDNNReLULayer) {
  GTEST_SKIP() << "built without cuDNN: engine CUDNN builds Caffe's ReLULayer";
}

#endif  // USE_CUDNN

}  // namespace caffe
