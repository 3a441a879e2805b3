#include "caffe/test/solver_test_util.hpp"

namespace caffe {

template <typename Dtype>
class AdaGradSolverTest : public ::testing::Test {};
TYPED_TEST_SUITE(AdaGradSolverTest, TestDtypes);

TYPED_TEST(AdaGradSolverTest, UpdatesMatchTheHandWorkedRule) {
  for (const SolverCheckSettings& settings : StandardSolverChecks(0)) {
    CheckSolverUpdates<TypeParam>("AdaGrad", settings);
  }
}

}  // namespace caffe
