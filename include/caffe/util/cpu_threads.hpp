// Threading policy on the CPU. Caffe parallelises its own loops with OpenMP (over images in
// convolution, over planes in pooling, over elements in large element-wise operations) and links
// the OpenMP build of OpenBLAS, which runs single-threaded inside those parallel loops and uses all
// threads for a GEMM called outside them. One pool of threads, never oversubscribed.
// The thread count is OMP_NUM_THREADS (or OPENBLAS_NUM_THREADS), else the number of cores.
#ifndef CAFFE_UTIL_CPU_THREADS_HPP_
#define CAFFE_UTIL_CPU_THREADS_HPP_

#include <algorithm>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace caffe {

/// Loops over fewer elements than this are not worth waking the other threads for.
constexpr int kParallelMinElements = 1 << 15;

/// The number of threads a parallel loop uses.
inline int caffe_max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

/// The index of the calling thread inside a parallel loop (0 outside one).
inline int caffe_thread_index() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

/// The number of threads of the running parallel region (1 outside one).
inline int caffe_team_size() {
#ifdef _OPENMP
  return omp_get_num_threads();
#else
  return 1;
#endif
}

/// Per-channel loops (Scale, PReLU) split long planes and rows into pieces of at most this many
/// values, so that one large plane or a scalar's single row still spreads over the threads.
constexpr int kLoopPieceSize = 1 << 14;

/// `planes` planes of `inner` values each (N x C planes of an N x C x S blob), as pieces of at
/// most kLoopPieceSize values of one plane: a loop over the pieces runs each piece's inner loop
/// on one channel (plane(piece) % C), which vectorizes.
struct PlanePieces {
  PlanePieces(long planes, int inner)
      : inner(inner),
        per_plane((inner + kLoopPieceSize - 1) / kLoopPieceSize),
        total(planes * per_plane) {}
  long plane(long piece) const { return piece / per_plane; }
  int begin(long piece) const { return static_cast<int>(piece % per_plane) * kLoopPieceSize; }
  int size(long piece) const { return std::min(inner - begin(piece), kLoopPieceSize); }
  long offset(long piece) const { return plane(piece) * inner + begin(piece); }
  int inner;
  int per_plane;
  long total;  // the number of pieces
};

/// Runs body(i) for i in [0, n), split across the threads when n is large enough. Inside another
/// parallel loop it runs serially (nested parallelism is off).
template <typename Body>
inline void caffe_parallel_for(int n, Body body) {
#pragma omp parallel for schedule(static) if (n >= kParallelMinElements)
  for (int i = 0; i < n; ++i) body(i);
}

}  // namespace caffe

#endif  // CAFFE_UTIL_CPU_THREADS_HPP_
