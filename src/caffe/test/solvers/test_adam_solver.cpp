#include "caffe/test/solver_test_util.hpp"

namespace caffe {

template <typename Dtype>
class AdamSolverTest : public ::testing::Test {};
TYPED_TEST_SUITE(AdamSolverTest, TestDtypes);

TYPED_TEST(AdamSolverTest, UpdatesMatchTheHandWorkedRule) {
  for (const SolverCheckSettings& settings : StandardSolverChecks(0.9)) {
    CheckSolverUpdates<TypeParam>("Adam", settings);
  }
}

TYPED_TEST(AdamSolverTest, BiasCorrectionFollowsTheIterationCount) {
  SolverCheckSettings settings;
  settings.momentum = 0.9;
  settings.momentum2 = 0.99;
  settings.num_iters = 6;
  CheckSolverUpdates<TypeParam>("Adam", settings);
}

}  // namespace caffe
