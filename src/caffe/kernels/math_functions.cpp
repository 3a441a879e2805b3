#include "caffe/kernels/math_functions.hpp"

#include <algorithm>
#include <limits>
#include <random>

#include "caffe/kernels/skinny_gemm.hpp"
#include "caffe/util/cpu_threads.hpp"

namespace caffe {

template <>
void caffe_cpu_gemm<float>(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K,
                           float alpha, const float* A, const float* B, float beta, float* C) {
  // A few rows against a big B (fully connected layers at small batch): see skinny_gemm.hpp.
  if (trans_a == CblasNoTrans && SkinnyGemmApplies(M, N, K)) {
    if (trans_b == CblasTrans) {
      SkinnyGemmNT(M, N, K, alpha, A, B, beta, C);
    } else {
      SkinnyGemmNN(M, N, K, alpha, A, B, beta, C);
    }
    return;
  }
  int lda = (trans_a == CblasNoTrans) ? K : M;
  int ldb = (trans_b == CblasNoTrans) ? N : K;
  cblas_sgemm(CblasRowMajor, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, N);
}

template <>
void caffe_cpu_gemm<double>(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K,
                            double alpha, const double* A, const double* B, double beta,
                            double* C) {
  int lda = (trans_a == CblasNoTrans) ? K : M;
  int ldb = (trans_b == CblasNoTrans) ? N : K;
  cblas_dgemm(CblasRowMajor, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, N);
}

template <>
void caffe_cpu_gemm_ld<float>(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K,
                              float alpha, const float* A, int lda, const float* B, int ldb,
                              float beta, float* C, int ldc) {
  cblas_sgemm(CblasRowMajor, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <>
void caffe_cpu_gemm_ld<double>(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N,
                               int K, double alpha, const double* A, int lda, const double* B,
                               int ldb, double beta, double* C, int ldc) {
  cblas_dgemm(CblasRowMajor, trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

template <>
void caffe_cpu_gemv<float>(CBLAS_TRANSPOSE trans_a, int M, int N, float alpha, const float* A,
                           const float* x, float beta, float* y) {
  cblas_sgemv(CblasRowMajor, trans_a, M, N, alpha, A, N, x, 1, beta, y, 1);
}

template <>
void caffe_cpu_gemv<double>(CBLAS_TRANSPOSE trans_a, int M, int N, double alpha, const double* A,
                            const double* x, double beta, double* y) {
  cblas_dgemv(CblasRowMajor, trans_a, M, N, alpha, A, N, x, 1, beta, y, 1);
}

template <>
void caffe_axpy<float>(int N, float alpha, const float* X, float* Y) {
  cblas_saxpy(N, alpha, X, 1, Y, 1);
}
template <>
void caffe_axpy<double>(int N, double alpha, const double* X, double* Y) {
  cblas_daxpy(N, alpha, X, 1, Y, 1);
}

template <typename Dtype>
void caffe_cpu_axpby(int N, Dtype alpha, const Dtype* X, Dtype beta, Dtype* Y) {
  caffe_parallel_for(N, [=](int i) { Y[i] = alpha * X[i] + beta * Y[i]; });
}

template <typename Dtype>
void caffe_copy(int N, const Dtype* X, Dtype* Y) {
  if (X == Y || N <= 0) return;
  if (N < kParallelMinElements) {  // the common small copy: no parallel region at all
    std::memcpy(Y, X, sizeof(Dtype) * N);
    return;
  }
  // Large copies (a blob's diff handed on by Eltwise, Split, Concat) in one slice per thread:
  // one core's loads and stores do not use the machine's memory bandwidth.
#pragma omp parallel
  {
    const int thread = caffe_thread_index(), count = caffe_team_size();
    const long begin = static_cast<long>(N) * thread / count;
    const long end = static_cast<long>(N) * (thread + 1) / count;
    std::memcpy(Y + begin, X + begin, sizeof(Dtype) * (end - begin));
  }
}

template <typename Dtype>
void caffe_set(int N, Dtype alpha, Dtype* X) {
  if (alpha == 0) {
    std::memset(X, 0, sizeof(Dtype) * N);
    return;
  }
  std::fill(X, X + N, alpha);
}

template <typename Dtype>
void caffe_add_scalar(int N, Dtype alpha, Dtype* X) {
  caffe_parallel_for(N, [=](int i) { X[i] += alpha; });
}

template <typename Dtype>
void caffe_scal(int N, Dtype alpha, Dtype* X) {
  caffe_parallel_for(N, [=](int i) { X[i] *= alpha; });
}

template <typename Dtype>
void caffe_cpu_scale(int n, Dtype alpha, const Dtype* x, Dtype* y) {
  caffe_parallel_for(n, [=](int i) { y[i] = alpha * x[i]; });
}

#define CAFFE_BINARY_OP(name, expression)                       \
  template <typename Dtype>                                     \
  void name(int N, const Dtype* a, const Dtype* b, Dtype* y) {  \
    caffe_parallel_for(N, [=](int i) { y[i] = (expression); }); \
  }
CAFFE_BINARY_OP(caffe_add, a[i] + b[i])
CAFFE_BINARY_OP(caffe_sub, a[i] - b[i])
CAFFE_BINARY_OP(caffe_mul, a[i] * b[i])
CAFFE_BINARY_OP(caffe_div, a[i] / b[i])
#undef CAFFE_BINARY_OP

#define CAFFE_UNARY_OP(name, expression)                        \
  template <typename Dtype>                                     \
  void name(int N, const Dtype* a, Dtype* y) {                  \
    caffe_parallel_for(N, [=](int i) { y[i] = (expression); }); \
  }
CAFFE_UNARY_OP(caffe_sqr, a[i] * a[i])
CAFFE_UNARY_OP(caffe_sqrt, std::sqrt(a[i]))
CAFFE_UNARY_OP(caffe_abs, std::fabs(a[i]))
CAFFE_UNARY_OP(caffe_cpu_sign, static_cast<Dtype>((Dtype(0) < a[i]) - (a[i] < Dtype(0))))
#undef CAFFE_UNARY_OP

template <typename Dtype>
void caffe_powx(int N, const Dtype* a, Dtype b, Dtype* y) {
  caffe_parallel_for(N, [=](int i) { y[i] = std::pow(a[i], b); });
}

template <>
float caffe_cpu_strided_dot<float>(int n, const float* x, int incx, const float* y, int incy) {
  return cblas_sdot(n, x, incx, y, incy);
}
template <>
double caffe_cpu_strided_dot<double>(int n, const double* x, int incx, const double* y, int incy) {
  return cblas_ddot(n, x, incx, y, incy);
}

template <typename Dtype>
Dtype caffe_cpu_dot(int n, const Dtype* x, const Dtype* y) {
  return caffe_cpu_strided_dot(n, x, 1, y, 1);
}

template <>
float caffe_cpu_asum<float>(int n, const float* x) {
  return cblas_sasum(n, x, 1);
}
template <>
double caffe_cpu_asum<double>(int n, const double* x) {
  return cblas_dasum(n, x, 1);
}

template <typename Dtype>
Dtype caffe_nextafter(Dtype b) {
  return std::nextafter(b, std::numeric_limits<Dtype>::max());
}

unsigned int caffe_rng_rand() { return static_cast<unsigned int>(Caffe::rng_stream()()); }

template <typename Dtype>
void caffe_rng_uniform(int n, Dtype a, Dtype b, Dtype* r) {
  CHECK_GE(n, 0);
  CHECK(r);
  CHECK_LE(a, b);
  std::uniform_real_distribution<Dtype> distribution(a, caffe_nextafter<Dtype>(b));
  auto& generator = Caffe::rng_stream();
  for (int i = 0; i < n; ++i) r[i] = std::min(distribution(generator), b);
}

template <typename Dtype>
void caffe_rng_gaussian(int n, Dtype mu, Dtype sigma, Dtype* r) {
  CHECK_GE(n, 0);
  CHECK(r);
  CHECK_GT(sigma, 0);
  std::normal_distribution<Dtype> distribution(mu, sigma);
  auto& generator = Caffe::rng_stream();
  for (int i = 0; i < n; ++i) r[i] = distribution(generator);
}

template <typename Dtype, typename Int>
static void BernoulliFill(int n, Dtype p, Int* r) {
  CHECK_GE(n, 0);
  CHECK(r);
  CHECK_GE(p, 0);
  CHECK_LE(p, 1);
  std::bernoulli_distribution distribution(p);
  auto& generator = Caffe::rng_stream();
  for (int i = 0; i < n; ++i) r[i] = distribution(generator) ? 1 : 0;
}

template <typename Dtype>
void caffe_rng_bernoulli(int n, Dtype p, int* r) {
  BernoulliFill(n, p, r);
}
template <typename Dtype>
void caffe_rng_bernoulli(int n, Dtype p, unsigned int* r) {
  BernoulliFill(n, p, r);
}

#define INSTANTIATE_MATH(Dtype)                                                  \
  template void caffe_cpu_axpby<Dtype>(int, Dtype, const Dtype*, Dtype, Dtype*); \
  template void caffe_copy<Dtype>(int, const Dtype*, Dtype*);                    \
  template void caffe_set<Dtype>(int, Dtype, Dtype*);                            \
  template void caffe_add_scalar<Dtype>(int, Dtype, Dtype*);                     \
  template void caffe_scal<Dtype>(int, Dtype, Dtype*);                           \
  template void caffe_cpu_scale<Dtype>(int, Dtype, const Dtype*, Dtype*);        \
  template void caffe_add<Dtype>(int, const Dtype*, const Dtype*, Dtype*);       \
  template void caffe_sub<Dtype>(int, const Dtype*, const Dtype*, Dtype*);       \
  template void caffe_mul<Dtype>(int, const Dtype*, const Dtype*, Dtype*);       \
  template void caffe_div<Dtype>(int, const Dtype*, const Dtype*, Dtype*);       \
  template void caffe_sqr<Dtype>(int, const Dtype*, Dtype*);                     \
  template void caffe_sqrt<Dtype>(int, const Dtype*, Dtype*);                    \
  template void caffe_abs<Dtype>(int, const Dtype*, Dtype*);                     \
  template void caffe_cpu_sign<Dtype>(int, const Dtype*, Dtype*);                \
  template void caffe_powx<Dtype>(int, const Dtype*, Dtype, Dtype*);             \
  template Dtype caffe_cpu_dot<Dtype>(int, const Dtype*, const Dtype*);          \
  template Dtype caffe_nextafter<Dtype>(Dtype);                                  \
  template void caffe_rng_uniform<Dtype>(int, Dtype, Dtype, Dtype*);             \
  template void caffe_rng_gaussian<Dtype>(int, Dtype, Dtype, Dtype*);            \
  template void caffe_rng_bernoulli<Dtype>(int, Dtype, int*);                    \
  template void caffe_rng_bernoulli<Dtype>(int, Dtype, unsigned int*);
INSTANTIATE_MATH(float)
INSTANTIATE_MATH(double)
#undef INSTANTIATE_MATH

template void caffe_copy<int>(int, const int*, int*);
template void caffe_copy<unsigned int>(int, const unsigned int*, unsigned int*);
template void caffe_set<int>(int, int, int*);

}  // namespace caffe

namespace caffe {

void caffe_set_num_threads(int n) {
  if (n <= 0) return;
  openblas_set_num_threads(n);
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
}

int caffe_num_threads() { return caffe_max_threads(); }

}  // namespace caffe
