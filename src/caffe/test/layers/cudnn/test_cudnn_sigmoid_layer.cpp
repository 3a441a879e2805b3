// The cuDNN sigmoid engine (CuDNNSigmoidLayer) against Caffe's CPU engine: each case asks for
// engine CUDNN, which in GPU mode builds CuDNNSigmoidLayer (in builds with cuDNN; Caffe's GPU
// layer otherwise) and in CPU mode Caffe's layer, so the GPU results are compared with the CPU's,
// out of place and in place (the latter on a 2-axis blob over several thread blocks). Also which
// class the creator builds in GPU mode. The finite-difference checks of test_sigmoid_layer.cpp
// build Caffe's class directly; cuDNN's gradients are checked here against the CPU backward pass.
#include <string>

#include "caffe/test/cudnn_test_util.hpp"

namespace caffe {

template <typename Dtype>
class CuDNNSigmoidLayerTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(CuDNNSigmoidLayerTest, TestDtypes);

TYPED_TEST(CuDNNSigmoidLayerTest, MatchesCpu) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'sigmoid' type: 'Sigmoid' bottom: 'x' top: 'y' sigmoid_param { engine: CUDNN }",
      {{2, 3, 17, 19}}, CuDNNTranscendentalTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNSigmoidLayerTest, InPlaceTwoAxes) {
  ExpectInPlaceGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'sigmoid' type: 'Sigmoid' bottom: 'x' top: 'x' sigmoid_param { engine: CUDNN }",
      {{3, 1031}}, CuDNNTranscendentalTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNSigmoidLayerTest, GpuModeBuildsCuDNNUnlessCaffeIsAsked) {
  ExpectGpuModeBuildsCuDNNUnlessCaffeIsAsked<TypeParam>("Sigmoid");
}

#ifdef USE_CUDNN

TYPED_TEST(CuDNNSigmoidLayerTest, GpuModeBuildsCuDNNSigmoidLayer) {
  ExpectGpuModeBuildsCuDNNClass<CuDNNSigmoidLayer, TypeParam>("Sigmoid");
}

#else

TEST(CuDNNSigmoidEngineTest, GpuModeBuildsCuDNNSigmoidLayer) {
  GTEST_SKIP() << "built without cuDNN: engine CUDNN builds Caffe's SigmoidLayer";
}

#endif  // USE_CUDNN

}  // namespace caffe
