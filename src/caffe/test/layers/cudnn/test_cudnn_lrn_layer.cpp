// The cuDNN LRN engine (CuDNNLRNLayer) against Caffe's CPU engine: each case asks for engine
// CUDNN, which in GPU mode builds CuDNNLRNLayer for ACROSS_CHANNELS (in builds with cuDNN; Caffe's
// GPU layer otherwise) and in CPU mode Caffe's layer, so ExpectGpuMatchesCpu compares the two.
// The cases cover explicit and default k over several thread blocks, and a window wider than
// cuDNN's, where the layer falls back to Caffe's kernels. Also: which class the creator builds in
// GPU mode (Caffe's for WITHIN_CHANNEL), and where the cuDNN class runs on cuDNN. The
// finite-difference checks of test_lrn_layer.cpp build Caffe's class directly; cuDNN's gradients
// are checked here against the CPU backward pass.
#include <string>
#include <vector>

#include "caffe/test/cudnn_test_util.hpp"

namespace caffe {

namespace {

std::string LrnText(const std::string& params) {
  return "name: 'lrn' type: 'LRN' bottom: 'x' top: 'y' lrn_param { " + params + " engine: CUDNN }";
}

}  // namespace

template <typename Dtype>
class CuDNNLRNLayerTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(CuDNNLRNLayerTest, TestDtypes);

TYPED_TEST(CuDNNLRNLayerTest, AcrossChannels) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(LrnText("local_size: 5 alpha: 0.5 beta: 0.75 k: 2"),
                                             {{2, 7, 5, 6}},
                                             CuDNNTranscendentalTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNLRNLayerTest, AcrossChannelsDefaultsManyBlocks) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(LrnText("local_size: 3 alpha: 0.3 beta: 0.6"),
                                             {{2, 19, 13, 11}},
                                             CuDNNTranscendentalTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNLRNLayerTest, WindowBeyondCuDNNFallsBack) {
  // local_size 17 exceeds cuDNN's 16: Caffe's kernels run.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(LrnText("local_size: 17 alpha: 0.5 beta: 0.75"),
                                             {{2, 20, 3, 5}},
                                             CuDNNTranscendentalTolerance<TypeParam>()));
}

TYPED_TEST(CuDNNLRNLayerTest, GpuModeBuildsCuDNNUnlessCaffeIsAsked) {
  ExpectGpuModeBuildsCuDNNUnlessCaffeIsAsked<TypeParam>("LRN");
}

TYPED_TEST(CuDNNLRNLayerTest, GpuModeKeepsCaffeWithinChannel) {
  // cuDNN's within-channel normalization is not Caffe's WITHIN_CHANNEL.
  ExpectGpuModeKeepsCaffe<TypeParam>(
      "name: 'l' type: 'LRN' lrn_param { norm_region: WITHIN_CHANNEL engine: CUDNN }");
}

#ifdef USE_CUDNN

TYPED_TEST(CuDNNLRNLayerTest, RunsOnCuDNNWhereItMatchesCaffe) {
  EXPECT_TRUE((RunsOnCuDNN<CuDNNLRNLayer, TypeParam>(LrnText("local_size: 5"), {2, 7, 4, 4})));
  EXPECT_FALSE((RunsOnCuDNN<CuDNNLRNLayer, TypeParam>(LrnText("local_size: 17"), {2, 20, 4, 4})));
}

#else

TEST(CuDNNLRNEngineTest, RunsOnCuDNNWhereItMatchesCaffe) {
  GTEST_SKIP() << "built without cuDNN: engine CUDNN builds Caffe's LRNLayer";
}

#endif  // USE_CUDNN

}  // namespace caffe
