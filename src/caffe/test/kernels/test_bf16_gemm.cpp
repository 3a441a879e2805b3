// caffe_cpu_gemm_bf16 against OpenBLAS's sgemm on the same factors rounded to bf16: the products
// of rounded factors are exact in fp32 (8 x 8 significant bits), so the two differ only in the
// order of their fp32 sums, K 2^-24 of sum |a||b| at most. Every transposition, leading
// dimensions wider than the matrices, alpha, beta (accumulating into C), and factors already in
// bf16; and CpuHasBf16Math agrees with what oneDNN reports.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "caffe/kernels/bf16_gemm.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/test/test_caffe_main.hpp"
#include "caffe/util/float16.hpp"

namespace caffe {

namespace {

std::vector<float> Random(size_t count, unsigned seed) {
  Blob<float> blob({static_cast<int>(count)});
  FillGaussian(&blob, seed);
  return std::vector<float>(blob.cpu_data(), blob.cpu_data() + count);
}

std::vector<float> RoundedToBf16(const std::vector<float>& values) {
  std::vector<uint16_t> bits(values.size());
  FloatsToBf16(values.data(), values.size(), bits.data());
  std::vector<float> rounded(values.size());
  Bf16ToFloats(bits.data(), bits.size(), rounded.data());
  return rounded;
}

struct Case {
  CBLAS_TRANSPOSE ta, tb;
  int M, N, K, pad;  // pad: extra columns in every leading dimension
  float alpha, beta;
};

class Bf16GemmTest : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST_P(Bf16GemmTest, EqualsSgemmOnRoundedFactors) {
  if (!CpuHasBf16Math()) GTEST_SKIP() << "no bf16 arithmetic here: " << CpuBf16Explanation();
  const Case c = GetParam();
  const bool ta = c.ta != CblasNoTrans, tb = c.tb != CblasNoTrans;
  const int a_rows = ta ? c.K : c.M, a_cols = ta ? c.M : c.K;
  const int b_rows = tb ? c.N : c.K, b_cols = tb ? c.K : c.N;
  const int lda = a_cols + c.pad, ldb = b_cols + c.pad, ldc = c.N + c.pad;
  const std::vector<float> A = Random(static_cast<size_t>(a_rows) * lda, 1);
  const std::vector<float> B = Random(static_cast<size_t>(b_rows) * ldb, 2);
  const std::vector<float> C0 = Random(static_cast<size_t>(c.M) * ldc, 3);
  std::vector<float> expected = C0, ours = C0;
  caffe_cpu_gemm_ld<float>(c.ta, c.tb, c.M, c.N, c.K, c.alpha, RoundedToBf16(A).data(), lda,
                           RoundedToBf16(B).data(), ldb, c.beta, expected.data(), ldc);
  caffe_cpu_gemm_bf16(c.ta, c.tb, c.M, c.N, c.K, c.alpha, A.data(), lda, B.data(), ldb, c.beta,
                      ours.data(), ldc);
  // The bound: K 2^-24 of |alpha| sum |a||b| + |beta c|, with |a|, |b| below 6 (N(0, 1) draws).
  const double bound = (c.K + 2) * std::ldexp(1.0, -24) * (std::fabs(c.alpha) * 36 * c.K + 6);
  for (int m = 0; m < c.M; ++m) {
    for (int n = 0; n < ldc; ++n) {
      const size_t i = static_cast<size_t>(m) * ldc + n;
      if (n >= c.N) {
        EXPECT_EQ(ours[i], C0[i]) << "wrote past column N at row " << m;
      } else {
        EXPECT_NEAR(ours[i], expected[i], bound) << "C[" << m << "][" << n << "]";
      }
    }
  }
}

TEST_P(Bf16GemmTest, TakesFactorsAlreadyInBf16) {
  if (!CpuHasBf16Math()) GTEST_SKIP() << "no bf16 arithmetic here: " << CpuBf16Explanation();
  const Case c = GetParam();
  if (c.pad) GTEST_SKIP() << "a bf16 B is packed (no leading dimension of its own)";
  const bool ta = c.ta != CblasNoTrans;
  const int lda = ta ? c.M : c.K, ldb = c.tb != CblasNoTrans ? c.K : c.N;
  const std::vector<float> A = Random(static_cast<size_t>(c.M) * c.K, 4);
  const std::vector<float> B = Random(static_cast<size_t>(c.K) * c.N, 5);
  std::vector<uint16_t> b_bits(B.size());
  FloatsToBf16(B.data(), B.size(), b_bits.data());
  std::vector<float> from_floats(static_cast<size_t>(c.M) * c.N, 0.f), from_bits = from_floats;
  caffe_cpu_gemm_bf16(c.ta, c.tb, c.M, c.N, c.K, c.alpha, A.data(), lda, B.data(), ldb, 0.f,
                      from_floats.data(), c.N);
  caffe_cpu_gemm_bf16(c.ta, c.tb, c.M, c.N, c.K, c.alpha, A.data(), lda, b_bits.data(), 0.f,
                      from_bits.data(), c.N);
  EXPECT_EQ(from_floats, from_bits);
}

INSTANTIATE_TEST_SUITE_P(Shapes, Bf16GemmTest,
                         ::testing::Values(Case{CblasNoTrans, CblasNoTrans, 7, 5, 33, 0, 1.f, 0.f},
                                           Case{CblasNoTrans, CblasTrans, 64, 24, 96, 0, 1.f, 0.f},
                                           Case{CblasTrans, CblasNoTrans, 24, 40, 64, 0, 1.f, 1.f},
                                           Case{CblasTrans, CblasTrans, 9, 17, 31, 0, -0.5f, 0.25f},
                                           Case{CblasNoTrans, CblasNoTrans, 12, 20, 48, 3, 2.f,
                                                1.f},
                                           Case{CblasTrans, CblasTrans, 16, 16, 16, 5, 1.f, 0.f}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           const Case& c = info.param;
                           return std::string(c.ta == CblasNoTrans ? "N" : "T") +
                                  (c.tb == CblasNoTrans ? "N" : "T") + "_" + std::to_string(c.M) +
                                  "x" + std::to_string(c.N) + "x" + std::to_string(c.K) +
                                  (c.pad ? "_ld" : "") + (c.beta != 0.f ? "_beta" : "");
                         });

TEST(Bf16GemmCpuTest, Bf16MathFollowsTheIsaOneDnnUses) {
#ifdef USE_DNNL
  // The flag in /proc/cpuinfo and oneDNN's view agree unless DNNL_MAX_CPU_ISA limits it.
  if (std::getenv("DNNL_MAX_CPU_ISA")) GTEST_SKIP() << "DNNL_MAX_CPU_ISA is set";
  std::ifstream cpuinfo("/proc/cpuinfo");
  const std::string text((std::istreambuf_iterator<char>(cpuinfo)), {});
  const bool listed =
      text.find(" avx512_bf16") != std::string::npos || text.find(" amx_bf16") != std::string::npos;
  EXPECT_EQ(CpuHasBf16Math(), listed) << CpuBf16Explanation();
#else
  EXPECT_FALSE(CpuHasBf16Math());
  EXPECT_EQ(CpuBf16Explanation(), "this build has no oneDNN");
#endif
}

}  // namespace caffe
