// Grow-only memory per thread for one call's temporaries: the oneDNN convolution's staged copies
// and scratchpad, Winograd's tiles, bf16 copies of GEMM operands. Layers run one at a time on a
// thread, so a net holds the largest call's worth of each buffer, not a copy per layer. Each user
// numbers its buffers from 0; users' buffers are apart.
#ifndef CAFFE_KERNELS_THREAD_SCRATCH_HPP_
#define CAFFE_KERNELS_THREAD_SCRATCH_HPP_

#include <cstddef>

namespace caffe {

enum class ScratchUser { kDnnlConvolution, kWinograd, kBf16Gemm, kUsers };

/// The most buffers one user numbers.
constexpr int kScratchSlots = 8;

/// At least `bytes` bytes, 64-byte aligned, of buffer `slot` (< kScratchSlots) of `user` on this
/// thread. What was written there stays until the buffer grows (a larger request).
void* ThreadScratch(ScratchUser user, int slot, size_t bytes);

}  // namespace caffe

#endif  // CAFFE_KERNELS_THREAD_SCRATCH_HPP_
