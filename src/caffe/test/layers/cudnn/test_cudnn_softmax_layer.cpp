// The cuDNN softmax engine (CuDNNSoftmaxLayer) against Caffe's CPU engine: each case asks for
// engine CUDNN, which in GPU mode builds CuDNNSoftmaxLayer (in builds with cuDNN; Caffe's GPU
// layer otherwise) and in CPU mode Caffe's layer, so the GPU results are compared with the CPU's
// for softmax over every axis (the first, the channels, an inner one, the last over several
// thread blocks) and in place, where the layer falls back to Caffe's kernels. Also which class
// the creator builds in GPU mode. The finite-difference checks of test_softmax_layer.cpp build
// Caffe's class directly; cuDNN's gradients are checked here against the CPU backward pass.
#include <string>

#include "caffe/test/cudnn_test_util.hpp"

namespace caffe {

namespace {

std::string SoftmaxText(int axis) {
  return "name: 'softmax' type: 'Softmax' bottom: 'x' top: 'y' softmax_param { axis: " +
         std::to_string(axis) + " engine: CUDNN }";
}

}  // namespace

template <typename Dtype>
class CuDNNSoftmaxLayerTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(CuDNNSoftmaxLayerTest, TestDtypes);

TYPED_TEST(CuDNNSoftmaxLayerTest, Channels) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(SoftmaxText(1), {{2, 10, 5, 7}},
                                             CuDNNTranscendentalTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNSoftmaxLayerTest, InnerAxis) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(SoftmaxText(2), {{2, 3, 11, 4}},
                                             CuDNNTranscendentalTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNSoftmaxLayerTest, LastAxisManyBlocks) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(SoftmaxText(-1), {{3, 4, 1029}},
                                             CuDNNTranscendentalTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNSoftmaxLayerTest, FirstAxis) {
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>(SoftmaxText(0), {{6, 5}}, CuDNNTranscendentalTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNSoftmaxLayerTest, InPlaceFallsBack) {
  ExpectInPlaceGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'softmax' type: 'Softmax' bottom: 'x' top: 'x' softmax_param { engine: CUDNN }",
      {{4, 9, 3}}, CuDNNTranscendentalTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNSoftmaxLayerTest, GpuModeBuildsCuDNNUnlessCaffeIsAsked) {
  ExpectGpuModeBuildsCuDNNUnlessCaffeIsAsked<TypeParam>("Softmax");
}

#ifdef USE_CUDNN

TYPED_TEST(CuDNNSoftmaxLayerTest, GpuModeBuildsCuDNNSoftmaxLayer) {
  ExpectGpuModeBuildsCuDNNClass<CuDNNSoftmaxLayer, TypeParam>("Softmax");
}

#else

TEST(CuDNNSoftmaxEngineTest, GpuModeBuildsCuDNNSoftmaxLayer) {
  GTEST_SKIP() << "built without cuDNN: engine CUDNN builds Caffe's SoftmaxLayer";
}

#endif  // USE_CUDNN

}  // namespace caffe
