// Device math (math_functions.hpp, the caffe_gpu_* half): cuBLAS for BLAS on the row-major arrays
// Caffe uses (cuBLAS is column-major, so a row-major product is computed as its transpose),
// grid-stride kernels for the element-wise operations, cuRAND for random fills.
#include <cmath>

#include "caffe/common.hpp"
#include "caffe/kernels/math_functions.hpp"

namespace caffe {

namespace {

cublasOperation_t CublasOp(CBLAS_TRANSPOSE trans) {
  return trans == CblasNoTrans ? CUBLAS_OP_N : CUBLAS_OP_T;
}

cublasStatus_t CublasGemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                          const float* alpha, const float* A, int lda, const float* B, int ldb,
                          const float* beta, float* C, int ldc) {
  return cublasSgemm(Caffe::cublas_handle(), ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
cublasStatus_t CublasGemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                          const double* alpha, const double* A, int lda, const double* B, int ldb,
                          const double* beta, double* C, int ldc) {
  return cublasDgemm(Caffe::cublas_handle(), ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
cublasStatus_t CublasGemv(cublasOperation_t t, int m, int n, const float* alpha, const float* A,
                          int lda, const float* x, const float* beta, float* y) {
  return cublasSgemv(Caffe::cublas_handle(), t, m, n, alpha, A, lda, x, 1, beta, y, 1);
}
cublasStatus_t CublasGemv(cublasOperation_t t, int m, int n, const double* alpha, const double* A,
                          int lda, const double* x, const double* beta, double* y) {
  return cublasDgemv(Caffe::cublas_handle(), t, m, n, alpha, A, lda, x, 1, beta, y, 1);
}
cublasStatus_t CublasAxpy(int n, const float* alpha, const float* x, float* y) {
  return cublasSaxpy(Caffe::cublas_handle(), n, alpha, x, 1, y, 1);
}
cublasStatus_t CublasAxpy(int n, const double* alpha, const double* x, double* y) {
  return cublasDaxpy(Caffe::cublas_handle(), n, alpha, x, 1, y, 1);
}
cublasStatus_t CublasScal(int n, const float* alpha, float* x) {
  return cublasSscal(Caffe::cublas_handle(), n, alpha, x, 1);
}
cublasStatus_t CublasScal(int n, const double* alpha, double* x) {
  return cublasDscal(Caffe::cublas_handle(), n, alpha, x, 1);
}
cublasStatus_t CublasDot(int n, const float* x, const float* y, float* out) {
  return cublasSdot(Caffe::cublas_handle(), n, x, 1, y, 1, out);
}
cublasStatus_t CublasDot(int n, const double* x, const double* y, double* out) {
  return cublasDdot(Caffe::cublas_handle(), n, x, 1, y, 1, out);
}
cublasStatus_t CublasAsum(int n, const float* x, float* out) {
  return cublasSasum(Caffe::cublas_handle(), n, x, 1, out);
}
cublasStatus_t CublasAsum(int n, const double* x, double* out) {
  return cublasDasum(Caffe::cublas_handle(), n, x, 1, out);
}

// Element-wise kernels: one functor per operation, one launcher for all of them.
template <typename Op, typename Dtype>
__global__ void UnaryKernel(const int n, const Dtype* a, Dtype* y, Op op) {
  CUDA_KERNEL_LOOP(i, n) { y[i] = op(a[i]); }
}
template <typename Op, typename Dtype>
__global__ void BinaryKernel(const int n, const Dtype* a, const Dtype* b, Dtype* y, Op op) {
  CUDA_KERNEL_LOOP(i, n) { y[i] = op(a[i], b[i]); }
}
template <typename Op, typename Dtype>
void LaunchUnary(int n, const Dtype* a, Dtype* y, Op op) {
  if (n <= 0) return;
  UnaryKernel<<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(n, a, y, op);
  CUDA_POST_KERNEL_CHECK;
}
template <typename Op, typename Dtype>
void LaunchBinary(int n, const Dtype* a, const Dtype* b, Dtype* y, Op op) {
  if (n <= 0) return;
  BinaryKernel<<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(n, a, b, y, op);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
struct SetOp {
  Dtype value;
  __device__ Dtype operator()(Dtype) const { return value; }
};
template <typename Dtype>
struct ScaleOp {
  Dtype alpha;
  __device__ Dtype operator()(Dtype x) const { return alpha * x; }
};
template <typename Dtype>
struct AddScalarOp {
  Dtype value;
  __device__ Dtype operator()(Dtype x) const { return x + value; }
};
template <typename Dtype>
struct AbsOp {
  __device__ Dtype operator()(Dtype x) const { return fabs(x); }
};
template <typename Dtype>
struct ExpOp {
  __device__ Dtype operator()(Dtype x) const { return exp(x); }
};
template <typename Dtype>
struct LogOp {
  __device__ Dtype operator()(Dtype x) const { return log(x); }
};
template <typename Dtype>
struct SqrOp {
  __device__ Dtype operator()(Dtype x) const { return x * x; }
};
template <typename Dtype>
struct SqrtOp {
  __device__ Dtype operator()(Dtype x) const { return sqrt(x); }
};
template <typename Dtype>
struct PowxOp {
  Dtype power;
  __device__ Dtype operator()(Dtype x) const { return pow(x, power); }
};
template <typename Dtype>
struct SignOp {
  __device__ Dtype operator()(Dtype x) const { return (Dtype(0) < x) - (x < Dtype(0)); }
};
template <typename Dtype>
struct SgnbitOp {
  __device__ Dtype operator()(Dtype x) const { return signbit(x) ? Dtype(1) : Dtype(0); }
};
template <typename Dtype>
struct AddOp {
  __device__ Dtype operator()(Dtype a, Dtype b) const { return a + b; }
};
template <typename Dtype>
struct SubOp {
  __device__ Dtype operator()(Dtype a, Dtype b) const { return a - b; }
};
template <typename Dtype>
struct MulOp {
  __device__ Dtype operator()(Dtype a, Dtype b) const { return a * b; }
};
template <typename Dtype>
struct DivOp {
  __device__ Dtype operator()(Dtype a, Dtype b) const { return a / b; }
};
// y = alpha * x + beta * y, as one pass (cuBLAS would need a scal and an axpy).
template <typename Dtype>
struct AxpbyOp {
  Dtype alpha, beta;
  __device__ Dtype operator()(Dtype x, Dtype y) const { return alpha * x + beta * y; }
};

// Maps cuRAND's (0, 1] to [a, b): the value b itself is folded onto a, as the CPU path's
// half-open range never returns it.
template <typename Dtype>
__global__ void ScaleUniformKernel(const int n, const Dtype a, const Dtype b, Dtype* r) {
  CUDA_KERNEL_LOOP(i, n) {
    const Dtype value = a + (b - a) * r[i];
    r[i] = value < b ? value : a;
  }
}

curandStatus_t CurandUniform(float* r, int n) {
  return curandGenerateUniform(Caffe::curand_generator(), r, n);
}
curandStatus_t CurandUniform(double* r, int n) {
  return curandGenerateUniformDouble(Caffe::curand_generator(), r, n);
}
curandStatus_t CurandNormal(float* r, int n, float mu, float sigma) {
  return curandGenerateNormal(Caffe::curand_generator(), r, n, mu, sigma);
}
curandStatus_t CurandNormal(double* r, int n, double mu, double sigma) {
  return curandGenerateNormalDouble(Caffe::curand_generator(), r, n, mu, sigma);
}

}  // namespace

template <typename Dtype>
void caffe_gpu_gemm_ld(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K,
                       Dtype alpha, const Dtype* A, int lda, const Dtype* B, int ldb, Dtype beta,
                       Dtype* C, int ldc) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  CUBLAS_CHECK(CublasGemm(CublasOp(trans_b), CublasOp(trans_a), N, M, K, &alpha, B, ldb, A, lda,
                          &beta, C, ldc));
}

template <typename Dtype>
void caffe_gpu_gemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K,
                    Dtype alpha, const Dtype* A, const Dtype* B, Dtype beta, Dtype* C) {
  caffe_gpu_gemm_ld(trans_a, trans_b, M, N, K, alpha, A, trans_a == CblasNoTrans ? K : M, B,
                    trans_b == CblasNoTrans ? N : K, beta, C, N);
}

template <typename Dtype>
void caffe_gpu_gemv(CBLAS_TRANSPOSE trans_a, int M, int N, Dtype alpha, const Dtype* A,
                    const Dtype* x, Dtype beta, Dtype* y) {
  // Row-major M x N A is column-major N x M A^T, so the transposes swap.
  const cublasOperation_t op = trans_a == CblasNoTrans ? CUBLAS_OP_T : CUBLAS_OP_N;
  CUBLAS_CHECK(CublasGemv(op, N, M, &alpha, A, N, x, &beta, y));
}

template <typename Dtype>
void caffe_gpu_axpy(int N, Dtype alpha, const Dtype* X, Dtype* Y) {
  if (N > 0) CUBLAS_CHECK(CublasAxpy(N, &alpha, X, Y));
}

template <typename Dtype>
void caffe_gpu_axpby(int N, Dtype alpha, const Dtype* X, Dtype beta, Dtype* Y) {
  LaunchBinary(N, X, static_cast<const Dtype*>(Y), Y, AxpbyOp<Dtype>{alpha, beta});
}

void caffe_gpu_memcpy(size_t N, const void* X, void* Y) {
  if (X != Y && N > 0) CUDA_CHECK(cudaMemcpy(Y, X, N, cudaMemcpyDefault));
}

template <typename Dtype>
void caffe_gpu_copy(int N, const Dtype* X, Dtype* Y) {
  if (N > 0) caffe_gpu_memcpy(sizeof(Dtype) * N, X, Y);
}

template <typename Dtype>
void caffe_gpu_set(int N, Dtype alpha, Dtype* X) {
  if (N <= 0) return;
  if (alpha == 0) {
    CUDA_CHECK(cudaMemset(X, 0, sizeof(Dtype) * N));
    return;
  }
  LaunchUnary(N, static_cast<const Dtype*>(X), X, SetOp<Dtype>{alpha});
}

void caffe_gpu_memset(size_t N, int alpha, void* X) {
  if (N > 0) CUDA_CHECK(cudaMemset(X, alpha, N));
}

template <typename Dtype>
void caffe_gpu_add_scalar(int N, Dtype alpha, Dtype* X) {
  LaunchUnary(N, static_cast<const Dtype*>(X), X, AddScalarOp<Dtype>{alpha});
}

template <typename Dtype>
void caffe_gpu_scal(int N, Dtype alpha, Dtype* X) {
  if (N > 0) CUBLAS_CHECK(CublasScal(N, &alpha, X));
}

template <typename Dtype>
void caffe_gpu_scale(int n, Dtype alpha, const Dtype* x, Dtype* y) {
  // One pass (BVLC copies, then scales in place: two).
  LaunchUnary(n, x, y, ScaleOp<Dtype>{alpha});
}

template <typename Dtype>
void caffe_gpu_add(int N, const Dtype* a, const Dtype* b, Dtype* y) {
  LaunchBinary(N, a, b, y, AddOp<Dtype>());
}
template <typename Dtype>
void caffe_gpu_sub(int N, const Dtype* a, const Dtype* b, Dtype* y) {
  LaunchBinary(N, a, b, y, SubOp<Dtype>());
}
template <typename Dtype>
void caffe_gpu_mul(int N, const Dtype* a, const Dtype* b, Dtype* y) {
  LaunchBinary(N, a, b, y, MulOp<Dtype>());
}
template <typename Dtype>
void caffe_gpu_div(int N, const Dtype* a, const Dtype* b, Dtype* y) {
  LaunchBinary(N, a, b, y, DivOp<Dtype>());
}
template <typename Dtype>
void caffe_gpu_abs(int N, const Dtype* a, Dtype* y) {
  LaunchUnary(N, a, y, AbsOp<Dtype>());
}
template <typename Dtype>
void caffe_gpu_exp(int N, const Dtype* a, Dtype* y) {
  LaunchUnary(N, a, y, ExpOp<Dtype>());
}
template <typename Dtype>
void caffe_gpu_log(int N, const Dtype* a, Dtype* y) {
  LaunchUnary(N, a, y, LogOp<Dtype>());
}
template <typename Dtype>
void caffe_gpu_sqr(int N, const Dtype* a, Dtype* y) {
  LaunchUnary(N, a, y, SqrOp<Dtype>());
}
template <typename Dtype>
void caffe_gpu_sqrt(int N, const Dtype* a, Dtype* y) {
  LaunchUnary(N, a, y, SqrtOp<Dtype>());
}
template <typename Dtype>
void caffe_gpu_powx(int N, const Dtype* a, Dtype b, Dtype* y) {
  LaunchUnary(N, a, y, PowxOp<Dtype>{b});
}
template <typename Dtype>
void caffe_gpu_sign(int N, const Dtype* x, Dtype* y) {
  LaunchUnary(N, x, y, SignOp<Dtype>());
}
template <typename Dtype>
void caffe_gpu_sgnbit(int N, const Dtype* x, Dtype* y) {
  LaunchUnary(N, x, y, SgnbitOp<Dtype>());
}
template <typename Dtype>
void caffe_gpu_fabs(int N, const Dtype* x, Dtype* y) {
  LaunchUnary(N, x, y, AbsOp<Dtype>());
}

template <typename Dtype>
void caffe_gpu_dot(int n, const Dtype* x, const Dtype* y, Dtype* out) {
  *out = 0;
  if (n > 0) CUBLAS_CHECK(CublasDot(n, x, y, out));
}

template <typename Dtype>
void caffe_gpu_asum(int n, const Dtype* x, Dtype* out) {
  *out = 0;
  if (n > 0) CUBLAS_CHECK(CublasAsum(n, x, out));
}

void caffe_gpu_rng_uniform(int n, unsigned int* r) {
  if (n > 0) CURAND_CHECK(curandGenerate(Caffe::curand_generator(), r, n));
}

template <typename Dtype>
void caffe_gpu_rng_uniform(int n, Dtype a, Dtype b, Dtype* r) {
  CAFFE_CHECK(a <= b) << "uniform range [" << a << ", " << b << ") is empty";
  if (n <= 0) return;
  CURAND_CHECK(CurandUniform(r, n));
  ScaleUniformKernel<<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(n, a, b, r);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void caffe_gpu_rng_gaussian(int n, Dtype mu, Dtype sigma, Dtype* r) {
  CAFFE_CHECK(sigma > 0) << "gaussian standard deviation must be positive, got " << sigma;
  if (n <= 0) return;
  // cuRAND draws normals in pairs: an odd count gets its last value from a pair of its own.
  const int even = n / 2 * 2;
  if (even > 0) CURAND_CHECK(CurandNormal(r, even, mu, sigma));
  if (even < n) {
    Dtype* pair = nullptr;
    CUDA_CHECK(cudaMalloc(&pair, 2 * sizeof(Dtype)));
    CURAND_CHECK(CurandNormal(pair, 2, mu, sigma));
    CUDA_CHECK(cudaMemcpy(r + even, pair, sizeof(Dtype), cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaFree(pair));
  }
}

#define INSTANTIATE_GPU_MATH(Dtype)                                                              \
  template void caffe_gpu_gemm<Dtype>(CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, int, int, int, Dtype,    \
                                      const Dtype*, const Dtype*, Dtype, Dtype*);                \
  template void caffe_gpu_gemm_ld<Dtype>(CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, int, int, int, Dtype, \
                                         const Dtype*, int, const Dtype*, int, Dtype, Dtype*,    \
                                         int);                                                   \
  template void caffe_gpu_gemv<Dtype>(CBLAS_TRANSPOSE, int, int, Dtype, const Dtype*,            \
                                      const Dtype*, Dtype, Dtype*);                              \
  template void caffe_gpu_axpy<Dtype>(int, Dtype, const Dtype*, Dtype*);                         \
  template void caffe_gpu_axpby<Dtype>(int, Dtype, const Dtype*, Dtype, Dtype*);                 \
  template void caffe_gpu_copy<Dtype>(int, const Dtype*, Dtype*);                                \
  template void caffe_gpu_set<Dtype>(int, Dtype, Dtype*);                                        \
  template void caffe_gpu_add_scalar<Dtype>(int, Dtype, Dtype*);                                 \
  template void caffe_gpu_scal<Dtype>(int, Dtype, Dtype*);                                       \
  template void caffe_gpu_scale<Dtype>(int, Dtype, const Dtype*, Dtype*);                        \
  template void caffe_gpu_add<Dtype>(int, const Dtype*, const Dtype*, Dtype*);                   \
  template void caffe_gpu_sub<Dtype>(int, const Dtype*, const Dtype*, Dtype*);                   \
  template void caffe_gpu_mul<Dtype>(int, const Dtype*, const Dtype*, Dtype*);                   \
  template void caffe_gpu_div<Dtype>(int, const Dtype*, const Dtype*, Dtype*);                   \
  template void caffe_gpu_abs<Dtype>(int, const Dtype*, Dtype*);                                 \
  template void caffe_gpu_exp<Dtype>(int, const Dtype*, Dtype*);                                 \
  template void caffe_gpu_log<Dtype>(int, const Dtype*, Dtype*);                                 \
  template void caffe_gpu_sqr<Dtype>(int, const Dtype*, Dtype*);                                 \
  template void caffe_gpu_sqrt<Dtype>(int, const Dtype*, Dtype*);                                \
  template void caffe_gpu_powx<Dtype>(int, const Dtype*, Dtype, Dtype*);                         \
  template void caffe_gpu_sign<Dtype>(int, const Dtype*, Dtype*);                                \
  template void caffe_gpu_sgnbit<Dtype>(int, const Dtype*, Dtype*);                              \
  template void caffe_gpu_fabs<Dtype>(int, const Dtype*, Dtype*);                                \
  template void caffe_gpu_dot<Dtype>(int, const Dtype*, const Dtype*, Dtype*);                   \
  template void caffe_gpu_asum<Dtype>(int, const Dtype*, Dtype*);                                \
  template void caffe_gpu_rng_uniform<Dtype>(int, Dtype, Dtype, Dtype*);                         \
  template void caffe_gpu_rng_gaussian<Dtype>(int, Dtype, Dtype, Dtype*)

INSTANTIATE_GPU_MATH(float);
INSTANTIATE_GPU_MATH(double);

}  // namespace caffe
