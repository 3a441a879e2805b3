// Dense math on host arrays: BLAS (OpenBLAS through CBLAS) and the element-wise helpers layers and
// solvers use. Names and argument orders follow BVLC's caffe_* functions so layer code reads the
// same. Random fills draw from the calling thread's Caffe::rng().
#ifndef CAFFE_KERNELS_MATH_FUNCTIONS_HPP_
#define CAFFE_KERNELS_MATH_FUNCTIONS_HPP_

#include <cblas.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "caffe/common.hpp"

namespace caffe {

/// C = alpha * op(A) * op(B) + beta * C, row-major; op(A) is M x K, op(B) is K x N.
template <typename Dtype>
void caffe_cpu_gemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K,
                    Dtype alpha, const Dtype* A, const Dtype* B, Dtype beta, Dtype* C);

/// caffe_cpu_gemm with explicit leading dimensions (row strides) of A, B and C, for products on
/// sub-matrices (a column tile of a wider matrix).
template <typename Dtype>
void caffe_cpu_gemm_ld(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K,
                       Dtype alpha, const Dtype* A, int lda, const Dtype* B, int ldb, Dtype beta,
                       Dtype* C, int ldc);

/// y = alpha * op(A) * x + beta * y, A is M x N row-major.
template <typename Dtype>
void caffe_cpu_gemv(CBLAS_TRANSPOSE trans_a, int M, int N, Dtype alpha, const Dtype* A,
                    const Dtype* x, Dtype beta, Dtype* y);

/// Y += alpha * X
template <typename Dtype>
void caffe_axpy(int N, Dtype alpha, const Dtype* X, Dtype* Y);
/// Y = alpha * X + beta * Y
template <typename Dtype>
void caffe_cpu_axpby(int N, Dtype alpha, const Dtype* X, Dtype beta, Dtype* Y);

template <typename Dtype>
void caffe_copy(int N, const Dtype* X, Dtype* Y);
template <typename Dtype>
void caffe_set(int N, Dtype alpha, Dtype* X);
inline void caffe_memset(size_t N, int alpha, void* X) { std::memset(X, alpha, N); }

template <typename Dtype>
void caffe_add_scalar(int N, Dtype alpha, Dtype* X);
/// X *= alpha
template <typename Dtype>
void caffe_scal(int N, Dtype alpha, Dtype* X);
/// y = alpha * x
template <typename Dtype>
void caffe_cpu_scale(int n, Dtype alpha, const Dtype* x, Dtype* y);

// Element-wise: y[i] = a[i] op b[i].
template <typename Dtype>
void caffe_add(int N, const Dtype* a, const Dtype* b, Dtype* y);
template <typename Dtype>
void caffe_sub(int N, const Dtype* a, const Dtype* b, Dtype* y);
template <typename Dtype>
void caffe_mul(int N, const Dtype* a, const Dtype* b, Dtype* y);
template <typename Dtype>
void caffe_div(int N, const Dtype* a, const Dtype* b, Dtype* y);

// Element-wise functions: y[i] = f(a[i]).
template <typename Dtype>
void caffe_sqr(int N, const Dtype* a, Dtype* y);
template <typename Dtype>
void caffe_sqrt(int N, const Dtype* a, Dtype* y);
template <typename Dtype>
void caffe_powx(int N, const Dtype* a, Dtype b, Dtype* y);
template <typename Dtype>
void caffe_exp(int N, const Dtype* a, Dtype* y);
template <typename Dtype>
void caffe_log(int N, const Dtype* a, Dtype* y);
template <typename Dtype>
void caffe_abs(int N, const Dtype* a, Dtype* y);
/// y[i] = sign(x[i]) in {-1, 0, 1}
template <typename Dtype>
void caffe_cpu_sign(int N, const Dtype* x, Dtype* y);

template <typename Dtype>
Dtype caffe_cpu_dot(int n, const Dtype* x, const Dtype* y);
template <typename Dtype>
Dtype caffe_cpu_strided_dot(int n, const Dtype* x, int incx, const Dtype* y, int incy);
/// Sum of absolute values.
template <typename Dtype>
Dtype caffe_cpu_asum(int n, const Dtype* x);

// Random fills. Uniform on [a, b]; Gaussian N(mu, sigma^2); Bernoulli(p) as 0/1 ints.
template <typename Dtype>
void caffe_rng_uniform(int n, Dtype a, Dtype b, Dtype* r);
template <typename Dtype>
void caffe_rng_gaussian(int n, Dtype mu, Dtype sigma, Dtype* r);
template <typename Dtype>
void caffe_rng_bernoulli(int n, Dtype p, int* r);
template <typename Dtype>
void caffe_rng_bernoulli(int n, Dtype p, unsigned int* r);

/// A uniformly distributed 32-bit integer from this thread's generator.
unsigned int caffe_rng_rand();

/// The next representable value after b, towards +inf (used to make uniform ranges half-open).
template <typename Dtype>
Dtype caffe_nextafter(Dtype b);

/// Limits OpenBLAS (and our own parallel loops) to n threads; n <= 0 keeps the default.
void caffe_set_num_threads(int n);
int caffe_num_threads();

#ifndef CPU_ONLY
// The same operations on device arrays (math_functions.cu): cuBLAS for BLAS, kernels for the
// element-wise ones, cuRAND for random fills. All run on the calling thread's current GPU, in
// order with its other work; results that come back to the host (dot, asum) wait for it.

/// C = alpha * op(A) * op(B) + beta * C, row-major like caffe_cpu_gemm.
template <typename Dtype>
void caffe_gpu_gemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K,
                    Dtype alpha, const Dtype* A, const Dtype* B, Dtype beta, Dtype* C);
/// caffe_gpu_gemm with explicit leading dimensions (row strides) of A, B and C, for products on
/// sub-matrices, like caffe_cpu_gemm_ld.
template <typename Dtype>
void caffe_gpu_gemm_ld(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K,
                       Dtype alpha, const Dtype* A, int lda, const Dtype* B, int ldb, Dtype beta,
                       Dtype* C, int ldc);
/// y = alpha * op(A) * x + beta * y; A is M x N, row-major.
template <typename Dtype>
void caffe_gpu_gemv(CBLAS_TRANSPOSE trans_a, int M, int N, Dtype alpha, const Dtype* A,
                    const Dtype* x, Dtype beta, Dtype* y);
template <typename Dtype>
void caffe_gpu_axpy(int N, Dtype alpha, const Dtype* X, Dtype* Y);
/// Y = alpha * X + beta * Y.
template <typename Dtype>
void caffe_gpu_axpby(int N, Dtype alpha, const Dtype* X, Dtype beta, Dtype* Y);
/// Copies N bytes between any two of host and device memory.
void caffe_gpu_memcpy(size_t N, const void* X, void* Y);
/// Copies N elements between device arrays (no-op when X == Y).
template <typename Dtype>
void caffe_gpu_copy(int N, const Dtype* X, Dtype* Y);
template <typename Dtype>
void caffe_gpu_set(int N, Dtype alpha, Dtype* X);
void caffe_gpu_memset(size_t N, int alpha, void* X);
template <typename Dtype>
void caffe_gpu_add_scalar(int N, Dtype alpha, Dtype* X);
template <typename Dtype>
void caffe_gpu_scal(int N, Dtype alpha, Dtype* X);
/// y = alpha * x.
template <typename Dtype>
void caffe_gpu_scale(int n, Dtype alpha, const Dtype* x, Dtype* y);
template <typename Dtype>
void caffe_gpu_add(int N, const Dtype* a, const Dtype* b, Dtype* y);
template <typename Dtype>
void caffe_gpu_sub(int N, const Dtype* a, const Dtype* b, Dtype* y);
template <typename Dtype>
void caffe_gpu_mul(int N, const Dtype* a, const Dtype* b, Dtype* y);
template <typename Dtype>
void caffe_gpu_div(int N, const Dtype* a, const Dtype* b, Dtype* y);
template <typename Dtype>
void caffe_gpu_abs(int N, const Dtype* a, Dtype* y);
template <typename Dtype>
void caffe_gpu_exp(int N, const Dtype* a, Dtype* y);
template <typename Dtype>
void caffe_gpu_log(int N, const Dtype* a, Dtype* y);
template <typename Dtype>
void caffe_gpu_sqr(int N, const Dtype* a, Dtype* y);
template <typename Dtype>
void caffe_gpu_sqrt(int N, const Dtype* a, Dtype* y);
template <typename Dtype>
void caffe_gpu_powx(int N, const Dtype* a, Dtype b, Dtype* y);
/// y = sign(x): -1, 0 or 1.
template <typename Dtype>
void caffe_gpu_sign(int N, const Dtype* x, Dtype* y);
/// y = 1 where x's sign bit is set, else 0.
template <typename Dtype>
void caffe_gpu_sgnbit(int N, const Dtype* x, Dtype* y);
template <typename Dtype>
void caffe_gpu_fabs(int N, const Dtype* x, Dtype* y);
/// *out = x . y (a host value).
template <typename Dtype>
void caffe_gpu_dot(int n, const Dtype* x, const Dtype* y, Dtype* out);
/// *out = sum |x| (a host value).
template <typename Dtype>
void caffe_gpu_asum(int n, const Dtype* x, Dtype* out);
/// Uniform 32-bit integers.
void caffe_gpu_rng_uniform(int n, unsigned int* r);
/// U(a, b), half-open like caffe_rng_uniform.
template <typename Dtype>
void caffe_gpu_rng_uniform(int n, Dtype a, Dtype b, Dtype* r);
template <typename Dtype>
void caffe_gpu_rng_gaussian(int n, Dtype mu, Dtype sigma, Dtype* r);
#endif  // CPU_ONLY

}  // namespace caffe

#endif  // CAFFE_KERNELS_MATH_FUNCTIONS_HPP_
