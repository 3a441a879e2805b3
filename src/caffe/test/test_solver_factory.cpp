// The solver registry: BVLC's six types are registered for float and double, `type:` picks the
// class, a solver registered elsewhere (here, in this file) is found the same way, and an unknown
// type is a caffe::Error that lists the known ones.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "caffe/io/io.hpp"
#include "caffe/solver.hpp"
#include "caffe/solver_factory.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

const char kTinyNet[] = R"(
  net_param { name: "tiny" layer { name: "d" type: "Input" top: "d"
    input_param { shape { dim: 1 } } } } )";

SolverParameter ParseSolver(const std::string& text) {
  SolverParameter param;
  ParseProtoFromText(text, "test solver", &param);
  return param;
}

}  // namespace

// A solver defined outside the library, registered with the same macro the library's use.
template <typename Dtype>
class ProbeSolver : public Solver<Dtype> {
 public:
  explicit ProbeSolver(const SolverParameter& param) : Solver<Dtype>(param) {}
  const char* type() const override { return "Probe"; }
  void ApplyUpdate() override {}

 protected:
  void SnapshotSolverState(const string&) override {}
  void RestoreSolverStateFromHDF5(const string&) override {}
  void RestoreSolverStateFromBinaryProto(const string&) override {}
};
REGISTER_SOLVER_CLASS(Probe);

template <typename Dtype>
class SolverFactoryTest : public ::testing::Test {
 protected:
  SolverFactoryTest() { Caffe::set_mode(Caffe::CPU); }
};
TYPED_TEST_SUITE(SolverFactoryTest, TestDtypes);

TYPED_TEST(SolverFactoryTest, RegistryHoldsTheBvlcSolversInOrder) {
  const std::vector<string> types = SolverRegistry<TypeParam>::SolverTypeList();
  // Sorted, so error messages and `caffe` help list them stably.
  EXPECT_TRUE(std::is_sorted(types.begin(), types.end()));
  for (const char* type : {"AdaDelta", "AdaGrad", "Adam", "Nesterov", "RMSProp", "SGD"}) {
    EXPECT_NE(std::find(types.begin(), types.end(), type), types.end()) << type;
  }
}

TYPED_TEST(SolverFactoryTest, TypeStringSelectsTheSolverClass) {
  for (const char* type : {"SGD", "Nesterov", "AdaGrad", "RMSProp", "AdaDelta", "Adam"}) {
    std::unique_ptr<Solver<TypeParam>> solver(SolverRegistry<TypeParam>::CreateSolver(ParseSolver(
        std::string("base_lr: 0.01 lr_policy: 'fixed' type: '") + type + "'" + kTinyNet)));
    ASSERT_TRUE(solver) << type;
    EXPECT_STREQ(solver->type(), type);
    EXPECT_EQ(solver->param().type(), type);
    ASSERT_TRUE(solver->net()) << type;
    EXPECT_EQ(solver->net()->name(), "tiny");
  }
}

TYPED_TEST(SolverFactoryTest, DefaultTypeIsSgd) {
  std::unique_ptr<Solver<TypeParam>> solver(SolverRegistry<TypeParam>::CreateSolver(
      ParseSolver(std::string("base_lr: 1 lr_policy: 'fixed'") + kTinyNet)));
  EXPECT_STREQ(solver->type(), "SGD");
}

TYPED_TEST(SolverFactoryTest, SolversRegisteredOutsideTheLibraryAreFound) {
  const std::vector<string> types = SolverRegistry<TypeParam>::SolverTypeList();
  EXPECT_NE(std::find(types.begin(), types.end(), "Probe"), types.end());
  std::unique_ptr<Solver<TypeParam>> solver(SolverRegistry<TypeParam>::CreateSolver(
      ParseSolver(std::string("type: 'Probe' base_lr: 0.5 max_iter: 7") + kTinyNet)));
  EXPECT_STREQ(solver->type(), "Probe");
  EXPECT_NE(dynamic_cast<ProbeSolver<TypeParam>*>(solver.get()), nullptr);
  // The creator is handed the parameters.
  EXPECT_EQ(solver->param().max_iter(), 7);
}

TYPED_TEST(SolverFactoryTest, TypeNamesAreCaseSensitive) {
  // BVLC's names, exactly: "sgd" is not "SGD".
  EXPECT_THROW(SolverRegistry<TypeParam>::CreateSolver(ParseSolver("type: 'sgd'")), Error);
}

TYPED_TEST(SolverFactoryTest, UnknownTypeListsEveryKnownOne) {
  try {
    SolverRegistry<TypeParam>::CreateSolver(ParseSolver(std::string("type: 'LBFGS'") + kTinyNet));
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("\"LBFGS\""), std::string::npos) << message;
    EXPECT_NE(message.find("AdaDelta, AdaGrad, Adam, Nesterov, Probe, RMSProp, SGD"),
              std::string::npos)
        << message;
  }
}

}  // namespace caffe
