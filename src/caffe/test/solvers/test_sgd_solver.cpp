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

}  // namespace caffe
