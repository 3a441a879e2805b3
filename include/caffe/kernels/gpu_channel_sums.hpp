// How per-channel sums on the GPU split their work: the host-side half of gpu_channel_sums.cuh,
// here so that a layer's Reshape (built without nvcc too) can size the partial sums' buffer.
// Legend: an array of (outer, channels, inner) values, channel c's being (o, c, i) for every o, i.
#ifndef CAFFE_KERNELS_GPU_CHANNEL_SUMS_HPP_
#define CAFFE_KERNELS_GPU_CHANNEL_SUMS_HPP_

namespace caffe {

/// Channels are cut into slices so that few channels still fill the GPU (ResNet's first
/// BatchNorm: 64 channels of 64 x 112 x 112 values, 64 thread blocks for 132 multiprocessors
/// when each channel had one); a slice has at least this many values.
constexpr long long kChannelSliceMinValues = 2048;
/// Slices stop being added once the grid has this many blocks.
constexpr long long kChannelSumTargetBlocks = 2048;

/// The number of slices each channel's outer * inner values are summed in, 1 to
/// kChannelSumTargetBlocks (whatever the channel count, so at most 65535, a grid's y limit).
inline int ChannelSumSlices(int outer, int channels, int inner) {
  const long long per_channel = static_cast<long long>(outer) * inner;
  if (channels <= 0 || per_channel <= kChannelSliceMinValues) return 1;
  const long long by_size = per_channel / kChannelSliceMinValues;
  const long long by_blocks = (kChannelSumTargetBlocks + channels - 1) / channels;
  const long long slices = by_size < by_blocks ? by_size : by_blocks;
  return static_cast<int>(slices < 1 ? 1 : slices);
}

/// Doubles of partial sums that ChannelSumsKernel<sums> writes: sums per slice and channel.
inline int ChannelSumPartials(int outer, int channels, int inner, int sums) {
  return ChannelSumSlices(outer, channels, inner) * channels * sums;
}

}  // namespace caffe

#endif  // CAFFE_KERNELS_GPU_CHANNEL_SUMS_HPP_
