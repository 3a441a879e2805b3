#include "caffe/memory/channel_layout.hpp"

#include <glog/logging.h>

#include <cstring>
#include <vector>

#include "caffe/util/cpu_threads.hpp"

namespace caffe {

namespace {

// One image from blocked (by `block`) to plain: position s of channel block b holds channels
// b * block .. b * block + block - 1 side by side.
void BlockedToPlain(const float* blocked, int channels, size_t spatial, int block, float* plain) {
  const int blocks = channels / block;
#pragma omp parallel for schedule(static) if (channels * spatial >= kParallelMinElements)
  for (int b = 0; b < blocks; ++b) {
    const float* source = blocked + b * spatial * block;
    float* target = plain + b * spatial * block;
    for (size_t s = 0; s < spatial; ++s) {
      for (int lane = 0; lane < block; ++lane)
        target[lane * spatial + s] = source[s * block + lane];
    }
  }
}

void PlainToBlocked(const float* plain, int channels, size_t spatial, int block, float* blocked) {
  const int blocks = channels / block;
#pragma omp parallel for schedule(static) if (channels * spatial >= kParallelMinElements)
  for (int b = 0; b < blocks; ++b) {
    const float* source = plain + b * spatial * block;
    float* target = blocked + b * spatial * block;
    for (size_t s = 0; s < spatial; ++s) {
#pragma omp simd
      for (int lane = 0; lane < block; ++lane)
        target[s * block + lane] = source[lane * spatial + s];
    }
  }
}

}  // namespace

void ConvertChannelLayout(float* values, const ChannelLayout& from, const ChannelLayout& to) {
  if (from == to) return;
  // A plain layout needs no shape of its own: the blocked side's.
  CHECK(from.plain() || to.plain() || from.count() == to.count())
      << "layout conversion between arrays of " << from.count() << " and " << to.count()
      << " values";
  if (!from.plain() && !to.plain()) {
    ConvertChannelLayout(values, from, ChannelLayout{from.num, from.channels, from.spatial, 1});
    ConvertChannelLayout(values, ChannelLayout{to.num, to.channels, to.spatial, 1}, to);
    return;
  }
  const ChannelLayout& blocked = from.plain() ? to : from;
  CHECK(blocked.block > 0 && blocked.channels % blocked.block == 0)
      << "block " << blocked.block << " does not divide " << blocked.channels << " channels";
  const size_t image = static_cast<size_t>(blocked.channels) * blocked.spatial;
  thread_local std::vector<float> staging;
  staging.resize(image);
  for (int n = 0; n < blocked.num; ++n) {
    float* values_n = values + n * image;
    if (from.plain()) {
      PlainToBlocked(values_n, blocked.channels, blocked.spatial, blocked.block, staging.data());
    } else {
      BlockedToPlain(values_n, blocked.channels, blocked.spatial, blocked.block, staging.data());
    }
    std::memcpy(values_n, staging.data(), image * sizeof(float));
  }
}

}  // namespace caffe
