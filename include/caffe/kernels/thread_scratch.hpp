// Grow-only memory per thread for one call's temporaries: a convolution's staged copies and
// scratchpad (oneDNN's) or its tiles (Winograd's), bf16 copies of GEMM operands. Layers run one at
// a time on a thread, so a net holds the largest call's worth of each buffer, not a copy per
// layer. Each user numbers its buffers from 0; users' buffers are apart.
#ifndef CAFFE_KERNELS_THREAD_SCRATCH_HPP_
#define CAFFE_KERNELS_THREAD_SCRATCH_HPP_

#include <cstddef>

namespace caffe {

enum class ScratchUser { kConvolution, kBf16Gemm, kUsers };

/// The first of ScratchUser::kConvolution's buffers. A convolution call runs oneDNN's primitives,
/// which stage their input, weights and output there, or Winograd's kernels, which keep their
/// tiles, transformed filters and products there: never both, so the two share the memory.
enum ConvolutionScratch { kConvolutionSrc, kConvolutionWeights, kConvolutionDst };

/// The most buffers one user numbers.
constexpr int kScratchSlots = 8;

/// At least `bytes` bytes, 64-byte aligned, of buffer `slot` (< kScratchSlots) of `user` on this
/// thread. What was written there stays until the buffer grows (a larger request).
void* ThreadScratch(ScratchUser user, int slot, size_t bytes);

}  // namespace caffe

#endif  // CAFFE_KERNELS_THREAD_SCRATCH_HPP_
