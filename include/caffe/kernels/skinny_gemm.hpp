// GEMM with a short left operand: C (M x N) = alpha * A (M x K) * op(B) + beta * C for M <= 16,
// the shape of fully connected layers at small batch (CaffeNet fc6 at batch 10: 10 x 9216 times
// 9216 x 4096). OpenBLAS runs these far below its speed on square products; here B is streamed
// once, split over the threads, with the few rows of A in cache and register-blocked. Row-major,
// as caffe_cpu_gemm, which calls these where SkinnyGemmApplies.
#ifndef CAFFE_KERNELS_SKINNY_GEMM_HPP_
#define CAFFE_KERNELS_SKINNY_GEMM_HPP_

#include <glog/logging.h>

namespace caffe {

/// The largest M the skinny kernels take.
constexpr int kSkinnyGemmMaxRows = 16;

/// Whether the skinny kernels should run this product (M small, B large).
bool SkinnyGemmApplies(int M, int N, int K);

/// C = alpha * A * B^T + beta * C; A is M x K, B is N x K.
void SkinnyGemmNT(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                  float* C);
/// C = alpha * A * B + beta * C; A is M x K, B is K x N.
void SkinnyGemmNN(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                  float* C);

}  // namespace caffe

#endif  // CAFFE_KERNELS_SKINNY_GEMM_HPP_
