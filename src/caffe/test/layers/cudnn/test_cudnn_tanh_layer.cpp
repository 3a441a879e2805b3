// The cuDNN tanh engine (CuDNNTanHLayer) against Caffe's CPU engine: the case asks for engine
// CUDNN, which in GPU mode builds CuDNNTanHLayer (in builds with cuDNN; Caffe's GPU layer
// otherwise) and in CPU mode Caffe's layer, so ExpectGpuMatchesCpu compares the two on a 6-axis
// blob (cuDNN sees the axes beyond the fourth folded into it). Also which class the creator
// builds in GPU mode. The finite-difference checks of test_tanh_layer.cpp build Caffe's class
// directly; cuDNN's gradients are checked here against the CPU backward pass.
#include <string>

#include "caffe/test/cudnn_test_util.hpp"

namespace caffe {

template <typename Dtype>
class CuDNNTanHLayerTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(CuDNNTanHLayerTest, TestDtypes);

TYPED_TEST(CuDNNTanHLayerTest, MatchesCpuSixAxes) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'tanh' type: 'TanH' bottom: 'x' top: 'y' tanh_param { engine: CUDNN }",
      {{2, 3, 4, 5, 7, 3}}, CuDNNTranscendentalTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNTanHLayerTest, GpuModeBuildsCuDNNUnlessCaffeIsAsked) {
  ExpectGpuModeBuildsCuDNNUnlessCaffeIsAsked<TypeParam>("TanH");
}

#ifdef USE_CUDNN

TYPED_TEST(CuDNNTanHLayerTest, GpuModeBuildsCuDNNTanHLayer) {
  ExpectGpuModeBuildsCuDNNClass<CuDNNTanHLayer, TypeParam>("TanH");
}

#else

TEST(CuDNNTanHEngineTest, GpuModeBuildsCuDNNTanHLayer) {
  GTEST_SKIP() << "built without cuDNN: engine CUDNN builds Caffe's TanHLayer";
}

#endif  // USE_CUDNN

}  // namespace caffe
