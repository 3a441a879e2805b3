// GPU against CPU for the element-wise layers: the neuron layers (ReLU, Sigmoid, TanH, AbsVal,
// BNLL, ELU, Exp, Log, Power, PReLU, Swish, Threshold, Clip, Dropout) and Bias, Scale, Eltwise.
// Each parameter that changes the code path gets a case; shapes are not multiples of 32 and some
// span many thread blocks. In-place runs (top[0] is bottom[0]) get their own check,
// ExpectInPlaceGpuMatchesCpu, since ExpectGpuMatchesCpu always passes distinct blobs. Dropout's
// TRAIN phase draws a different mask on the GPU (another generator), so it is checked for its
// statistics and for using one mask both ways. Finite-difference gradient checks of these layers
// already run on the GPU: their tests in src/caffe/test/layers/ are typed over
// TestDtypesAndDevices.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "caffe/layers/dropout_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"

namespace caffe {

namespace {

// 1326 values: three 512-thread blocks, the last one partial.
const std::vector<int> kShape = {2, 3, 17, 13};
// 22755 values: 45 blocks.
const std::vector<int> kLargeShape = {3, 5, 41, 37};

// Fills every bottom with U(low, high), a different seed per bottom.
template <typename Dtype>
std::function<void(const Blobs<Dtype>&)> UniformFill(double low, double high) {
  return [low, high](const Blobs<Dtype>& bottoms) {
    for (size_t i = 0; i < bottoms.size(); ++i) {
      FillUniform<Dtype>(bottoms[i], 3000 + i, Dtype(low), Dtype(high));
    }
  };
}

}  // namespace

template <typename Dtype>
class GpuNeuronLayersTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(GpuNeuronLayersTest, TestDtypes);

// ---- ReLU, Sigmoid, TanH, AbsVal, BNLL, ELU, Swish, Clip, Threshold ----

// ReLU, Sigmoid and TanH name engine CAFFE: in GPU mode the default engine may be cuDNN's, which
// has its own tests; these check ReLULayer's, SigmoidLayer's and TanHLayer's kernels.
const char kReLU[] = "name: 'relu' type: 'ReLU' relu_param { engine: CAFFE } ";
const char kLeakyReLU[] =
    "name: 'leaky' type: 'ReLU' relu_param { engine: CAFFE negative_slope: 0.1 } ";
const char kSigmoid[] = "name: 'sigmoid' type: 'Sigmoid' sigmoid_param { engine: CAFFE } ";
const char kTanH[] = "name: 'tanh' type: 'TanH' tanh_param { engine: CAFFE } ";
const char kOutOfPlace[] = "bottom: 'x' top: 'y'";
const char kInPlace[] = "bottom: 'x' top: 'x'";

TYPED_TEST(GpuNeuronLayersTest, ReLU) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(std::string(kReLU) + kOutOfPlace, {kShape}));
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(std::string(kReLU) + kOutOfPlace, {kLargeShape}));
}

TYPED_TEST(GpuNeuronLayersTest, LeakyReLU) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(std::string(kLeakyReLU) + kOutOfPlace, {kShape}));
}

TYPED_TEST(GpuNeuronLayersTest, ReLUInPlace) {
  ExpectInPlaceGpuMatchesCpu(MakeGpuCase<TypeParam>(std::string(kReLU) + kInPlace, {kShape}));
  ExpectInPlaceGpuMatchesCpu(MakeGpuCase<TypeParam>(std::string(kLeakyReLU) + kInPlace, {kShape}));
}

TYPED_TEST(GpuNeuronLayersTest, Sigmoid) {
  // U(-20, 20) reaches the saturated tails.
  GpuLayerCase<TypeParam> wide =
      MakeGpuCase<TypeParam>(std::string(kSigmoid) + kOutOfPlace, {kShape});
  wide.fill = UniformFill<TypeParam>(-20, 20);
  ExpectGpuMatchesCpu(wide);
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(std::string(kSigmoid) + kOutOfPlace, {kLargeShape}));
  ExpectInPlaceGpuMatchesCpu(MakeGpuCase<TypeParam>(std::string(kSigmoid) + kInPlace, {kShape}));
}

TYPED_TEST(GpuNeuronLayersTest, TanH) {
  GpuLayerCase<TypeParam> wide = MakeGpuCase<TypeParam>(std::string(kTanH) + kOutOfPlace, {kShape});
  wide.fill = UniformFill<TypeParam>(-10, 10);
  ExpectGpuMatchesCpu(wide);
  ExpectInPlaceGpuMatchesCpu(MakeGpuCase<TypeParam>(std::string(kTanH) + kInPlace, {kShape}));
}

TYPED_TEST(GpuNeuronLayersTest, AbsVal) {
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>("name: 'abs' type: 'AbsVal' bottom: 'x' top: 'y'", {kShape}));
  // Zeros take no gradient, on both paths.
  GpuLayerCase<TypeParam> with_zeros =
      MakeGpuCase<TypeParam>("name: 'abs' type: 'AbsVal' bottom: 'x' top: 'y'", {{7, 13}});
  with_zeros.fill = [](const Blobs<TypeParam>& bottoms) {
    FillGaussian(bottoms[0], 5);
    for (int i = 0; i < bottoms[0]->count(); i += 3) bottoms[0]->mutable_cpu_data()[i] = 0;
  };
  ExpectGpuMatchesCpu(with_zeros);
}

TYPED_TEST(GpuNeuronLayersTest, BNLL) {
  // U(-60, 60) crosses both the x > 0 form and the gradient's threshold of 50.
  GpuLayerCase<TypeParam> test_case =
      MakeGpuCase<TypeParam>("name: 'bnll' type: 'BNLL' bottom: 'x' top: 'y'", {kShape});
  test_case.fill = UniformFill<TypeParam>(-60, 60);
  ExpectGpuMatchesCpu(test_case);
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>("name: 'bnll' type: 'BNLL' bottom: 'x' top: 'y'", {kLargeShape}));
}

TYPED_TEST(GpuNeuronLayersTest, ELU) {
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>("name: 'elu' type: 'ELU' bottom: 'x' top: 'y'", {kShape}));
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'elu' type: 'ELU' elu_param { alpha: 0.4 } bottom: 'x' top: 'y'", {kLargeShape}));
}

TYPED_TEST(GpuNeuronLayersTest, Swish) {
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>("name: 'swish' type: 'Swish' bottom: 'x' top: 'y'", {kShape}));
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'swish' type: 'Swish' swish_param { beta: 1.5 } bottom: 'x' top: 'y'", {kLargeShape}));
  ExpectInPlaceGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'swish' type: 'Swish' swish_param { beta: 0.7 } bottom: 'x' top: 'x'", {kShape}));
}

TYPED_TEST(GpuNeuronLayersTest, Clip) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'clip' type: 'Clip' clip_param { min: -0.5 max: 0.8 } bottom: 'x' top: 'y'",
      {kShape}));
  // Values on the bounds pass the gradient.
  GpuLayerCase<TypeParam> on_bounds = MakeGpuCase<TypeParam>(
      "name: 'clip' type: 'Clip' clip_param { min: -1 max: 1 } bottom: 'x' top: 'y'", {{5, 41}});
  on_bounds.fill = [](const Blobs<TypeParam>& bottoms) {
    FillUniform<TypeParam>(bottoms[0], 6, -3, 3);
    TypeParam* data = bottoms[0]->mutable_cpu_data();
    for (int i = 0; i < bottoms[0]->count(); i += 4) data[i] = std::round(data[i]);
  };
  ExpectGpuMatchesCpu(on_bounds);
}

TYPED_TEST(GpuNeuronLayersTest, Threshold) {
  // No backward: the layer has none.
  GpuLayerCase<TypeParam> test_case = MakeGpuCase<TypeParam>(
      "name: 'step' type: 'Threshold' threshold_param { threshold: 0.3 } bottom: 'x' top: 'y'",
      {kShape});
  test_case.backward = false;
  ExpectGpuMatchesCpu(test_case);
  GpuLayerCase<TypeParam> in_place =
      MakeGpuCase<TypeParam>("name: 'step' type: 'Threshold' bottom: 'x' top: 'x'", {kLargeShape});
  in_place.backward = false;
  ExpectInPlaceGpuMatchesCpu(in_place);
}

// ---- Exp, Log, Power ----

TYPED_TEST(GpuNeuronLayersTest, Exp) {
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>("name: 'exp' type: 'Exp' bottom: 'x' top: 'y'", {kShape}));
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'exp2' type: 'Exp' exp_param { base: 2 scale: 0.5 shift: 1 } bottom: 'x' top: 'y'",
      {kLargeShape}));
  ExpectInPlaceGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'exp' type: 'Exp' exp_param { scale: -0.7 shift: 0.2 } bottom: 'x' top: 'x'",
      {kShape}));
}

TYPED_TEST(GpuNeuronLayersTest, Log) {
  GpuLayerCase<TypeParam> natural =
      MakeGpuCase<TypeParam>("name: 'log' type: 'Log' bottom: 'x' top: 'y'", {kShape});
  natural.fill = UniformFill<TypeParam>(0.2, 5);
  ExpectGpuMatchesCpu(natural);
  GpuLayerCase<TypeParam> affine = MakeGpuCase<TypeParam>(
      "name: 'log10' type: 'Log' log_param { base: 10 scale: 2 shift: 0.5 } bottom: 'x' top: 'y'",
      {kLargeShape});
  affine.fill = UniformFill<TypeParam>(0.1, 4);
  ExpectGpuMatchesCpu(affine);
}

TYPED_TEST(GpuNeuronLayersTest, Power) {
  // Each of these takes a different branch of forward or backward.
  const char* const kParams[] = {
      "power: 2 scale: 0.8 shift: 0.3",  // square, with shift
      "power: 2",                        // square, no shift
      "power: 0.37",                     // shift 0: y / x * power
      "power: 3 scale: 0.5 shift: 1.2",  // the general form
      "power: 1 scale: -2 shift: 0.5",   // linear
      "power: 0 scale: 3",               // constant 1
      "power: 2 scale: 0 shift: 3",      // constant shift ^ power
  };
  for (const char* params : kParams) {
    GpuLayerCase<TypeParam> test_case =
        MakeGpuCase<TypeParam>(std::string("name: 'power' type: 'Power' power_param { ") + params +
                                   " } bottom: 'x' top: 'y'",
                               {kShape});
    // Positive inputs keep fractional powers real.
    test_case.fill = UniformFill<TypeParam>(0.3, 2.5);
    SCOPED_TRACE(params);
    ExpectGpuMatchesCpu(test_case);
  }
}

// ---- PReLU ----

TYPED_TEST(GpuNeuronLayersTest, PReLU) {
  const std::string random_slopes = "filler { type: 'uniform' min: -0.6 max: 0.6 }";
  GpuLayerCase<TypeParam> per_channel = MakeGpuCase<TypeParam>(
      "name: 'prelu' type: 'PReLU' prelu_param { " + random_slopes + " } bottom: 'x' top: 'y'",
      {kShape}, GpuSumTolerance<TypeParam>());
  ExpectGpuMatchesCpu(per_channel);
  per_channel.bottom_shapes = {kLargeShape};
  ExpectGpuMatchesCpu(per_channel);
  // Two axes: one value per channel (S = 1).
  per_channel.bottom_shapes = {{37, 11}};
  ExpectGpuMatchesCpu(per_channel);
  GpuLayerCase<TypeParam> shared =
      MakeGpuCase<TypeParam>("name: 'prelu' type: 'PReLU' prelu_param { channel_shared: true " +
                                 random_slopes + " } bottom: 'x' top: 'y'",
                             {kLargeShape}, GpuSumTolerance<TypeParam>());
  ExpectGpuMatchesCpu(shared);
  // The default slopes (a constant 0.25).
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>("name: 'prelu' type: 'PReLU' bottom: 'x' top: 'y'", {{2, 5, 7}}));
}

TYPED_TEST(GpuNeuronLayersTest, PReLUOnlyParamGradient) {
  GpuLayerCase<TypeParam> test_case = MakeGpuCase<TypeParam>(
      "name: 'prelu' type: 'PReLU' prelu_param { filler { type: 'gaussian' } } "
      "bottom: 'x' top: 'y'",
      {kShape});
  test_case.propagate_down = {false};
  test_case.tolerance = GpuSumTolerance<TypeParam>();
  ExpectGpuMatchesCpu(test_case);
}

TYPED_TEST(GpuNeuronLayersTest, PReLUInPlace) {
  GpuLayerCase<TypeParam> per_channel = MakeGpuCase<TypeParam>(
      "name: 'prelu' type: 'PReLU' prelu_param { filler { type: 'gaussian' } } "
      "bottom: 'x' top: 'x'",
      {kShape}, GpuSumTolerance<TypeParam>());
  ExpectInPlaceGpuMatchesCpu(per_channel);
  GpuLayerCase<TypeParam> shared = MakeGpuCase<TypeParam>(
      "name: 'prelu' type: 'PReLU' prelu_param { channel_shared: true filler { value: -0.3 } } "
      "bottom: 'x' top: 'x'",
      {kShape}, GpuSumTolerance<TypeParam>());
  ExpectInPlaceGpuMatchesCpu(shared);
}

// ---- Dropout ----

TYPED_TEST(GpuNeuronLayersTest, DropoutTestPhaseIsTheIdentity) {
  const char* const kLayer =
      "name: 'drop' type: 'Dropout' phase: TEST dropout_param { dropout_ratio: 0.3 } ";
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>(std::string(kLayer) + "bottom: 'x' top: 'y'", {kLargeShape}));
  ExpectInPlaceGpuMatchesCpu(
      MakeGpuCase<TypeParam>(std::string(kLayer) + "bottom: 'x' top: 'x'", {kShape}));
}

// TRAIN on the GPU: about dropout_ratio of the values are zeroed, the others scaled by
// 1 / (1 - ratio) exactly as the CPU path computes it, and backward applies the same mask.
TYPED_TEST(GpuNeuronLayersTest, DropoutTrainDropsAboutRatioAndBackwardUsesTheMask) {
  using Dtype = TypeParam;
  Caffe::set_mode(Caffe::GPU);
  // Inputs in [1, 2), so a zero in the top always means "dropped".
  Blob<Dtype> bottom(std::vector<int>{100, 10, 101}), top;
  FillUniform<Dtype>(&bottom, 7, 1, 2);
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  for (const float ratio : {0.f, 0.3f, 0.5f, 0.9f}) {
    SCOPED_TRACE(ratio);
    LayerParameter param = ParseLayerParam("type: 'Dropout' phase: TRAIN");
    param.mutable_dropout_param()->set_dropout_ratio(ratio);
    DropoutLayer<Dtype> layer(param);
    layer.SetUp(bottom_vec, top_vec);
    layer.Forward(bottom_vec, top_vec);
    Blob<Dtype> top_gradient(top.shape());
    FillGaussian(&top_gradient, 8);
    caffe_copy(top.count(), top_gradient.cpu_data(), top.mutable_cpu_diff());
    layer.Backward(top_vec, {true}, bottom_vec);

    const Dtype scale = static_cast<Dtype>(1. / (1. - static_cast<double>(Dtype(ratio))));
    const Dtype* x = bottom.cpu_data();
    const Dtype* y = top.cpu_data();
    const Dtype* dy = top.cpu_diff();
    const Dtype* dx = bottom.cpu_diff();
    int dropped = 0, mismatches = 0;
    for (int i = 0; i < bottom.count() && mismatches < 5; ++i) {
      const bool kept = y[i] != 0;
      dropped += !kept;
      const Dtype expected_y = kept ? x[i] * Dtype(1) * scale : Dtype(0);
      const Dtype expected_dx = kept ? dy[i] * Dtype(1) * scale : Dtype(0);
      if (y[i] != expected_y || dx[i] != expected_dx) {
        ++mismatches;
        ADD_FAILURE() << "element " << i << ": x " << x[i] << ", y " << y[i] << " (expected "
                      << expected_y << "), dy " << dy[i] << ", dx " << dx[i] << " (expected "
                      << expected_dx << ")";
      }
    }
    // 101000 draws: the dropped fraction's standard deviation is below 0.0016.
    const double dropped_fraction = static_cast<double>(dropped) / bottom.count();
    if (ratio == 0.f) {
      EXPECT_EQ(dropped, 0);
    } else {
      EXPECT_NEAR(dropped_fraction, ratio, 0.01);
    }
  }
}

// The GPU mask follows Caffe's seed, and in place gives what out of place gives.
TYPED_TEST(GpuNeuronLayersTest, DropoutTrainSeededAndInPlace) {
  using Dtype = TypeParam;
  Caffe::set_mode(Caffe::GPU);
  const std::vector<int> shape = {3, 7, 129};
  Blob<Dtype> input(shape);
  FillUniform<Dtype>(&input, 9, 1, 2);
  Blob<Dtype> top_gradient(shape);
  FillGaussian(&top_gradient, 10);
  const char* const kLayer = "type: 'Dropout' phase: TRAIN dropout_param { dropout_ratio: 0.4 }";

  // Out of place, twice from the same seed, and once more without reseeding.
  Blob<Dtype> bottom(shape), top;
  bottom.CopyFrom(input);
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  DropoutLayer<Dtype> layer(ParseLayerParam(kLayer));
  layer.SetUp(bottom_vec, top_vec);
  Caffe::set_random_seed(1234);
  layer.Forward(bottom_vec, top_vec);
  caffe_copy(top.count(), top_gradient.cpu_data(), top.mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  const std::vector<Dtype> first_top(top.cpu_data(), top.cpu_data() + top.count());
  const std::vector<Dtype> first_dx(bottom.cpu_diff(), bottom.cpu_diff() + bottom.count());
  layer.Forward(bottom_vec, top_vec);
  bool differs = false;
  for (int i = 0; i < top.count(); ++i) differs |= top.cpu_data()[i] != first_top[i];
  EXPECT_TRUE(differs) << "consecutive forwards must draw fresh masks";
  Caffe::set_random_seed(1234);
  layer.Forward(bottom_vec, top_vec);
  for (int i = 0; i < top.count(); ++i) ASSERT_EQ(top.cpu_data()[i], first_top[i]) << i;

  // In place from the same seed: the same output and gradient.
  Blob<Dtype> blob(shape);
  blob.CopyFrom(input);
  Blobs<Dtype> in_place{&blob};
  DropoutLayer<Dtype> in_place_layer(ParseLayerParam(kLayer));
  in_place_layer.SetUp(in_place, in_place);
  Caffe::set_random_seed(1234);
  in_place_layer.Forward(in_place, in_place);
  caffe_copy(blob.count(), top_gradient.cpu_data(), blob.mutable_cpu_diff());
  in_place_layer.Backward(in_place, {true}, in_place);
  for (int i = 0; i < blob.count(); ++i) {
    ASSERT_EQ(blob.cpu_data()[i], first_top[i]) << i;
    ASSERT_EQ(blob.cpu_diff()[i], first_dx[i]) << i;
  }
}

// ---- Bias ----

TYPED_TEST(GpuNeuronLayersTest, BiasLearned) {
  const char* const kParams[] = {
      "",                      // axis 1, one axis: per channel
      "num_axes: 2",           // (C, H)
      "axis: 0 num_axes: -1",  // D = count, inner 1
      "axis: -2 num_axes: 2",  // (H, W), inner 1
      "num_axes: 0",           // a scalar
  };
  for (const char* params : kParams) {
    SCOPED_TRACE(params);
    GpuLayerCase<TypeParam> test_case =
        MakeGpuCase<TypeParam>(std::string("name: 'bias' type: 'Bias' bias_param { ") + params +
                                   " filler { type: 'gaussian' } } bottom: 'x' top: 'y'",
                               {kShape}, GpuSumTolerance<TypeParam>());
    ExpectGpuMatchesCpu(test_case);
  }
  GpuLayerCase<TypeParam> large = MakeGpuCase<TypeParam>(
      "name: 'bias' type: 'Bias' bias_param { filler { type: 'gaussian' } } "
      "bottom: 'x' top: 'y'",
      {kLargeShape}, GpuSumTolerance<TypeParam>());
  ExpectGpuMatchesCpu(large);
}

TYPED_TEST(GpuNeuronLayersTest, BiasFromSecondBottom) {
  GpuLayerCase<TypeParam> test_case =
      MakeGpuCase<TypeParam>("name: 'bias' type: 'Bias' bottom: 'x' bottom: 'b' top: 'y'",
                             {kShape, {3, 17}}, GpuSumTolerance<TypeParam>());
  ExpectGpuMatchesCpu(test_case);
  test_case.propagate_down = {false, true};
  ExpectGpuMatchesCpu(test_case);
  test_case.propagate_down = {true, false};
  ExpectGpuMatchesCpu(test_case);
  // A scalar second bottom.
  test_case.bottom_shapes = {kLargeShape, {}};
  test_case.propagate_down = {};
  ExpectGpuMatchesCpu(test_case);
}

TYPED_TEST(GpuNeuronLayersTest, BiasInPlace) {
  GpuLayerCase<TypeParam> learned = MakeGpuCase<TypeParam>(
      "name: 'bias' type: 'Bias' bias_param { filler { type: 'gaussian' } } "
      "bottom: 'x' top: 'x'",
      {kShape}, GpuSumTolerance<TypeParam>());
  ExpectInPlaceGpuMatchesCpu(learned);
  GpuLayerCase<TypeParam> second_bottom = MakeGpuCase<TypeParam>(
      "name: 'bias' type: 'Bias' bias_param { axis: 0 } "
      "bottom: 'x' bottom: 'b' top: 'x'",
      {kShape, {2, 3}}, GpuSumTolerance<TypeParam>());
  ExpectInPlaceGpuMatchesCpu(second_bottom);
}

// ---- Scale ----

TYPED_TEST(GpuNeuronLayersTest, ScaleLearned) {
  const char* const kParams[] = {
      "bias_term: true",                       // per channel, with a bias
      "",                                      // per channel
      "num_axes: 2 bias_term: true",           // (C, H)
      "axis: 0 num_axes: -1 bias_term: true",  // D = count, inner 1
      "num_axes: 0 bias_term: true",           // scalars
  };
  for (const char* params : kParams) {
    SCOPED_TRACE(params);
    GpuLayerCase<TypeParam> test_case = MakeGpuCase<TypeParam>(
        std::string("name: 'scale' type: 'Scale' scale_param { ") + params +
            " filler { type: 'gaussian' } bias_filler { type: 'gaussian' } } "
            "bottom: 'x' top: 'y'",
        {kShape}, GpuSumTolerance<TypeParam>());
    ExpectGpuMatchesCpu(test_case);
  }
  GpuLayerCase<TypeParam> large = MakeGpuCase<TypeParam>(
      "name: 'scale' type: 'Scale' scale_param { bias_term: true filler { type: 'gaussian' } "
      "bias_filler { type: 'gaussian' } } bottom: 'x' top: 'y'",
      {kLargeShape}, GpuSumTolerance<TypeParam>());
  ExpectGpuMatchesCpu(large);
}

TYPED_TEST(GpuNeuronLayersTest, ScaleFromSecondBottom) {
  GpuLayerCase<TypeParam> test_case = MakeGpuCase<TypeParam>(
      "name: 'scale' type: 'Scale' scale_param { bias_term: true "
      "bias_filler { type: 'gaussian' } } bottom: 'x' bottom: 's' top: 'y'",
      {kShape, {3, 17}}, GpuSumTolerance<TypeParam>());
  ExpectGpuMatchesCpu(test_case);
  test_case.propagate_down = {true, false};
  ExpectGpuMatchesCpu(test_case);
  test_case.propagate_down = {false, true};
  ExpectGpuMatchesCpu(test_case);
  GpuLayerCase<TypeParam> no_bias = MakeGpuCase<TypeParam>(
      "name: 'scale' type: 'Scale' scale_param { axis: 0 } bottom: 'x' bottom: 's' top: 'y'",
      {kLargeShape, {3, 5}}, GpuSumTolerance<TypeParam>());
  ExpectGpuMatchesCpu(no_bias);
  // A scalar second bottom.
  no_bias.bottom_shapes = {kShape, {}};
  ExpectGpuMatchesCpu(no_bias);
}

TYPED_TEST(GpuNeuronLayersTest, ScaleInPlace) {
  GpuLayerCase<TypeParam> learned = MakeGpuCase<TypeParam>(
      "name: 'scale' type: 'Scale' scale_param { bias_term: true filler { type: 'gaussian' } "
      "bias_filler { type: 'gaussian' } } bottom: 'x' top: 'x'",
      {kShape}, GpuSumTolerance<TypeParam>());
  ExpectInPlaceGpuMatchesCpu(learned);
  GpuLayerCase<TypeParam> second_bottom =
      MakeGpuCase<TypeParam>("name: 'scale' type: 'Scale' bottom: 'x' bottom: 's' top: 'x'",
                             {kShape, {3}}, GpuSumTolerance<TypeParam>());
  ExpectInPlaceGpuMatchesCpu(second_bottom);
}

// ---- Eltwise ----

TYPED_TEST(GpuNeuronLayersTest, EltwiseProd) {
  const std::string layer =
      "name: 'prod' type: 'Eltwise' eltwise_param { operation: PROD } "
      "bottom: 'a' bottom: 'b' bottom: 'c' top: 'y'";
  GpuLayerCase<TypeParam> stable = MakeGpuCase<TypeParam>(layer, {kShape, kShape, kShape});
  ExpectGpuMatchesCpu(stable);
  stable.propagate_down = {false, true, true};
  ExpectGpuMatchesCpu(stable);
  GpuLayerCase<TypeParam> dividing = MakeGpuCase<TypeParam>(
      "name: 'prod' type: 'Eltwise' eltwise_param { operation: PROD stable_prod_grad: false } "
      "bottom: 'a' bottom: 'b' bottom: 'c' top: 'y'",
      {kLargeShape, kLargeShape, kLargeShape});
  ExpectGpuMatchesCpu(dividing);
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>("name: 'prod' type: 'Eltwise' eltwise_param { operation: PROD } "
                             "bottom: 'a' bottom: 'b' top: 'y'",
                             {kShape, kShape}));
}

TYPED_TEST(GpuNeuronLayersTest, EltwiseSum) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'sum' type: 'Eltwise' bottom: 'a' bottom: 'b' top: 'y'", {kShape, kShape}));
  GpuLayerCase<TypeParam> weighted = MakeGpuCase<TypeParam>(
      "name: 'sum' type: 'Eltwise' eltwise_param { operation: SUM coeff: 1 coeff: -0.5 "
      "coeff: 2 } bottom: 'a' bottom: 'b' bottom: 'c' top: 'y'",
      {kLargeShape, kLargeShape, kLargeShape});
  ExpectGpuMatchesCpu(weighted);
  weighted.propagate_down = {true, false, true};
  ExpectGpuMatchesCpu(weighted);
}

TYPED_TEST(GpuNeuronLayersTest, EltwiseMax) {
  const std::string layer =
      "name: 'max' type: 'Eltwise' eltwise_param { operation: MAX } "
      "bottom: 'a' bottom: 'b' bottom: 'c' top: 'y'";
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(layer, {kLargeShape, kLargeShape, kLargeShape}));
  // Small integers make many ties, which must send the gradient to the same bottom as the CPU.
  GpuLayerCase<TypeParam> ties = MakeGpuCase<TypeParam>(layer, {kShape, kShape, kShape});
  ties.fill = [](const Blobs<TypeParam>& bottoms) {
    for (size_t i = 0; i < bottoms.size(); ++i) {
      FillUniform<TypeParam>(bottoms[i], 40 + i, -2, 2);
      TypeParam* data = bottoms[i]->mutable_cpu_data();
      for (int j = 0; j < bottoms[i]->count(); ++j) data[j] = std::round(data[j]);
    }
  };
  ExpectGpuMatchesCpu(ties);
  ties.propagate_down = {true, false, true};
  ExpectGpuMatchesCpu(ties);
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>("name: 'max' type: 'Eltwise' eltwise_param { operation: MAX } "
                             "bottom: 'a' bottom: 'b' top: 'y'",
                             {kShape, kShape}));
}

}  // namespace caffe
