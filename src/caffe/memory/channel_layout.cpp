#include "caffe/memory/channel_layout.hpp"

#include <glog/logging.h>

#include <cstring>
#include <vector>

#include "caffe/util/cpu_threads.hpp"

namespace caffe {

namespace {

// One image between plain and blocked (by `block`): position s of channel block b holds channels
// b * block .. b * block + block - 1 side by side. kToBlocked: plain -> blocked, else back.
template <bool kToBlocked>
void ReorderImage(const float* from, int channels, size_t spatial, int block, float* to) {
  const int blocks = channels / block;
#pragma omp parallel for schedule(static) if (channels * spatial >= kParallelMinElements)
  for (int b = 0; b < blocks; ++b) {
    const float* source = from + b * spatial * block;
    float* target = to + b * spatial * block;
    for (size_t s = 0; s < spatial; ++s) {
#pragma omp simd
      for (int lane = 0; lane < block; ++lane) {
        const size_t plain = lane * spatial + s, blocked = s * block + lane;
        target[kToBlocked ? blocked : plain] = source[kToBlocked ? plain : blocked];
      }
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
      ReorderImage<true>(values_n, blocked.channels, blocked.spatial, blocked.block,
                         staging.data());
    } else {
      ReorderImage<false>(values_n, blocked.channels, blocked.spatial, blocked.block,
                          staging.data());
    }
    std::memcpy(values_n, staging.data(), image * sizeof(float));
  }
}

}  // namespace caffe
