#include <cmath>
#include <vector>

#include "caffe/kernels/math_functions.hpp"
#include "caffe/kernels/skinny_gemm.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

// Plain triple loop in double: the reference every GEMM path is checked against.
std::vector<double> ReferenceGemm(bool trans_a, bool trans_b, int M, int N, int K, double alpha,
                                  const std::vector<float>& A, const std::vector<float>& B,
                                  double beta, const std::vector<float>& C) {
  std::vector<double> result(static_cast<size_t>(M) * N);
  for (int m = 0; m < M; ++m) {
    for (int n = 0; n < N; ++n) {
      double sum = 0;
      for (int k = 0; k < K; ++k) {
        const double a =
            trans_a ? A[static_cast<size_t>(k) * M + m] : A[static_cast<size_t>(m) * K + k];
        const double b =
            trans_b ? B[static_cast<size_t>(n) * K + k] : B[static_cast<size_t>(k) * N + n];
        sum += a * b;
      }
      result[static_cast<size_t>(m) * N + n] =
          alpha * sum + beta * C[static_cast<size_t>(m) * N + n];
    }
  }
  return result;
}

void CheckGemm(bool trans_a, bool trans_b, int M, int N, int K, float alpha, float beta) {
  const std::vector<float> A = UniformValues(static_cast<size_t>(M) * K, 1);
  const std::vector<float> B = UniformValues(static_cast<size_t>(K) * N, 2);
  std::vector<float> C = UniformValues(static_cast<size_t>(M) * N, 3);
  const std::vector<double> expected =
      ReferenceGemm(trans_a, trans_b, M, N, K, alpha, A, B, beta, C);
  caffe_cpu_gemm<float>(trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, M,
                        N, K, alpha, A.data(), B.data(), beta, C.data());
  double worst = 0;
  for (size_t i = 0; i < C.size(); ++i) worst = std::max(worst, std::fabs(C[i] - expected[i]));
  // float accumulation over K terms of magnitude <= 1.
  EXPECT_LE(worst, 1e-5 * std::sqrt(static_cast<double>(K)) * 4)
      << "M=" << M << " N=" << N << " K=" << K << " trans_a=" << trans_a << " trans_b=" << trans_b
      << " alpha=" << alpha << " beta=" << beta;
}

}  // namespace

TEST(MathFunctionsTest, GemmMatchesTheReferenceInEveryTransposition) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) CheckGemm(ta, tb, 7, 13, 127, 1.5f, 0.5f);
  }
}

// The skinny kernels take M <= 16 rows against a big B; odd sizes exercise every tail.
TEST(MathFunctionsTest, SkinnyGemmPathsMatchTheReference) {
  const std::pair<int, int> shapes[] = {{263, 1031}, {1031, 263}, {2051, 129}, {65537, 5}};
  for (int M : {1, 3, 4, 10, 16}) {
    for (const auto& [N, K] : shapes) {
      ASSERT_TRUE(SkinnyGemmApplies(M, N, K)) << M << " " << N << " " << K;
      CheckGemm(false, true, M, N, K, 1.f, 0.f);
      CheckGemm(false, false, M, N, K, 0.5f, 2.f);
    }
  }
  EXPECT_FALSE(SkinnyGemmApplies(17, 4096, 4096));
  EXPECT_FALSE(SkinnyGemmApplies(10, 100, 100));
}

TEST(MathFunctionsTest, SkinnyKernelsAgreeWithEachOther) {
  // C = A * B^T through NT, and through NN with B transposed explicitly.
  const int M = 5, N = 300, K = 1000;
  const std::vector<float> A = UniformValues(M * K, 4), B = UniformValues(N * K, 5);
  std::vector<float> Bt(static_cast<size_t>(K) * N);
  for (int n = 0; n < N; ++n) {
    for (int k = 0; k < K; ++k)
      Bt[static_cast<size_t>(k) * N + n] = B[static_cast<size_t>(n) * K + k];
  }
  std::vector<float> nt(M * N), nn(M * N);
  SkinnyGemmNT(M, N, K, 1.f, A.data(), B.data(), 0.f, nt.data());
  SkinnyGemmNN(M, N, K, 1.f, A.data(), Bt.data(), 0.f, nn.data());
  for (int i = 0; i < M * N; ++i) EXPECT_NEAR(nt[i], nn[i], 1e-4);
}

TEST(MathFunctionsTest, ElementwiseOperations) {
  const int n = 70000;  // above the size where loops run in parallel
  std::vector<float> a = UniformValues(n, 6), b = UniformValues(n, 7), y(n);
  caffe_add(n, a.data(), b.data(), y.data());
  for (int i = 0; i < n; i += 997) EXPECT_FLOAT_EQ(y[i], a[i] + b[i]);
  caffe_mul(n, a.data(), b.data(), y.data());
  for (int i = 0; i < n; i += 997) EXPECT_FLOAT_EQ(y[i], a[i] * b[i]);
  caffe_cpu_axpby(n, 2.f, a.data(), 3.f, y.data());
  for (int i = 0; i < n; i += 997) EXPECT_FLOAT_EQ(y[i], 2 * a[i] + 3 * (a[i] * b[i]));
  caffe_cpu_sign(n, a.data(), y.data());
  for (int i = 0; i < n; i += 997) EXPECT_EQ(y[i], a[i] > 0 ? 1.f : (a[i] < 0 ? -1.f : 0.f));
  caffe_powx(n, b.data(), 2.f, y.data());
  for (int i = 0; i < n; i += 997) EXPECT_NEAR(y[i], b[i] * b[i], 1e-6);
  double asum = 0;
  for (float v : a) asum += std::fabs(v);
  // Float sums of 70000 terms round differently by kernel (AVX-512's 16 lanes: 4e-7 relative);
  // one term left out or counted twice would move it by 1.4e-5.
  EXPECT_NEAR(caffe_cpu_asum(n, a.data()), asum, 4e-6 * asum);
}

TEST(MathFunctionsTest, RandomFillsAreReproducibleFromTheSeed) {
  std::vector<float> first(100), second(100);
  Caffe::set_random_seed(77);
  caffe_rng_gaussian<float>(100, 0, 1, first.data());
  Caffe::set_random_seed(77);
  caffe_rng_gaussian<float>(100, 0, 1, second.data());
  EXPECT_EQ(first, second);
  caffe_rng_uniform<float>(100, -2, 3, first.data());
  for (float v : first) {
    EXPECT_GE(v, -2);
    EXPECT_LE(v, 3);
  }
}

TEST(MathFunctionsTest, RngStateSavesAndRestores) {
  Caffe::set_random_seed(5);
  const std::string state = Caffe::rng().SaveState();
  const unsigned first = caffe_rng_rand();
  ASSERT_TRUE(Caffe::rng().LoadState(state));
  EXPECT_EQ(caffe_rng_rand(), first);
  EXPECT_FALSE(Caffe::rng().LoadState("not a generator state"));
}

}  // namespace caffe
