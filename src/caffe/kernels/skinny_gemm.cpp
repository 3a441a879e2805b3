// Legend: M rows of A and C (<= 16), N columns of C, K the inner dimension. Lanes: 8 floats.
#include "caffe/kernels/skinny_gemm.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "caffe/util/cpu_threads.hpp"

namespace caffe {

namespace {

// B must be big enough that streaming it dominates; smaller products stay with OpenBLAS.
constexpr long kSkinnyMinBValues = 1L << 18;

typedef float Lanes __attribute__((vector_size(32)));
constexpr int kFloatsPerLanes = 8;

inline Lanes LoadLanes(const float* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

inline float SumLanes(Lanes v) {
  float sum = 0;
  for (int i = 0; i < kFloatsPerLanes; ++i) sum += v[i];
  return sum;
}

// NT: dots of RB rows of B against RA rows of A, all in registers (RB * RA accumulators).
template <int RB, int RA>
void DotBlock(const float* const* b, const float* const* a, int K, float sums[RB][RA]) {
  Lanes acc[RB][RA] = {};
  int k = 0;
  for (; k + kFloatsPerLanes <= K; k += kFloatsPerLanes) {
    Lanes av[RA];
    for (int j = 0; j < RA; ++j) av[j] = LoadLanes(a[j] + k);
    for (int i = 0; i < RB; ++i) {
      const Lanes bv = LoadLanes(b[i] + k);
      for (int j = 0; j < RA; ++j) acc[i][j] += bv * av[j];
    }
  }
  for (int i = 0; i < RB; ++i) {
    for (int j = 0; j < RA; ++j) {
      float sum = SumLanes(acc[i][j]);
      for (int kk = k; kk < K; ++kk) sum += b[i][kk] * a[j][kk];
      sums[i][j] = sum;
    }
  }
}

// NN: the columns [n0, n0 + width) of C for all M rows, four rows of B at a time, so each C
// value is loaded and stored once per four products. At holds A transposed (K x M).
void NNStrip(int M, int N, int K, const float* At, const float* B, float* acc, int n0, int width) {
  for (int m = 0; m < M; ++m) std::fill(acc + m * width, acc + (m + 1) * width, 0.f);
  int k = 0;
  for (; k + 4 <= K; k += 4) {
    const float* b0 = B + static_cast<long>(k) * N + n0;
    const float* b1 = b0 + N;
    const float* b2 = b1 + N;
    const float* b3 = b2 + N;
    const float* a = At + static_cast<long>(k) * M;
    for (int m = 0; m < M; ++m) {
      const float a0 = a[m], a1 = a[M + m], a2 = a[2 * M + m], a3 = a[3 * M + m];
      float* c = acc + m * width;
#pragma omp simd
      for (int j = 0; j < width; ++j) c[j] += a0 * b0[j] + a1 * b1[j] + a2 * b2[j] + a3 * b3[j];
    }
  }
  for (; k < K; ++k) {
    const float* b = B + static_cast<long>(k) * N + n0;
    const float* a = At + static_cast<long>(k) * M;
    for (int m = 0; m < M; ++m) {
      float* c = acc + m * width;
      const float am = a[m];
#pragma omp simd
      for (int j = 0; j < width; ++j) c[j] += am * b[j];
    }
  }
}

inline void StoreScaled(float alpha, float beta, float value, float* c) {
  *c = alpha * value + (beta == 0 ? 0.f : beta * *c);
}

}  // namespace

bool SkinnyGemmApplies(int M, int N, int K) {
  return M >= 1 && M <= kSkinnyGemmMaxRows && static_cast<long>(N) * K >= kSkinnyMinBValues;
}

void SkinnyGemmNT(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                  float* C) {
  CHECK_LE(M, kSkinnyGemmMaxRows);
  constexpr int kRowsB = 4, kRowsA = 3;
  // Each B row is read from memory once (for the first group of A's rows) and from cache after.
#pragma omp parallel for schedule(static)
  for (int n0 = 0; n0 < N; n0 += kRowsB) {
    const float* b[kRowsB];
    const int nb = std::min(kRowsB, N - n0);
    for (int i = 0; i < kRowsB; ++i) b[i] = B + static_cast<long>(n0 + std::min(i, nb - 1)) * K;
    for (int m0 = 0; m0 < M; m0 += kRowsA) {
      const float* a[kRowsA];
      const int ma = std::min(kRowsA, M - m0);
      for (int j = 0; j < kRowsA; ++j) a[j] = A + static_cast<long>(m0 + std::min(j, ma - 1)) * K;
      float sums[kRowsB][kRowsA];
      DotBlock<kRowsB, kRowsA>(b, a, K, sums);
      for (int i = 0; i < nb; ++i) {
        for (int j = 0; j < ma; ++j) {
          StoreScaled(alpha, beta, sums[i][j], C + static_cast<long>(m0 + j) * N + n0 + i);
        }
      }
    }
  }
}

void SkinnyGemmNN(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                  float* C) {
  CHECK_LE(M, kSkinnyGemmMaxRows);
  // Strips of C narrow enough that their M rows and four rows of B stay in L1.
  constexpr int kStrip = 512;
  std::vector<float> At(static_cast<size_t>(K) * M);
  for (int m = 0; m < M; ++m) {
    for (int k = 0; k < K; ++k)
      At[static_cast<size_t>(k) * M + m] = A[static_cast<long>(m) * K + k];
  }
  const int strips = (N + kStrip - 1) / kStrip;
#pragma omp parallel
  {
    std::vector<float> acc(static_cast<size_t>(kSkinnyGemmMaxRows) * kStrip);
#pragma omp for schedule(static)
    for (int strip = 0; strip < strips; ++strip) {
      const int n0 = strip * kStrip;
      const int width = std::min(kStrip, N - n0);
      NNStrip(M, N, K, At.data(), B, acc.data(), n0, width);
      for (int m = 0; m < M; ++m) {
        const float* from = acc.data() + m * width;
        float* to = C + static_cast<long>(m) * N + n0;
        for (int j = 0; j < width; ++j) StoreScaled(alpha, beta, from[j], to + j);
      }
    }
  }
}

}  // namespace caffe
