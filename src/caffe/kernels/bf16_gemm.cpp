#include "caffe/kernels/bf16_gemm.hpp"

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/kernels/thread_scratch.hpp"
#include "caffe/util/float16.hpp"
#ifdef USE_DNNL
#include "caffe/kernels/dnnl_context.hpp"
#endif

namespace caffe {

#ifdef USE_DNNL

namespace {

bool HasIsa(dnnl::cpu_isa have, dnnl::cpu_isa want) {
  // oneDNN's ISA values are bit sets, each holding the ones it extends.
  const auto want_bits = static_cast<unsigned>(want);
  return (static_cast<unsigned>(have) & want_bits) == want_bits;
}

// A bf16 copy of an op x cols row-major array with row stride `ld`, packed (stride cols).
uint16_t* PackBf16(const float* src, int rows, int cols, int ld, int slot) {
  const size_t count = static_cast<size_t>(rows) * cols;
  auto* packed =
      static_cast<uint16_t*>(ThreadScratch(ScratchUser::kBf16Gemm, slot, count * sizeof(uint16_t)));
  if (ld == cols) {
    FloatsToBf16(src, count, packed);
  } else {
    for (int r = 0; r < rows; ++r) {
      FloatsToBf16(src + static_cast<size_t>(r) * ld, cols, packed + static_cast<size_t>(r) * cols);
    }
  }
  return packed;
}

using Key = std::tuple<bool, bool, int, int, int, int, float, float>;

}  // namespace

bool CpuHasBf16Math() {
  static const bool has = HasIsa(dnnl::get_effective_cpu_isa(), dnnl::cpu_isa::avx512_core_bf16);
  return has;
}

std::string CpuBf16Explanation() {
  return CpuHasBf16Math() ? "this CPU has AVX-512 BF16 or AMX"
                          : "this CPU has no AVX-512 BF16 or AMX instructions (as oneDNN sees "
                            "it; DNNL_MAX_CPU_ISA limits what it uses)";
}

void caffe_cpu_gemm_bf16(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K,
                         float alpha, const float* A, int lda, const float* B, int ldb, float beta,
                         float* C, int ldc) {
  const bool tb = trans_b != CblasNoTrans;
  const uint16_t* b = tb ? PackBf16(B, N, K, ldb, 1) : PackBf16(B, K, N, ldb, 1);
  caffe_cpu_gemm_bf16(trans_a, trans_b, M, N, K, alpha, A, lda, b, beta, C, ldc);
}

void caffe_cpu_gemm_bf16(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int M, int N, int K,
                         float alpha, const float* A, int lda, const uint16_t* b, float beta,
                         float* C, int ldc) {
  using dnnl::memory;
  const bool ta = trans_a != CblasNoTrans, tb = trans_b != CblasNoTrans;
  // Packed, A is M x K (or, transposed, stored K x M) and B K x N (or N x K); the matmul reads
  // the transposed ones through strides.
  const uint16_t* a = ta ? PackBf16(A, K, M, lda, 0) : PackBf16(A, M, K, lda, 0);
  const memory::desc a_md({M, K}, memory::data_type::bf16,
                          ta ? memory::dims{1, M} : memory::dims{K, 1});
  const memory::desc b_md({K, N}, memory::data_type::bf16,
                          tb ? memory::dims{1, K} : memory::dims{N, 1});
  const memory::desc c_md({M, N}, memory::data_type::f32, memory::dims{ldc, 1});
  thread_local std::map<Key, dnnl::matmul> primitives;
  const Key key{ta, tb, M, N, K, ldc, alpha, beta};
  auto found = primitives.find(key);
  if (found == primitives.end()) {
    dnnl::primitive_attr attr;
    if (alpha != 1.f) attr.set_output_scales(0, {alpha});
    if (beta != 0.f) {
      dnnl::post_ops sum;
      sum.append_sum(beta);
      attr.set_post_ops(sum);
    }
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), attr, DnnlEngine());
    found = primitives.emplace(key, dnnl::matmul(pd)).first;
  }
  const dnnl::engine& engine = DnnlEngine();
  found->second.execute(DnnlStream(),
                        {{DNNL_ARG_SRC, memory(a_md, engine, const_cast<uint16_t*>(a))},
                         {DNNL_ARG_WEIGHTS, memory(b_md, engine, const_cast<uint16_t*>(b))},
                         {DNNL_ARG_DST, memory(c_md, engine, C)}});
  DnnlStream().wait();
}

#else  // !USE_DNNL

bool CpuHasBf16Math() { return false; }

std::string CpuBf16Explanation() { return "this build has no oneDNN"; }

void caffe_cpu_gemm_bf16(CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, int, int, int, float, const float*, int,
                         const float*, int, float, float*, int) {
  CAFFE_THROW() << "bf16 arithmetic needs a build with oneDNN";
}

void caffe_cpu_gemm_bf16(CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, int, int, int, float, const float*, int,
                         const uint16_t*, float, float*, int) {
  CAFFE_THROW() << "bf16 arithmetic needs a build with oneDNN";
}

#endif  // USE_DNNL

}  // namespace caffe
