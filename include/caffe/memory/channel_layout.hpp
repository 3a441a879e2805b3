// How a host buffer of float values orders an (N, C, spatial...) array. Plain is Caffe's order
// (N, C, S: every channel's plane in turn); channel-blocked by B is oneDNN's nChw16c / nChw8c
// (N, C/B, S, B: the B channels of a block side by side at each position). Both hold exactly
// N * C * S values where B divides C, so a buffer can switch between them in place: the oneDNN
// layers hand their activations to each other blocked, and everything else reads them plain.
// N batch, C channels, S spatial positions (the product of the axes after C), B block.
#ifndef CAFFE_MEMORY_CHANNEL_LAYOUT_HPP_
#define CAFFE_MEMORY_CHANNEL_LAYOUT_HPP_

#include <cstddef>

namespace caffe {

struct ChannelLayout {
  int num = 0;
  int channels = 0;
  size_t spatial = 0;
  int block = 1;  // 1: plain

  bool plain() const { return block == 1; }
  size_t count() const { return static_cast<size_t>(num) * channels * spatial; }
  bool operator==(const ChannelLayout& other) const {
    return block == other.block && (block == 1 || (num == other.num && channels == other.channels &&
                                                   spatial == other.spatial));
  }
  bool operator!=(const ChannelLayout& other) const { return !(*this == other); }
};

/// Reorders `layout.count()` floats in place from `from` to `to` (same N, C, S; blocks 1, 8 or
/// 16 that divide C), an image at a time through a thread-local staging image.
void ConvertChannelLayout(float* values, const ChannelLayout& from, const ChannelLayout& to);

}  // namespace caffe

#endif  // CAFFE_MEMORY_CHANNEL_LAYOUT_HPP_
