#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "caffe/kernels/math_functions.hpp"
#include "caffe/util/blas_core.hpp"

namespace caffe {
namespace {

constexpr char kCoreType[] = "OPENBLAS_CORETYPE";

CpuVectorSupport Support(bool avx2_fma, bool avx512) {
  CpuVectorSupport cpu;
  cpu.avx2_fma = avx2_fma;
  cpu.avx512 = avx512;
  return cpu;
}

// Restores OpenBLAS's kernels and OPENBLAS_CORETYPE as the test found them.
class BlasCoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    original_core_ = BlasCoreName();
    const char* value = std::getenv(kCoreType);
    had_core_type_ = value != nullptr;
    if (value) original_core_type_ = value;
  }
  void TearDown() override {
    if (had_core_type_) {
      setenv(kCoreType, original_core_type_.c_str(), 1);
    } else {
      unsetenv(kCoreType);
    }
    if (BlasCoreName() != original_core_) {
      EXPECT_TRUE(SwitchBlasCore(original_core_));
    }
  }
  std::string original_core_;
  std::string original_core_type_;
  bool had_core_type_ = false;
};

TEST_F(BlasCoreTest, GenericAndPreHaswellCoresGiveWayToTheBestTheCpuHas) {
  EXPECT_EQ(BlasCoreFor("Prescott", Support(true, true)), "SkylakeX");
  EXPECT_EQ(BlasCoreFor("Prescott", Support(true, false)), "Haswell");
  EXPECT_EQ(BlasCoreFor("Unknown", Support(true, true)), "SkylakeX");
  EXPECT_EQ(BlasCoreFor("Sandybridge", Support(true, false)), "Haswell");
  EXPECT_EQ(BlasCoreFor("NEHALEM", Support(true, true)), "SkylakeX");  // any case
  EXPECT_EQ(BlasCoreFor("Core2", Support(false, false)), "");          // nothing better to offer
}

TEST_F(BlasCoreTest, CoresWithAvx2KernelsAndNamesItDoesNotKnowAreKept) {
  for (const char* core : {"Haswell", "SkylakeX", "Cooperlake", "SapphireRapids", "Zen",
                           "Excavator", "SomethingNew"}) {
    EXPECT_EQ(BlasCoreFor(core, Support(true, true)), "") << core;
  }
}

TEST_F(BlasCoreTest, UnusedVectorUnitsAreTheCpusThatTheKernelsLackFor) {
  EXPECT_EQ(UnusedVectorUnits("Prescott", Support(true, true)), "AVX2 and AVX-512");
  EXPECT_EQ(UnusedVectorUnits("Sandybridge", Support(true, false)), "AVX2");
  EXPECT_EQ(UnusedVectorUnits("Nehalem", Support(false, false)), "");
  EXPECT_EQ(UnusedVectorUnits("HASWELL", Support(true, true)), "AVX-512");
  EXPECT_EQ(UnusedVectorUnits("Zen", Support(true, true)), "AVX-512");
  EXPECT_EQ(UnusedVectorUnits("Haswell", Support(true, false)), "");
  for (const char* core : {"SkylakeX", "Cooperlake", "SapphireRapids", "SomethingNew"}) {
    EXPECT_EQ(UnusedVectorUnits(core, Support(true, true)), "") << core;
  }
}

TEST_F(BlasCoreTest, ThisProcessRunsKernelsFitForItsCpu) {
  // test_caffe_main calls FitBlasCoreToCpu, as GlobalInit does for the tools.
  if (had_core_type_) GTEST_SKIP() << kCoreType << " is set, and chooses the kernels";
  if (!BlasCoreSwitchable()) GTEST_SKIP() << "this OpenBLAS was built for one CPU type";
  EXPECT_EQ(BlasCoreFor(BlasCoreName(), DetectCpuVectorSupport()), "")
      << "OpenBLAS runs its " << BlasCoreName() << " kernels";
}

TEST_F(BlasCoreTest, SwitchingKernelsKeepsGemmResults) {
  if (!BlasCoreSwitchable()) GTEST_SKIP() << "this OpenBLAS was built for one CPU type";
  const int m = 67, n = 53, k = 45;  // not multiples of any kernel's tile
  std::vector<float> a(m * k), b(k * n), expected(m * n, 0.f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 7) % 13) - 6.f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 5) % 11) - 5.f;
  for (int row = 0; row < m; ++row) {
    for (int col = 0; col < n; ++col) {
      for (int inner = 0; inner < k; ++inner)
        expected[row * n + col] += a[row * k + inner] * b[inner * n + col];
    }
  }
  for (const std::string& core : {std::string("Prescott"), original_core_}) {
    ASSERT_TRUE(SwitchBlasCore(core)) << core << " (now " << BlasCoreName() << ")";
    std::vector<float> c(m * n, -1.f);
    caffe_cpu_gemm<float>(CblasNoTrans, CblasNoTrans, m, n, k, 1.f, a.data(), b.data(), 0.f,
                          c.data());
    EXPECT_EQ(c, expected) << core;  // small integers: exact in any order of summation
  }
}

TEST_F(BlasCoreTest, FittingSwitchesFromGenericKernelsButKeepsTheUsersChoice) {
  if (!BlasCoreSwitchable()) GTEST_SKIP() << "this OpenBLAS was built for one CPU type";
  ASSERT_TRUE(SwitchBlasCore("Prescott"));
  setenv(kCoreType, "Prescott", 1);
  BlasCoreFit fit = FitBlasCoreToCpuNow();
  EXPECT_EQ(fit.chosen, "Prescott");
  EXPECT_EQ(fit.switched_to, "");
  EXPECT_EQ(BlasCoreName(), "Prescott");
  EXPECT_EQ(fit.core_type, "Prescott");
  const CpuVectorSupport cpu = DetectCpuVectorSupport();
  EXPECT_EQ(fit.unused, UnusedVectorUnits("Prescott", cpu));
  EXPECT_EQ(BlasCoreFitWorthLogging(fit), cpu.avx2_fma || cpu.avx512);

  unsetenv(kCoreType);
  const std::string better = BlasCoreFor("Prescott", DetectCpuVectorSupport());
  fit = FitBlasCoreToCpuNow();
  EXPECT_EQ(fit.chosen, "Prescott");
  EXPECT_EQ(fit.switched_to, better);
  EXPECT_EQ(BlasCoreName(), better.empty() ? "Prescott" : better);
  EXPECT_EQ(std::getenv(kCoreType), nullptr) << "the switch must not leave its setting behind";
  EXPECT_EQ(fit.core_type, "");
  EXPECT_EQ(BlasCoreFitWorthLogging(fit), !better.empty());
  if (!better.empty()) {
    EXPECT_EQ(DescribeBlasCoreFit(fit),
              "OpenBLAS does not know this CPU and chose its Prescott kernels, which leave its " +
                  UnusedVectorUnits("Prescott", cpu) + " unused; running its " + better +
                  " kernels instead (OPENBLAS_CORETYPE chooses otherwise)");
  }
}

TEST(BlasCoreFitTest, TheLogTellsWhereTheUsersCoreTypeLeavesVectorUnitsUnused) {
  BlasCoreFit fit;
  fit.chosen = "Haswell";
  fit.core_type = "haswell";
  fit.unused = "AVX-512";
  EXPECT_TRUE(BlasCoreFitWorthLogging(fit));
  EXPECT_EQ(DescribeBlasCoreFit(fit),
            "OPENBLAS_CORETYPE=haswell runs OpenBLAS's Haswell kernels, which leave this CPU's "
            "AVX-512 unused (GEMM runs slower; unset OPENBLAS_CORETYPE to let Caffe choose)");
  fit.unused = "";  // the kernels suit the CPU: nothing to say
  EXPECT_FALSE(BlasCoreFitWorthLogging(fit));
  EXPECT_EQ(DescribeBlasCoreFit(fit), "OpenBLAS runs its Haswell kernels");
  fit.core_type = "";  // OpenBLAS's own choice, kept
  EXPECT_FALSE(BlasCoreFitWorthLogging(fit));
}

}  // namespace
}  // namespace caffe
