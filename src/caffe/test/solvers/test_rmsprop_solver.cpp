#include "caffe/test/solver_test_util.hpp"

namespace caffe {

template <typename Dtype>
class RMSPropSolverTest : public ::testing::Test {};
TYPED_TEST_SUITE(RMSPropSolverTest, TestDtypes);

TYPED_TEST(RMSPropSolverTest, UpdatesMatchTheHandWorkedRule) {
  for (const SolverCheckSettings& settings : StandardSolverChecks(0)) {
    CheckSolverUpdates<TypeParam>("RMSProp", settings);
  }
}

}  // namespace caffe
