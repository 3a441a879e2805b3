#include "caffe/kernels/denormals.hpp"

#include <atomic>
#include <cstdlib>
#include <string>

#include "caffe/util/environment.hpp"
#include "caffe/util/error.hpp"

#if defined(__x86_64__) || defined(__SSE__)
#include <xmmintrin.h>
#define CAFFE_HAVE_MXCSR 1
#endif

namespace caffe {

namespace {

#ifdef CAFFE_HAVE_MXCSR
constexpr unsigned kFlushToZero = 0x8000;       // MXCSR bit 15: denormal results become 0
constexpr unsigned kDenormalsAreZero = 0x0040;  // MXCSR bit 6: denormal operands read as 0
constexpr unsigned kFlushModes = kFlushToZero | kDenormalsAreZero;
#endif

std::atomic<int> flush_state{-1};  // -1: CAFFE_FLUSH_DENORMALS not read yet; 0 off; 1 on

// Whether this thread has set the modes on the OpenMP threads of its parallel regions.
thread_local bool team_flushes = false;

}  // namespace

bool FlushDenormalsEnabled() {
  const int state = flush_state.load(std::memory_order_relaxed);
  return state < 0 ? ReadFlushDenormalsSetting() : state == 1;
}

bool ReadFlushDenormalsSetting() {
  const bool enabled = FlushDenormalsFromEnvironment();
  SetFlushDenormals(enabled);
  return enabled;
}

void SetFlushDenormals(bool enabled) {
  flush_state.store(enabled ? 1 : 0, std::memory_order_relaxed);
}

bool ThisThreadFlushesDenormals() {
#ifdef CAFFE_HAVE_MXCSR
  return (_mm_getcsr() & kFlushModes) == kFlushModes;
#else
  return false;
#endif
}

ScopedFlushDenormals::ScopedFlushDenormals() {
#ifdef CAFFE_HAVE_MXCSR
  if (!FlushDenormalsEnabled()) return;
  saved_mode_ = _mm_getcsr();
  if ((saved_mode_ & kFlushModes) != kFlushModes) {
    _mm_setcsr(saved_mode_ | kFlushModes);
    changed_ = true;
  }
  if (!team_flushes) {
    // Threads OpenMP creates later copy the creating thread's mode; these exist already.
#pragma omp parallel
    _mm_setcsr(_mm_getcsr() | kFlushModes);
    team_flushes = true;
  }
#endif
}

ScopedFlushDenormals::~ScopedFlushDenormals() {
#ifdef CAFFE_HAVE_MXCSR
  if (changed_) _mm_setcsr(saved_mode_);
#endif
}

}  // namespace caffe
