// LSTMUnitLayer: one LSTM timestep from gate pre-activations. Shapes, forward against
// hand-computed values (a continuing and a restarting stream), finite-difference gradients with
// respect to the previous cell state and the gate inputs, and rejected inputs.
// LSTMUnitLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
// Legend: N streams, H hidden size; gate inputs are (1, N, 4H) in the order i, f, o, g.
#include <cmath>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/lstm_unit_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class LSTMUnitLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  // N = 3 streams, H = 2: c_prev (1, 3, 2), gates (1, 3, 8), cont (1, 3) = [1, 0, 1].
  LSTMUnitLayerTest()
      : c_prev_(std::vector<int>{1, 3, 2}),
        gates_(std::vector<int>{1, 3, 8}),
        cont_(std::vector<int>{1, 3}) {
    FillGaussian(&c_prev_, 1701);
    FillGaussian(&gates_, 1702);
    const Dtype cont[3] = {1, 0, 1};
    caffe_copy(3, cont, cont_.mutable_cpu_data());
  }

  Blob<Dtype> c_prev_, gates_, cont_, c_, h_;
  Blobs<Dtype> bottom_vec_{&c_prev_, &gates_, &cont_}, top_vec_{&c_, &h_};
};
TYPED_TEST_SUITE(LSTMUnitLayerTest, TestDtypesAndDevices);

TYPED_TEST(LSTMUnitLayerTest, TopsHaveTheCellStateShape) {
  using Dtype = typename TypeParam::Dtype;
  LSTMUnitLayer<Dtype> layer(ParseLayerParam("name: 'unit' type: 'LSTMUnit'"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_STREQ(layer.type(), "LSTMUnit");
  EXPECT_EQ(this->c_.shape(), (std::vector<int>{1, 3, 2}));
  EXPECT_EQ(this->h_.shape(), (std::vector<int>{1, 3, 2}));
  EXPECT_TRUE(layer.blobs().empty());
  EXPECT_TRUE(layer.AllowForceBackward(0));
  EXPECT_TRUE(layer.AllowForceBackward(1));
  EXPECT_FALSE(layer.AllowForceBackward(2));
}

TYPED_TEST(LSTMUnitLayerTest, ForwardMatchesHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  // H = 1, two streams with the same gates: i' = 0, f' = ln 3, o' = 0, g' = atanh(0.5), so
  // i = 0.5, sigmoid(f') = 0.75, o = 0.5, g = 0.5; c_prev = 2 in both.
  Blob<Dtype> c_prev(std::vector<int>{1, 2, 1}), gates(std::vector<int>{1, 2, 4});
  Blob<Dtype> cont(std::vector<int>{1, 2});
  const Dtype g[8] = {0, Dtype(std::log(3.0)), 0, Dtype(std::atanh(0.5)),
                      0, Dtype(std::log(3.0)), 0, Dtype(std::atanh(0.5))};
  caffe_copy(8, g, gates.mutable_cpu_data());
  caffe_set(2, Dtype(2), c_prev.mutable_cpu_data());
  cont.mutable_cpu_data()[0] = 1;  // continues: c = 0.75 * 2 + 0.5 * 0.5 = 1.75
  cont.mutable_cpu_data()[1] = 0;  // restarts: the forget gate is 0, c = 0.25
  Blobs<Dtype> bottoms{&c_prev, &gates, &cont};
  LSTMUnitLayer<Dtype> layer(ParseLayerParam("name: 'unit' type: 'LSTMUnit'"));
  layer.SetUp(bottoms, this->top_vec_);
  layer.Forward(bottoms, this->top_vec_);
  EXPECT_NEAR(this->c_.cpu_data()[0], 1.75, 1e-6);
  EXPECT_NEAR(this->c_.cpu_data()[1], 0.25, 1e-6);
  EXPECT_NEAR(this->h_.cpu_data()[0], 0.5 * std::tanh(1.75), 1e-6);
  EXPECT_NEAR(this->h_.cpu_data()[1], 0.5 * std::tanh(0.25), 1e-6);
}

TYPED_TEST(LSTMUnitLayerTest, BackwardMatchesHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  // H = 1, one continuing stream as above, dL/dc = 1, dL/dh = 0: dc = 1, so
  // dc_prev = f = 0.75, di' = g i (1 - i) = 0.125, df' = c_prev f (1 - f) = 0.375, do' = 0,
  // dg' = i (1 - g^2) = 0.375.
  Blob<Dtype> c_prev(std::vector<int>{1, 1, 1}), gates(std::vector<int>{1, 1, 4});
  Blob<Dtype> cont(std::vector<int>{1, 1});
  const Dtype g[4] = {0, Dtype(std::log(3.0)), 0, Dtype(std::atanh(0.5))};
  caffe_copy(4, g, gates.mutable_cpu_data());
  c_prev.mutable_cpu_data()[0] = 2;
  cont.mutable_cpu_data()[0] = 1;
  Blobs<Dtype> bottoms{&c_prev, &gates, &cont};
  LSTMUnitLayer<Dtype> layer(ParseLayerParam("name: 'unit' type: 'LSTMUnit'"));
  layer.SetUp(bottoms, this->top_vec_);
  layer.Forward(bottoms, this->top_vec_);
  this->c_.mutable_cpu_diff()[0] = 1;
  this->h_.mutable_cpu_diff()[0] = 0;
  layer.Backward(this->top_vec_, {true, true, false}, bottoms);
  EXPECT_NEAR(c_prev.cpu_diff()[0], 0.75, 1e-6);
  const double expected[4] = {0.125, 0.375, 0, 0.375};
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(gates.cpu_diff()[k], expected[k], 1e-6) << "gate " << k;
}

TYPED_TEST(LSTMUnitLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  LSTMUnitLayer<Dtype> layer(ParseLayerParam("name: 'unit' type: 'LSTMUnit'"));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  // cont = [1, 0, 1]: the restarting stream's previous cell must get no gradient.
  checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_, 0);
  checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_, 1);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  caffe_set(this->c_.count(), Dtype(1), this->c_.mutable_cpu_diff());
  caffe_set(this->h_.count(), Dtype(1), this->h_.mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true, true, false}, this->bottom_vec_);
  EXPECT_EQ(this->c_prev_.cpu_diff()[2], Dtype(0));
  EXPECT_EQ(this->c_prev_.cpu_diff()[3], Dtype(0));
  EXPECT_NE(this->c_prev_.cpu_diff()[0], Dtype(0));
}

TYPED_TEST(LSTMUnitLayerTest, RejectsBackwardToTheSequenceIndicators) {
  using Dtype = typename TypeParam::Dtype;
  LSTMUnitLayer<Dtype> layer(ParseLayerParam("name: 'unit' type: 'LSTMUnit'"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_THROW(layer.Backward(this->top_vec_, {true, true, true}, this->bottom_vec_), Error);
}

TYPED_TEST(LSTMUnitLayerTest, RejectsMismatchedBottoms) {
  using Dtype = typename TypeParam::Dtype;
  const struct {
    std::vector<int> c_prev, gates, cont;
  } cases[] = {
      {{1, 3, 2}, {1, 3, 6}, {1, 3}},     // 3 gates' worth of values, not 4
      {{1, 3, 2}, {1, 2, 8}, {1, 3}},     // gate inputs for 2 streams, not 3
      {{1, 3, 2}, {1, 3, 8}, {1, 2}},     // cont for 2 streams
      {{2, 3, 2}, {2, 3, 8}, {2, 3}},     // two timesteps
      {{3, 2}, {1, 3, 8}, {1, 3}},        // c_prev without the timestep axis
      {{1, 3, 2}, {1, 3, 8}, {1, 3, 1}},  // cont with a third axis
  };
  for (const auto& c : cases) {
    Blob<Dtype> c_prev(c.c_prev), gates(c.gates), cont(c.cont), c_top, h_top;
    Blobs<Dtype> bottoms{&c_prev, &gates, &cont}, tops{&c_top, &h_top};
    LSTMUnitLayer<Dtype> layer(ParseLayerParam("name: 'unit' type: 'LSTMUnit'"));
    try {
      layer.SetUp(bottoms, tops);
      ADD_FAILURE() << "accepted " << c_prev.shape_string() << ", " << gates.shape_string() << ", "
                    << cont.shape_string();
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("LSTMUnit layer 'unit': ", 0), 0u) << e.what();
    }
  }
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class LSTMUnitLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(LSTMUnitLayerGpuTest, TestDtypes);

TYPED_TEST(LSTMUnitLayerGpuTest, LSTMUnitWithSequenceStarts) {
  GpuLayerCase<TypeParam> c;
  c.layer =
      "name: 'lstm' type: 'LSTMUnit' bottom: 'c_prev' bottom: 'gates' bottom: 'cont' "
      "top: 'c' top: 'h'";
  c.bottom_shapes = {{1, 13, 37}, {1, 13, 148}, {1, 13}};
  c.fill = [](const Blobs<TypeParam>& bottom) {
    FillGaussian(bottom[0], 23);
    FillGaussian(bottom[1], 24, TypeParam(2));
    FillZeroOne(bottom[2]);
  };
  c.propagate_down = {true, true, false};
  ExpectGpuMatchesCpu(c);
}

}  // namespace caffe
