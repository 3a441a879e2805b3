// The CUDA emulator's cuBLAS (docs/CUDA_EMU.md): the routines Caffe calls, in cuBLAS's column-major
// form and with its argument checks, computed by the host's BLAS on the emulated device memory.
#ifndef CAFFE_CUDA_EMU_CUBLAS_V2_H_
#define CAFFE_CUDA_EMU_CUBLAS_V2_H_

#include <cuda_runtime.h>

enum cublasStatus_t {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_EXECUTION_FAILED = 13,
};

enum cublasOperation_t { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 };
enum cublasMath_t { CUBLAS_DEFAULT_MATH = 0, CUBLAS_PEDANTIC_MATH = 2 };

struct cublasContext;
using cublasHandle_t = cublasContext*;

cublasStatus_t cublasCreate(cublasHandle_t* handle);
cublasStatus_t cublasDestroy(cublasHandle_t handle);
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode);
cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream);
const char* cublasGetStatusString(cublasStatus_t status);

cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k, const float* alpha,
                           const float* A, int lda, const float* B, int ldb, const float* beta,
                           float* C, int ldc);
cublasStatus_t cublasDgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k, const double* alpha,
                           const double* A, int lda, const double* B, int ldb, const double* beta,
                           double* C, int ldc);
cublasStatus_t cublasSgemv(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                           const float* alpha, const float* A, int lda, const float* x, int incx,
                           const float* beta, float* y, int incy);
cublasStatus_t cublasDgemv(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                           const double* alpha, const double* A, int lda, const double* x, int incx,
                           const double* beta, double* y, int incy);
cublasStatus_t cublasSaxpy(cublasHandle_t handle, int n, const float* alpha, const float* x,
                           int incx, float* y, int incy);
cublasStatus_t cublasDaxpy(cublasHandle_t handle, int n, const double* alpha, const double* x,
                           int incx, double* y, int incy);
cublasStatus_t cublasSscal(cublasHandle_t handle, int n, const float* alpha, float* x, int incx);
cublasStatus_t cublasDscal(cublasHandle_t handle, int n, const double* alpha, double* x, int incx);
cublasStatus_t cublasSdot(cublasHandle_t handle, int n, const float* x, int incx, const float* y,
                          int incy, float* result);
cublasStatus_t cublasDdot(cublasHandle_t handle, int n, const double* x, int incx, const double* y,
                          int incy, double* result);
cublasStatus_t cublasSasum(cublasHandle_t handle, int n, const float* x, int incx, float* result);
cublasStatus_t cublasDasum(cublasHandle_t handle, int n, const double* x, int incx, double* result);

#endif  // CAFFE_CUDA_EMU_CUBLAS_V2_H_
