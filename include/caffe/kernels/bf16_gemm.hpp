// Matrix products in bf16 on the CPU, for the layers that compute in 16 bits where a net asks
// (docs/PRECISION.md): the factors are rounded to bf16 (8 significant bits) and the products
// summed in fp32 by oneDNN's matmul, on the CPU's bf16 dot-product instructions (AVX-512 BF16,
// AMX). Without them, or in a build without oneDNN, nothing here runs: nets stay in fp32 and say
// so (CpuHasBf16Math).
#ifndef CAFFE_KERNELS_BF16_GEMM_HPP_
#define CAFFE_KERNELS_BF16_GEMM_HPP_

#include <cblas.h>

#include <cstdint>
#include <string>

namespace caffe {

/// Whether this CPU computes in bf16 in hardware as oneDNN sees it (DNNL_MAX_CPU_ISA can hide
/// the instructions); false in a build without oneDNN.
bool CpuHasBf16Math();
/// Why CpuHasBf16Math says what it says, as a clause for messages ("this CPU has no ...").
std::string CpuBf16Explanation();

/// caffe_cpu_gemm_ld with A and B rounded to bf16: C = alpha * op(A) * op(B) + beta * C,
/// row-major, op(A) M x K, op(B) K x N, C in fp32. Only where CpuHasBf16Math().
void caffe_cpu_gemm_bf16(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K,
                         float alpha, const float* A, int lda, const float* B, int ldb, float beta,
                         float* C, int ldc);
/// The same with B already in bf16 (FloatsToBf16), packed: a layer's weights, rounded once for
/// the forward pass and the backward pass after it.
void caffe_cpu_gemm_bf16(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K,
                         float alpha, const float* A, int lda, const uint16_t* B, float beta,
                         float* C, int ldc);

}  // namespace caffe

#endif  // CAFFE_KERNELS_BF16_GEMM_HPP_
