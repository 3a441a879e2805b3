// Copies whose destination is not read soon (a layer's saved input for backward): written around
// the cache with non-temporal stores where the CPU has AVX, so the stores neither read the
// destination's lines in first nor evict the data the layer is working on.
#ifndef CAFFE_KERNELS_STREAM_COPY_HPP_
#define CAFFE_KERNELS_STREAM_COPY_HPP_

#include <cstdint>
#include <type_traits>

#ifdef __AVX__
#include <immintrin.h>
#endif

namespace caffe {

/// dst = src. Only whole 64-byte lines are streamed (a line half streamed, half stored is slow),
/// and only from ranges long enough to be mostly whole lines. Every thread calls
/// caffe_stream_fence() after its last caffe_stream_copy, before dst is read.
template <typename Dtype>
void caffe_stream_copy(const Dtype* src, int n, Dtype* dst) {
  int i = 0;
#ifdef __AVX__
  constexpr int kLineBytes = 64, kMinBytes = 512;
  if (n * sizeof(Dtype) >= kMinBytes) {
    for (; reinterpret_cast<std::uintptr_t>(dst + i) % kLineBytes != 0; ++i) dst[i] = src[i];
    constexpr int kHalfLine = kLineBytes / 2 / sizeof(Dtype);
    for (; i + 2 * kHalfLine <= n; i += 2 * kHalfLine) {
      if constexpr (std::is_same_v<Dtype, float>) {
        _mm256_stream_ps(dst + i, _mm256_loadu_ps(src + i));
        _mm256_stream_ps(dst + i + kHalfLine, _mm256_loadu_ps(src + i + kHalfLine));
      } else {
        _mm256_stream_pd(dst + i, _mm256_loadu_pd(src + i));
        _mm256_stream_pd(dst + i + kHalfLine, _mm256_loadu_pd(src + i + kHalfLine));
      }
    }
  }
#endif
  for (; i < n; ++i) dst[i] = src[i];
}

/// Orders this thread's streamed stores before its later loads and stores.
inline void caffe_stream_fence() {
#ifdef __AVX__
  _mm_sfence();
#endif
}

}  // namespace caffe

#endif  // CAFFE_KERNELS_STREAM_COPY_HPP_
