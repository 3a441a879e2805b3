#include "caffe/test/solver_test_util.hpp"

namespace caffe {

template <typename Dtype>
class SGDSolverTest : public ::testing::Test {};
TYPED_TEST_SUITE(SGDSolverTest, TestDtypes);

TYPED_TEST(SGDSolverTest, UpdatesMatchTheHandWorkedRule) {
  for (const SolverCheckSettings& settings : StandardSolverChecks(0.9)) {
    CheckSolverUpdates<TypeParam>("SGD", settings);
  }
}

TYPED_TEST(SGDSolverTest, PlainGradientDescentWithoutMomentum) {
  SolverCheckSettings settings;
  settings.momentum = 0;
  CheckSolverUpdates<TypeParam>("SGD", settings);
}

TYPED_TEST(SGDSolverTest, WeightDecayAppliesToBiasWhenItsDecayMultSaysSo) {
  SolverCheckSettings settings;
  settings.momentum = 0.5;
  settings.weight_decay = 0.2;
  settings.bias_decay_mult = 1;
  settings.bias_lr_mult = 0.5;
  CheckSolverUpdates<TypeParam>("SGD", settings);
}

// Plain SGD with L2 decay updates each parameter in one pass on the CPU; debug_info keeps BVLC's
// separate passes (decay, momentum, Net::Update). Both leave the same weights, momentum history
// and diffs (the step, as BVLC leaves it), with a weight shared by two layers and a bias that
// learns at twice the rate without decay.
TYPED_TEST(SGDSolverTest, OnePassUpdateMatchesTheSeparatePasses) {
  const std::string text = R"(
    base_lr: 0.05 lr_policy: "fixed" momentum: 0.9 weight_decay: 0.01 random_seed: 7
    display: 0 max_iter: 10 snapshot_after_train: false
    net_param {
      name: "shared"
      layer { name: "data" type: "DummyData" top: "x" top: "t"
              dummy_data_param { shape { dim: 4 dim: 5 } shape { dim: 4 dim: 3 }
                                 data_filler { type: "uniform" min: -1 max: 1 }
                                 data_filler { type: "uniform" min: -1 max: 1 } } }
      layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "h"
              param { name: "w" } param { lr_mult: 2 decay_mult: 0 }
              inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.5 }
                                    bias_filler { type: "constant" value: 0.1 } } }
      layer { name: "ip2" type: "InnerProduct" bottom: "h" top: "h2"
              param { name: "w" } param { lr_mult: 2 decay_mult: 0 }
              inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.5 }
                                    bias_filler { type: "constant" value: 0.1 } } }
      layer { name: "ip3" type: "InnerProduct" bottom: "h2" top: "y"
              inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.5 } } }
      layer { name: "loss" type: "EuclideanLoss" bottom: "y" bottom: "t" top: "loss" }
    })";
  Caffe::set_mode(Caffe::CPU);
  std::vector<std::vector<std::vector<TypeParam>>> runs;  // [run][param] data, diff, history
  for (const bool separate_passes : {false, true}) {
    SolverParameter param;
    ParseProtoFromText(text, "solver", &param);
    param.set_debug_info(separate_passes);
    SGDSolver<TypeParam> solver(param);
    solver.Step(3);
    std::vector<std::vector<TypeParam>> state;
    const auto& params = solver.net()->learnable_params();
    ASSERT_EQ(params.size(), 5u);  // w (shared), the two biases, ip3's weight and bias
    for (size_t i = 0; i < params.size(); ++i) {
      const Blob<TypeParam>& history = *solver.history()[i];
      for (const TypeParam* values :
           {params[i]->cpu_data(), params[i]->cpu_diff(), history.cpu_data()}) {
        state.emplace_back(values, values + params[i]->count());
      }
    }
    runs.push_back(state);
  }
  const double tolerance = sizeof(TypeParam) == 4 ? 1e-5 : 1e-12;
  for (size_t k = 0; k < runs[0].size(); ++k) {
    for (size_t i = 0; i < runs[0][k].size(); ++i) {
      EXPECT_NEAR(runs[0][k][i], runs[1][k][i], tolerance * (1 + std::fabs(runs[1][k][i])))
          << "param " << k / 3
          << (k % 3 == 0   ? " data "
              : k % 3 == 1 ? " diff "
                           : " history ")
          << i;
    }
  }
}

}  // namespace caffe
