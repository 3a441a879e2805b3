// The CUDA emulator's cuBLAS: argument checks as cuBLAS makes them (it returns
// CUBLAS_STATUS_INVALID_VALUE for a bad size or leading dimension), a check that every matrix and
// vector is device memory of the handle's GPU and inside its allocation, then the host's BLAS.
// Scalars (alpha, beta, results) are host memory: cuBLAS's default pointer mode. Routines that
// write device memory are queued on the handle's stream (streams.hpp), with alpha and beta as they
// were at the call; those that return a result to the host run the stream's work first.
#include <cblas.h>
#include <cublas_v2.h>

#include <algorithm>
#include <cstdio>

#include "emu_state.hpp"
#include "streams.hpp"

struct cublasContext {
  int device;
  cudaStream_t stream = nullptr;
};

namespace caffe_emu {
namespace {

// Elements spanned by a vector of n elements with stride inc.
size_t VectorSpan(int n, int inc) { return n <= 0 ? 0 : 1 + static_cast<size_t>(n - 1) * inc; }

// Elements spanned by a column-major rows x cols matrix with leading dimension ld.
size_t MatrixSpan(int rows, int cols, int ld) {
  return rows <= 0 || cols <= 0 ? 0 : static_cast<size_t>(ld) * (cols - 1) + rows;
}

// Checks that `elements` of T at `pointer` are device memory the handle's GPU can use.
template <typename T>
bool DeviceOperand(const char* routine, const char* name, const T* pointer, size_t elements) {
  return elements == 0 || UsableOnDevice(routine, pointer, elements * sizeof(T), name);
}

CBLAS_TRANSPOSE Transpose(cublasOperation_t op) {
  return op == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
}

void Gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha, const float* A,
          int lda, const float* B, int ldb, float beta, float* C, int ldc) {
  cblas_sgemm(CblasColMajor, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
void Gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha,
          const double* A, int lda, const double* B, int ldb, double beta, double* C, int ldc) {
  cblas_dgemm(CblasColMajor, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
void Gemv(CBLAS_TRANSPOSE t, int m, int n, float alpha, const float* A, int lda, const float* x,
          int incx, float beta, float* y, int incy) {
  cblas_sgemv(CblasColMajor, t, m, n, alpha, A, lda, x, incx, beta, y, incy);
}
void Gemv(CBLAS_TRANSPOSE t, int m, int n, double alpha, const double* A, int lda, const double* x,
          int incx, double beta, double* y, int incy) {
  cblas_dgemv(CblasColMajor, t, m, n, alpha, A, lda, x, incx, beta, y, incy);
}
void Axpy(int n, float alpha, const float* x, int incx, float* y, int incy) {
  cblas_saxpy(n, alpha, x, incx, y, incy);
}
void Axpy(int n, double alpha, const double* x, int incx, double* y, int incy) {
  cblas_daxpy(n, alpha, x, incx, y, incy);
}
void Scal(int n, float alpha, float* x, int incx) { cblas_sscal(n, alpha, x, incx); }
void Scal(int n, double alpha, double* x, int incx) { cblas_dscal(n, alpha, x, incx); }
float Dot(int n, const float* x, int incx, const float* y, int incy) {
  return cblas_sdot(n, x, incx, y, incy);
}
double Dot(int n, const double* x, int incx, const double* y, int incy) {
  return cblas_ddot(n, x, incx, y, incy);
}
float Asum(int n, const float* x, int incx) { return cblas_sasum(n, x, incx); }
double Asum(int n, const double* x, int incx) { return cblas_dasum(n, x, incx); }

// A handle works on the GPU that was current when it was made.
bool ValidHandle(const char* routine, cublasHandle_t handle) {
  return handle != nullptr && MadeOnCurrentDevice(routine, "cuBLAS handle", handle->device);
}

template <typename T>
cublasStatus_t GemmChecked(const char* routine, cublasHandle_t handle, cublasOperation_t ta,
                           cublasOperation_t tb, int m, int n, int k, const T* alpha, const T* A,
                           int lda, const T* B, int ldb, const T* beta, T* C, int ldc) {
  if (!ValidHandle(routine, handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  const int a_rows = ta == CUBLAS_OP_N ? m : k, a_cols = ta == CUBLAS_OP_N ? k : m;
  const int b_rows = tb == CUBLAS_OP_N ? k : n, b_cols = tb == CUBLAS_OP_N ? n : k;
  if (m < 0 || n < 0 || k < 0 || lda < std::max(1, a_rows) || ldb < std::max(1, b_rows) ||
      ldc < std::max(1, m)) {
    std::fprintf(stderr, "CUDA emulator: %s: invalid m=%d n=%d k=%d lda=%d ldb=%d ldc=%d\n",
                 routine, m, n, k, lda, ldb, ldc);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  if (!HostScalar(routine, "alpha", alpha) || !HostScalar(routine, "beta", beta) ||
      !DeviceOperand(routine, "A", A, k == 0 ? 0 : MatrixSpan(a_rows, a_cols, lda)) ||
      !DeviceOperand(routine, "B", B, k == 0 ? 0 : MatrixSpan(b_rows, b_cols, ldb)) ||
      !DeviceOperand(routine, "C", C, MatrixSpan(m, n, ldc))) {
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
  Issue(handle->stream, [=, a = *alpha, b = *beta] {
    DeviceAccess access;
    Gemm(Transpose(ta), Transpose(tb), m, n, k, a, A, lda, B, ldb, b, C, ldc);
  });
  return CUBLAS_STATUS_SUCCESS;
}

template <typename T>
cublasStatus_t GemvChecked(const char* routine, cublasHandle_t handle, cublasOperation_t trans,
                           int m, int n, const T* alpha, const T* A, int lda, const T* x, int incx,
                           const T* beta, T* y, int incy) {
  if (!ValidHandle(routine, handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || lda < std::max(1, m) || incx <= 0 || incy <= 0) {
    std::fprintf(stderr, "CUDA emulator: %s: invalid m=%d n=%d lda=%d incx=%d incy=%d\n", routine,
                 m, n, lda, incx, incy);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  const int x_length = trans == CUBLAS_OP_N ? n : m, y_length = trans == CUBLAS_OP_N ? m : n;
  if (!HostScalar(routine, "alpha", alpha) || !HostScalar(routine, "beta", beta) ||
      !DeviceOperand(routine, "A", A, MatrixSpan(m, n, lda)) ||
      !DeviceOperand(routine, "x", x, VectorSpan(x_length, incx)) ||
      !DeviceOperand(routine, "y", y, VectorSpan(y_length, incy))) {
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
  Issue(handle->stream, [=, a = *alpha, b = *beta] {
    DeviceAccess access;
    Gemv(Transpose(trans), m, n, a, A, lda, x, incx, b, y, incy);
  });
  return CUBLAS_STATUS_SUCCESS;
}

template <typename T>
cublasStatus_t AxpyChecked(const char* routine, cublasHandle_t handle, int n, const T* alpha,
                           const T* x, int incx, T* y, int incy) {
  if (!ValidHandle(routine, handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (n <= 0) return CUBLAS_STATUS_SUCCESS;
  if (!HostScalar(routine, "alpha", alpha) ||
      !DeviceOperand(routine, "x", x, VectorSpan(n, incx)) ||
      !DeviceOperand(routine, "y", y, VectorSpan(n, incy))) {
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
  Issue(handle->stream, [=, a = *alpha] {
    DeviceAccess access;
    Axpy(n, a, x, incx, y, incy);
  });
  return CUBLAS_STATUS_SUCCESS;
}

template <typename T>
cublasStatus_t ScalChecked(const char* routine, cublasHandle_t handle, int n, const T* alpha, T* x,
                           int incx) {
  if (!ValidHandle(routine, handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (n <= 0 || incx <= 0) return CUBLAS_STATUS_SUCCESS;
  if (!HostScalar(routine, "alpha", alpha) ||
      !DeviceOperand(routine, "x", x, VectorSpan(n, incx))) {
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
  Issue(handle->stream, [=, a = *alpha] {
    DeviceAccess access;
    Scal(n, a, x, incx);
  });
  return CUBLAS_STATUS_SUCCESS;
}

template <typename T>
cublasStatus_t DotChecked(const char* routine, cublasHandle_t handle, int n, const T* x, int incx,
                          const T* y, int incy, T* result) {
  if (!ValidHandle(routine, handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!HostScalar(routine, "result", result)) return CUBLAS_STATUS_EXECUTION_FAILED;
  *result = 0;
  if (n <= 0) return CUBLAS_STATUS_SUCCESS;
  if (!DeviceOperand(routine, "x", x, VectorSpan(n, incx)) ||
      !DeviceOperand(routine, "y", y, VectorSpan(n, incy))) {
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
  Drain(handle->stream);
  T value;
  {
    DeviceAccess access;
    value = Dot(n, x, incx, y, incy);
  }
  *result = value;
  return CUBLAS_STATUS_SUCCESS;
}

template <typename T>
cublasStatus_t AsumChecked(const char* routine, cublasHandle_t handle, int n, const T* x, int incx,
                           T* result) {
  if (!ValidHandle(routine, handle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!HostScalar(routine, "result", result)) return CUBLAS_STATUS_EXECUTION_FAILED;
  *result = 0;
  if (n <= 0 || incx <= 0) return CUBLAS_STATUS_SUCCESS;
  if (!DeviceOperand(routine, "x", x, VectorSpan(n, incx))) return CUBLAS_STATUS_EXECUTION_FAILED;
  Drain(handle->stream);
  T value;
  {
    DeviceAccess access;
    value = Asum(n, x, incx);
  }
  *result = value;
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace
}  // namespace caffe_emu

using namespace caffe_emu;  // NOLINT: the C API below only forwards to it

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  *handle = new cublasContext{CurrentDevice()};
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  (void)mode;
  return handle == nullptr ? CUBLAS_STATUS_NOT_INITIALIZED : CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!KnownStream(stream)) return CUBLAS_STATUS_INVALID_VALUE;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

const char* cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

cublasStatus_t cublasSgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k, const float* alpha,
                           const float* A, int lda, const float* B, int ldb, const float* beta,
                           float* C, int ldc) {
  return GemmChecked("cublasSgemm", handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                     ldc);
}
cublasStatus_t cublasDgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k, const double* alpha,
                           const double* A, int lda, const double* B, int ldb, const double* beta,
                           double* C, int ldc) {
  return GemmChecked("cublasDgemm", handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C,
                     ldc);
}
cublasStatus_t cublasSgemv(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                           const float* alpha, const float* A, int lda, const float* x, int incx,
                           const float* beta, float* y, int incy) {
  return GemvChecked("cublasSgemv", handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}
cublasStatus_t cublasDgemv(cublasHandle_t handle, cublasOperation_t trans, int m, int n,
                           const double* alpha, const double* A, int lda, const double* x, int incx,
                           const double* beta, double* y, int incy) {
  return GemvChecked("cublasDgemv", handle, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}
cublasStatus_t cublasSaxpy(cublasHandle_t handle, int n, const float* alpha, const float* x,
                           int incx, float* y, int incy) {
  return AxpyChecked("cublasSaxpy", handle, n, alpha, x, incx, y, incy);
}
cublasStatus_t cublasDaxpy(cublasHandle_t handle, int n, const double* alpha, const double* x,
                           int incx, double* y, int incy) {
  return AxpyChecked("cublasDaxpy", handle, n, alpha, x, incx, y, incy);
}
cublasStatus_t cublasSscal(cublasHandle_t handle, int n, const float* alpha, float* x, int incx) {
  return ScalChecked("cublasSscal", handle, n, alpha, x, incx);
}
cublasStatus_t cublasDscal(cublasHandle_t handle, int n, const double* alpha, double* x, int incx) {
  return ScalChecked("cublasDscal", handle, n, alpha, x, incx);
}
cublasStatus_t cublasSdot(cublasHandle_t handle, int n, const float* x, int incx, const float* y,
                          int incy, float* result) {
  return DotChecked("cublasSdot", handle, n, x, incx, y, incy, result);
}
cublasStatus_t cublasDdot(cublasHandle_t handle, int n, const double* x, int incx, const double* y,
                          int incy, double* result) {
  return DotChecked("cublasDdot", handle, n, x, incx, y, incy, result);
}
cublasStatus_t cublasSasum(cublasHandle_t handle, int n, const float* x, int incx, float* result) {
  return AsumChecked("cublasSasum", handle, n, x, incx, result);
}
cublasStatus_t cublasDasum(cublasHandle_t handle, int n, const double* x, int incx,
                           double* result) {
  return AsumChecked("cublasDasum", handle, n, x, incx, result);
}
