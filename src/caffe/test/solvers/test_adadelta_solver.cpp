#include "caffe/test/solver_test_util.hpp"

namespace caffe {

template <typename Dtype>
class AdaDeltaSolverTest : public ::testing::Test {};
TYPED_TEST_SUITE(AdaDeltaSolverTest, TestDtypes);

TYPED_TEST(AdaDeltaSolverTest, UpdatesMatchTheHandWorkedRule) {
  for (const SolverCheckSettings& settings : StandardSolverChecks(0.95)) {
    CheckSolverUpdates<TypeParam>("AdaDelta", settings);
  }
}

TYPED_TEST(AdaDeltaSolverTest, WorksWithAPlainLearningRateOfOne) {
  SolverCheckSettings settings;
  settings.momentum = 0.95;
  settings.base_lr = 1.0;
  settings.delta = 1e-6;
  CheckSolverUpdates<TypeParam>("AdaDelta", settings);
}

}  // namespace caffe
