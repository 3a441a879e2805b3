// The caffe_gpu_* math functions against their caffe_cpu_* / caffe_* counterparts on the same
// inputs: BLAS in every transpose combination, element-wise operations, reductions, and the
// random fills' ranges and moments. Sizes span several blocks and are not multiples of a warp.
// Skips without a GPU; in a CPU-only build the functions do not exist and one test says so.
#include <algorithm>
#include <cmath>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/test/gpu_layer_check.hpp"

namespace caffe {

template <typename Dtype>
class GpuMathFunctionsTest : public GpuLayerTest<Dtype> {
 protected:
  static constexpr int kCount = 1237;

  // Two inputs of kCount values: a in N(0, 1), b in U(0.5, 2) (safe to divide by, log, sqrt).
  GpuMathFunctionsTest() : a_({kCount}), b_({kCount}), y_({kCount}) {
    FillGaussian(&a_, 11);
    FillUniform(&b_, 12, Dtype(0.5), Dtype(2));
  }

  GpuTolerance Tolerance() const {
    GpuTolerance tolerance;
    tolerance.abs = sizeof(Dtype) == sizeof(float) ? 1e-6 : 1e-14;
    tolerance.rel = sizeof(Dtype) == sizeof(float) ? 1e-5 : 1e-12;
    return tolerance;
  }
  // Compares `y_` (written on the device) with `expected` (computed on the host).
  void ExpectDeviceResult(const char* what, const std::vector<Dtype>& expected) {
    gpu_check_detail::ExpectClose<Dtype>(what, kCount, expected.data(), y_.cpu_data(), Tolerance());
  }

  Blob<Dtype> a_, b_, y_;
};
TYPED_TEST_SUITE(GpuMathFunctionsTest, TestDtypes);

#ifdef CPU_ONLY

TYPED_TEST(GpuMathFunctionsTest, NeedAGpuBuild) {
  GTEST_SKIP() << "CPU-only build: there are no GPU math functions to test";
}

#else

TYPED_TEST(GpuMathFunctionsTest, ElementwiseMatchTheHost) {
  using Dtype = TypeParam;
  const int n = this->kCount;
  const Dtype* a = this->a_.cpu_data();
  const Dtype* b = this->b_.cpu_data();
  std::vector<Dtype> expected(n);
  const Dtype* ga = this->a_.gpu_data();
  const Dtype* gb = this->b_.gpu_data();
  Dtype* gy = this->y_.mutable_gpu_data();

  caffe_add(n, a, b, expected.data());
  caffe_gpu_add(n, ga, gb, this->y_.mutable_gpu_data());
  this->ExpectDeviceResult("add", expected);
  caffe_sub(n, a, b, expected.data());
  caffe_gpu_sub(n, ga, gb, this->y_.mutable_gpu_data());
  this->ExpectDeviceResult("sub", expected);
  caffe_mul(n, a, b, expected.data());
  caffe_gpu_mul(n, ga, gb, this->y_.mutable_gpu_data());
  this->ExpectDeviceResult("mul", expected);
  caffe_div(n, a, b, expected.data());
  caffe_gpu_div(n, ga, gb, this->y_.mutable_gpu_data());
  this->ExpectDeviceResult("div", expected);
  caffe_abs(n, a, expected.data());
  caffe_gpu_abs(n, ga, this->y_.mutable_gpu_data());
  this->ExpectDeviceResult("abs", expected);
  caffe_exp(n, a, expected.data());
  caffe_gpu_exp(n, ga, this->y_.mutable_gpu_data());
  this->ExpectDeviceResult("exp", expected);
  caffe_log(n, b, expected.data());
  caffe_gpu_log(n, gb, this->y_.mutable_gpu_data());
  this->ExpectDeviceResult("log", expected);
  caffe_sqr(n, a, expected.data());
  caffe_gpu_sqr(n, ga, this->y_.mutable_gpu_data());
  this->ExpectDeviceResult("sqr", expected);
  caffe_sqrt(n, b, expected.data());
  caffe_gpu_sqrt(n, gb, this->y_.mutable_gpu_data());
  this->ExpectDeviceResult("sqrt", expected);
  caffe_powx(n, b, Dtype(1.7), expected.data());
  caffe_gpu_powx(n, gb, Dtype(1.7), this->y_.mutable_gpu_data());
  this->ExpectDeviceResult("powx", expected);
  caffe_cpu_sign(n, a, expected.data());
  caffe_gpu_sign(n, ga, this->y_.mutable_gpu_data());
  this->ExpectDeviceResult("sign", expected);
  caffe_cpu_scale(n, Dtype(-2.5), a, expected.data());
  caffe_gpu_scale(n, Dtype(-2.5), ga, this->y_.mutable_gpu_data());
  this->ExpectDeviceResult("scale", expected);
  for (int i = 0; i < n; ++i) expected[i] = std::signbit(a[i]) ? 1 : 0;
  caffe_gpu_sgnbit(n, ga, this->y_.mutable_gpu_data());
  this->ExpectDeviceResult("sgnbit", expected);

  // In place: y = a, then y += 3, y *= 0.5, y = 2 a + 0.25 y, y = a + y.
  caffe_copy(n, a, expected.data());
  caffe_gpu_copy(n, ga, gy = this->y_.mutable_gpu_data());
  caffe_add_scalar(n, Dtype(3), expected.data());
  caffe_gpu_add_scalar(n, Dtype(3), gy);
  caffe_scal(n, Dtype(0.5), expected.data());
  caffe_gpu_scal(n, Dtype(0.5), gy);
  caffe_cpu_axpby(n, Dtype(2), a, Dtype(0.25), expected.data());
  caffe_gpu_axpby(n, Dtype(2), ga, Dtype(0.25), gy);
  caffe_axpy(n, Dtype(1), a, expected.data());
  caffe_gpu_axpy(n, Dtype(1), ga, gy);
  this->ExpectDeviceResult("in-place chain", expected);

  caffe_set(n, Dtype(0.75), expected.data());
  caffe_gpu_set(n, Dtype(0.75), this->y_.mutable_gpu_data());
  this->ExpectDeviceResult("set", expected);
  caffe_set(n, Dtype(0), expected.data());
  caffe_gpu_set(n, Dtype(0), this->y_.mutable_gpu_data());
  this->ExpectDeviceResult("set zero", expected);
}

TYPED_TEST(GpuMathFunctionsTest, ReductionsMatchTheHost) {
  using Dtype = TypeParam;
  const int n = this->kCount;
  Dtype dot = -1, asum = -1;
  caffe_gpu_dot(n, this->a_.gpu_data(), this->b_.gpu_data(), &dot);
  caffe_gpu_asum(n, this->a_.gpu_data(), &asum);
  const Dtype tolerance = sizeof(Dtype) == sizeof(float) ? 1e-4 : 1e-10;
  const Dtype expected_dot = caffe_cpu_dot(n, this->a_.cpu_data(), this->b_.cpu_data());
  const Dtype expected_asum = caffe_cpu_asum(n, this->a_.cpu_data());
  EXPECT_NEAR(dot, expected_dot, tolerance * std::fabs(expected_dot) + tolerance);
  EXPECT_NEAR(asum, expected_asum, tolerance * expected_asum);
  caffe_gpu_dot(0, this->a_.gpu_data(), this->b_.gpu_data(), &dot);
  EXPECT_EQ(dot, 0);
}

TYPED_TEST(GpuMathFunctionsTest, GemmAndGemvMatchTheHostInEveryTransposition) {
  using Dtype = TypeParam;
  // op(A) is M x K, op(B) is K x N, with sizes that are not multiples of a tile.
  const int M = 37, N = 19, K = 53;
  Blob<Dtype> A({M * K}), B({K * N}), C({M * N}), x({K}), y({M}), xt({M}), yt({K});
  FillGaussian(&A, 21);
  FillGaussian(&B, 22);
  FillGaussian(&C, 23);
  FillGaussian(&x, 24);
  FillGaussian(&xt, 25);
  const GpuTolerance tolerance = this->Tolerance();
  for (CBLAS_TRANSPOSE ta : {CblasNoTrans, CblasTrans}) {
    for (CBLAS_TRANSPOSE tb : {CblasNoTrans, CblasTrans}) {
      std::vector<Dtype> expected(C.cpu_data(), C.cpu_data() + M * N);
      caffe_cpu_gemm<Dtype>(ta, tb, M, N, K, Dtype(1.5), A.cpu_data(), B.cpu_data(), Dtype(0.5),
                            expected.data());
      Blob<Dtype> result;
      result.CopyFrom(C, false, true);
      caffe_gpu_gemm<Dtype>(ta, tb, M, N, K, Dtype(1.5), A.gpu_data(), B.gpu_data(), Dtype(0.5),
                            result.mutable_gpu_data());
      gpu_check_detail::ExpectClose<Dtype>("gemm", M * N, expected.data(), result.cpu_data(),
                                           tolerance);
    }
  }
  // A as M x K: y = A x and yt = A^T xt.
  std::vector<Dtype> expected_y(M, Dtype(0)), expected_yt(K, Dtype(0));
  caffe_cpu_gemv<Dtype>(CblasNoTrans, M, K, Dtype(1), A.cpu_data(), x.cpu_data(), Dtype(0),
                        expected_y.data());
  caffe_cpu_gemv<Dtype>(CblasTrans, M, K, Dtype(1), A.cpu_data(), xt.cpu_data(), Dtype(0),
                        expected_yt.data());
  caffe_gpu_gemv<Dtype>(CblasNoTrans, M, K, Dtype(1), A.gpu_data(), x.gpu_data(), Dtype(0),
                        y.mutable_gpu_data());
  caffe_gpu_gemv<Dtype>(CblasTrans, M, K, Dtype(1), A.gpu_data(), xt.gpu_data(), Dtype(0),
                        yt.mutable_gpu_data());
  gpu_check_detail::ExpectClose<Dtype>("gemv", M, expected_y.data(), y.cpu_data(), tolerance);
  gpu_check_detail::ExpectClose<Dtype>("gemv^T", K, expected_yt.data(), yt.cpu_data(), tolerance);
}

TYPED_TEST(GpuMathFunctionsTest, RandomFillsHaveTheirRangeAndMoments) {
  using Dtype = TypeParam;
  const int n = 100001;  // odd: the gaussian fill's last value comes from a pair of its own
  Blob<Dtype> r({n});
  caffe_gpu_rng_uniform(n, Dtype(-2), Dtype(3), r.mutable_gpu_data());
  const Dtype* values = r.cpu_data();
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    ASSERT_GE(values[i], Dtype(-2));
    ASSERT_LT(values[i], Dtype(3));
    sum += values[i];
  }
  EXPECT_NEAR(sum / n, 0.5, 0.05);
  caffe_gpu_rng_gaussian(n, Dtype(1), Dtype(2), r.mutable_gpu_data());
  values = r.cpu_data();
  double mean = 0, square = 0;
  for (int i = 0; i < n; ++i) mean += values[i];
  mean /= n;
  for (int i = 0; i < n; ++i) square += (values[i] - mean) * (values[i] - mean);
  EXPECT_NEAR(mean, 1, 0.05);
  EXPECT_NEAR(std::sqrt(square / n), 2, 0.05);
  EXPECT_NE(values[n - 1], 0);  // the odd one out was written
  // The same seed draws the same numbers.
  Caffe::set_random_seed(5);
  caffe_gpu_rng_gaussian(n, Dtype(0), Dtype(1), r.mutable_gpu_data());
  const std::vector<Dtype> first(r.cpu_data(), r.cpu_data() + n);
  Caffe::set_random_seed(5);
  caffe_gpu_rng_gaussian(n, Dtype(0), Dtype(1), r.mutable_gpu_data());
  EXPECT_TRUE(std::equal(first.begin(), first.end(), r.cpu_data()));
}

// Past 2^30 elements a grid-stride loop's `i += stride` overflows an int (about one thread per
// element makes the stride about n); CUDA_KERNEL_LOOP must still visit every element once and
// nothing outside. 4.3 GB on the device and on the host, so float only and only where it fits.
TYPED_TEST(GpuMathFunctionsTest, KernelsReachEveryElementOfABlobPastTwoToThe30) {
  using Dtype = TypeParam;
  if (sizeof(Dtype) != sizeof(float)) GTEST_SKIP() << "float is enough (and half the memory)";
  const int n = (1 << 30) + 4099;
  const size_t bytes = static_cast<size_t>(n) * sizeof(Dtype);
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (free_bytes < 2 * bytes) GTEST_SKIP() << "needs " << 2 * bytes << " bytes free on the GPU";
  Blob<Dtype> big({n});
  caffe_gpu_set(n, Dtype(1), big.mutable_gpu_data());         // a kernel (not cudaMemset)
  caffe_gpu_add_scalar(n, Dtype(2), big.mutable_gpu_data());  // another, read-modify-write
  CUDA_CHECK(cudaDeviceSynchronize());
  const Dtype* values = big.cpu_data();
  int wrong = 0, first_wrong = -1;
  for (int i = 0; i < n; ++i) {
    if (values[i] != Dtype(3)) {
      if (first_wrong < 0) first_wrong = i;
      ++wrong;
    }
  }
  EXPECT_EQ(wrong, 0) << "first wrong element " << first_wrong << " of " << n;
}

#endif  // CPU_ONLY

}  // namespace caffe
