// Legend as in pooling_blocked.hpp: G groups, B block, H/W input sizes, PH/PW pooled sizes.
#include "caffe/kernels/pooling_blocked.hpp"

#include <algorithm>
#include <cfloat>
#include <type_traits>

#include "caffe/util/cpu_threads.hpp"
#include "caffe/util/error.hpp"

namespace caffe {

namespace {

template <int kBlock>
void MaxGroup(const float* x, const PoolingAxis& rows, const PoolingAxis& columns, float* y,
              int* argmax) {
  for (int oh = 0; oh < rows.pooled; ++oh) {
    for (int ow = 0; ow < columns.pooled; ++ow) {
      // PoolingLayer's initial value and strict '>': the first maximum in row-major order wins.
      float best[kBlock];
      int best_index[kBlock];
      for (int l = 0; l < kBlock; ++l) {
        best[l] = -FLT_MAX;
        best_index[l] = -1;
      }
      for (int h = rows.start[oh]; h < rows.end[oh]; ++h) {
        for (int w = columns.start[ow]; w < columns.end[ow]; ++w) {
          const int index = h * columns.size + w;
          const float* in = x + static_cast<long>(index) * kBlock;
#pragma omp simd
          for (int l = 0; l < kBlock; ++l) {
            const bool greater = in[l] > best[l];
            best[l] = greater ? in[l] : best[l];
            best_index[l] = greater ? index : best_index[l];
          }
        }
      }
      const long out = (static_cast<long>(oh) * columns.pooled + ow) * kBlock;
      for (int l = 0; l < kBlock; ++l) {
        y[out + l] = best[l];
        argmax[out + l] = best_index[l];
      }
    }
  }
}

template <int kBlock>
void MaxBackwardGroup(const float* dy, const int* argmax, const PoolingAxis& rows,
                      const PoolingAxis& columns, float* dx) {
  std::fill(dx, dx + static_cast<long>(rows.size) * columns.size * kBlock, 0.0f);
  const long outputs = static_cast<long>(rows.pooled) * columns.pooled * kBlock;
  for (long o = 0; o < outputs; o += kBlock) {
    for (int l = 0; l < kBlock; ++l) {
      // -1: an empty window (stride larger than the kernel) had no input.
      const int index = argmax[o + l];
      if (index >= 0) dx[static_cast<long>(index) * kBlock + l] += dy[o + l];
    }
  }
}

template <int kBlock>
void AveGroup(const float* x, const PoolingAxis& rows, const PoolingAxis& columns, float* y) {
  for (int oh = 0; oh < rows.pooled; ++oh) {
    for (int ow = 0; ow < columns.pooled; ++ow) {
      float sum[kBlock] = {};
      for (int h = rows.start[oh]; h < rows.end[oh]; ++h) {
        for (int w = columns.start[ow]; w < columns.end[ow]; ++w) {
          const float* in = x + (static_cast<long>(h) * columns.size + w) * kBlock;
#pragma omp simd
          for (int l = 0; l < kBlock; ++l) sum[l] += in[l];
        }
      }
      const float divisor = static_cast<float>(rows.extent[oh] * columns.extent[ow]);
      float* out = y + (static_cast<long>(oh) * columns.pooled + ow) * kBlock;
#pragma omp simd
      for (int l = 0; l < kBlock; ++l) out[l] = sum[l] / divisor;
    }
  }
}

template <int kBlock>
void AveBackwardGroup(const float* dy, const PoolingAxis& rows, const PoolingAxis& columns,
                      float* dx) {
  std::fill(dx, dx + static_cast<long>(rows.size) * columns.size * kBlock, 0.0f);
  for (int oh = 0; oh < rows.pooled; ++oh) {
    for (int ow = 0; ow < columns.pooled; ++ow) {
      const float divisor = static_cast<float>(rows.extent[oh] * columns.extent[ow]);
      const float* gradient = dy + (static_cast<long>(oh) * columns.pooled + ow) * kBlock;
      float share[kBlock];
#pragma omp simd
      for (int l = 0; l < kBlock; ++l) share[l] = gradient[l] / divisor;
      for (int h = rows.start[oh]; h < rows.end[oh]; ++h) {
        for (int w = columns.start[ow]; w < columns.end[ow]; ++w) {
          float* in = dx + (static_cast<long>(h) * columns.size + w) * kBlock;
#pragma omp simd
          for (int l = 0; l < kBlock; ++l) in[l] += share[l];
        }
      }
    }
  }
}

// Runs `group_pass(kBlock tag, in, out)` for every group, with the offsets of its input
// (G, H, W, B) and output (G, PH, PW, B) arrays, the groups shared among the threads.
template <typename GroupPass>
void ForEachGroup(int groups, int block, const PoolingAxis& rows, const PoolingAxis& columns,
                  GroupPass group_pass) {
  CAFFE_CHECK(block == 8 || block == 16)
      << "pooling on channel blocks of " << block << " values; expected 8 or 16";
  const long in = static_cast<long>(rows.size) * columns.size * block;
  const long out = static_cast<long>(rows.pooled) * columns.pooled * block;
#pragma omp parallel for schedule(static) if (groups * in >= kParallelMinElements)
  for (int g = 0; g < groups; ++g) {
    if (block == 16) {
      group_pass(std::integral_constant<int, 16>(), g * in, g * out);
    } else {
      group_pass(std::integral_constant<int, 8>(), g * in, g * out);
    }
  }
}

}  // namespace

void MaxPoolBlocked(const float* x, int groups, int block, const PoolingAxis& rows,
                    const PoolingAxis& columns, float* y, int* argmax) {
  ForEachGroup(groups, block, rows, columns, [&](auto tag, long in, long out) {
    MaxGroup<decltype(tag)::value>(x + in, rows, columns, y + out, argmax + out);
  });
}

void MaxPoolBackwardBlocked(const float* dy, const int* argmax, int groups, int block,
                            const PoolingAxis& rows, const PoolingAxis& columns, float* dx) {
  ForEachGroup(groups, block, rows, columns, [&](auto tag, long in, long out) {
    MaxBackwardGroup<decltype(tag)::value>(dy + out, argmax + out, rows, columns, dx + in);
  });
}

void AvePoolBlocked(const float* x, int groups, int block, const PoolingAxis& rows,
                    const PoolingAxis& columns, float* y) {
  ForEachGroup(groups, block, rows, columns, [&](auto tag, long in, long out) {
    AveGroup<decltype(tag)::value>(x + in, rows, columns, y + out);
  });
}

void AvePoolBackwardBlocked(const float* dy, int groups, int block, const PoolingAxis& rows,
                            const PoolingAxis& columns, float* dx) {
  ForEachGroup(groups, block, rows, columns, [&](auto tag, long in, long out) {
    AveBackwardGroup<decltype(tag)::value>(dy + out, rows, columns, dx + in);
  });
}

}  // namespace caffe
