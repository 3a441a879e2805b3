#include "caffe/test/solver_test_util.hpp"

namespace caffe {

template <typename Dtype>
class NesterovSolverTest : public ::testing::Test {};
TYPED_TEST_SUITE(NesterovSolverTest, TestDtypes);

TYPED_TEST(NesterovSolverTest, UpdatesMatchTheHandWorkedRule) {
  for (const SolverCheckSettings& settings : StandardSolverChecks(0.9)) {
    CheckSolverUpdates<TypeParam>("Nesterov", settings);
  }
}

}  // namespace caffe
