// Per-channel sums over an (outer, channels, inner) array on the GPU, for the layers that reduce
// each channel over the batch and the spatial axes (BatchNorm's statistics and gradients, Scale's
// parameter gradients). Only for .cu files.
//
// Two launches, no atomics, so the order of addition is fixed and results repeat bit for bit:
// ChannelSumsKernel gives each (channel, slice) one thread block that sums its slice in double
// into `partials`, and the caller's per-channel kernel adds the slices with SumChannelSlices.
// Slices (gpu_channel_sums.hpp) keep the grid full when channels are few and long; channels of
// fewer values than a block has threads get one thread each instead. The .cu file launches the
// kernel (the CUDA emulator rewrites launches in .cu files only).
//
// A term is a functor `void operator()(size_t j, int c, double (&sums)[kSums]) const` that adds
// value j (of channel c) to the sums; it may also write element j of an output (each j is visited
// exactly once), which lets a layer compute its element-wise output in the same pass.
// Legend as in gpu_channel_sums.hpp.
#ifndef CAFFE_KERNELS_GPU_CHANNEL_SUMS_CUH_
#define CAFFE_KERNELS_GPU_CHANNEL_SUMS_CUH_

#ifndef CPU_ONLY

#include <cstddef>

#include "caffe/kernels/gpu_block_reduce.cuh"
#include "caffe/kernels/gpu_channel_sums.hpp"
#include "caffe/util/device_alternate.hpp"

namespace caffe {

/// The launch of ChannelSumsKernel for one array: slices of a channel's values per block, or
/// one thread per channel when channels are shorter than a block.
struct ChannelSumsGrid {
  ChannelSumsGrid(int outer, int channels, int inner)
      : outer(outer),
        channels(channels),
        inner(inner),
        per_thread(static_cast<long long>(outer) * inner < kBlockReduceThreads),
        blocks(per_thread ? dim3(CAFFE_GET_BLOCKS(channels))
                          : dim3(channels, ChannelSumSlices(outer, channels, inner))),
        threads(per_thread ? CAFFE_CUDA_NUM_THREADS : kBlockReduceThreads),
        slices(per_thread ? 1 : static_cast<int>(blocks.y)) {}
  int outer;
  int channels;
  int inner;
  bool per_thread;
  dim3 blocks;
  int threads;
  int slices;  // per channel: SumChannelSlices' `slices`
};

/// Sums `term` over every channel's values into `partials`
/// (ChannelSumPartials(outer, channels, inner, kSums) doubles). Launch it, for channels > 0, as
/// ChannelSumsKernel<kSums><<<grid.blocks, grid.threads>>>(grid, term, partials).
/// Sliced, block (c, slice) walks its values k = o * inner + i in steps of the block's size,
/// consecutive threads on consecutive i (coalesced), without a division per value.
template <int kSums, typename Term>
__global__ void ChannelSumsKernel(ChannelSumsGrid grid, Term term, double* partials) {
  const int channels = grid.channels;
  const int inner = grid.inner;
  double sums[kSums] = {};
  if (grid.per_thread) {
    CUDA_KERNEL_LOOP(c, channels) {
      for (int o = 0; o < grid.outer; ++o) {
        for (int i = 0; i < inner; ++i) {
          term((static_cast<size_t>(o) * channels + c) * inner + i, c, sums);
        }
      }
      for (int s = 0; s < kSums; ++s) {
        partials[static_cast<size_t>(c) * kSums + s] = sums[s];
        sums[s] = 0;
      }
    }
    return;  // the whole grid takes this branch: no barrier is skipped
  }
  const int c = blockIdx.x;
  const int slice = blockIdx.y;
  const long long per_channel = static_cast<long long>(grid.outer) * inner;
  const long long end = per_channel * (slice + 1) / gridDim.y;
  long long k = per_channel * slice / gridDim.y + threadIdx.x;
  if (k < end) {
    long long o = k / inner;
    int i = static_cast<int>(k - o * inner);
    const int step_o = static_cast<int>(blockDim.x) / inner;
    const int step_i = static_cast<int>(blockDim.x) % inner;
    for (; k < end; k += blockDim.x) {
      term((static_cast<size_t>(o) * channels + c) * inner + i, c, sums);
      o += step_o;
      i += step_i;
      if (i >= inner) {
        i -= inner;
        ++o;
      }
    }
  }
  for (int s = 0; s < kSums; ++s) {
    const double total = BlockReduce(sums[s], BlockSumOp());
    if (threadIdx.x == 0) partials[(static_cast<size_t>(slice) * channels + c) * kSums + s] = total;
  }
}

#if defined(__CUDACC__) || defined(CAFFE_CUDA_EMU)
/// Channel c's totals from ChannelSumsKernel's partials, slices added in order.
template <int kSums>
__device__ void SumChannelSlices(const double* partials, int slices, int channels, int c,
                                 double (&sums)[kSums]) {
  for (int s = 0; s < kSums; ++s) sums[s] = 0;
  for (int slice = 0; slice < slices; ++slice) {
    for (int s = 0; s < kSums; ++s) {
      sums[s] += partials[(static_cast<size_t>(slice) * channels + c) * kSums + s];
    }
  }
}
#endif

/// out[c] = (accumulate ? out[c] : 0) + factor * channel c's total of sum `which` (of kSums),
/// for a parameter gradient (factor 1) or a mean (factor 1 / values per channel) that
/// ChannelSumsKernel summed. Launch it with <<<CAFFE_GET_BLOCKS(channels),
/// CAFFE_CUDA_NUM_THREADS>>> after ChannelSumsKernel.
template <int kSums, typename Dtype>
__global__ void StoreChannelSumKernel(int channels, int slices, const double* partials, int which,
                                      double factor, bool accumulate, Dtype* out) {
  CUDA_KERNEL_LOOP(c, channels) {
    double sums[kSums];
    SumChannelSlices(partials, slices, channels, c, sums);
    out[c] = static_cast<Dtype>(sums[which] * factor) + (accumulate ? out[c] : Dtype(0));
  }
}

}  // namespace caffe

#endif  // CPU_ONLY
#endif  // CAFFE_KERNELS_GPU_CHANNEL_SUMS_CUH_
