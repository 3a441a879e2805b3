#include "caffe/util/depthwise_convolution.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace caffe {

namespace {

// Outputs are computed kLanes at a time, each lane with its own sum in registers: every tap adds
// to all lanes in one vector step, and the sums are read and written once a block.
constexpr int kLanes = 8;

// Which of the 3x3 kernels below (Forward3x3Block, Weights3x3Block) a geometry takes: 1 or 2
// (the column stride), or 0 for none.
int Fast3x3Stride(const DepthwiseGeometry& g) {
  const bool three = g.kernel_h == 3 && g.kernel_w == 3 && g.dilation_h == 1 && g.dilation_w == 1;
  return three && (g.stride_w == 1 || g.stride_w == 2) ? g.stride_w : 0;
}

// An input plane copied into a zero-bordered buffer, padded so that every output block's taps
// read inside it: padded[r][q] = input[r - pad_h][q - pad_w], 0 outside the input. The loops then
// need no bounds test, and the last block of a row reads its unused lanes from the border.
struct PaddedPlane {
  explicit PaddedPlane(const DepthwiseGeometry& g)
      : g(g),
        outputs(g.channels * g.multiplier),
        taps(g.kernel_h * g.kernel_w),
        rows((g.out_height - 1) * g.stride_h + (g.kernel_h - 1) * g.dilation_h + 1),
        cols(((g.out_width + kLanes - 1) / kLanes * kLanes - 1) * g.stride_w +
             (g.kernel_w - 1) * g.dilation_w + 1),
        fast(Fast3x3Stride(g)) {
    for (int ky = 0; ky < g.kernel_h; ++ky) {
      for (int kx = 0; kx < g.kernel_w; ++kx) {
        tap_offsets.push_back(static_cast<size_t>(ky) * g.dilation_h * cols +
                              static_cast<size_t>(kx) * g.dilation_w);
      }
    }
  }

  size_t size() const { return static_cast<size_t>(rows) * cols; }

  // The rows and columns of the input that the buffer holds (windows may stop short of its end).
  int InputRows() const { return std::max(0, std::min(g.height, rows - g.pad_h)); }
  int InputCols() const { return std::max(0, std::min(g.width, cols - g.pad_w)); }

  template <typename Dtype>
  void Fill(const Dtype* in, Dtype* padded) const {
    std::fill(padded, padded + size(), Dtype(0));
    for (int iy = 0; iy < InputRows(); ++iy) {
      std::copy(in + static_cast<size_t>(iy) * g.width,
                in + static_cast<size_t>(iy) * g.width + InputCols(),
                padded + static_cast<size_t>(iy + g.pad_h) * cols + g.pad_w);
    }
  }

  // in = the buffer's input part; 0 where the buffer does not reach.
  template <typename Dtype>
  void CopyOut(const Dtype* padded, Dtype* in) const {
    std::fill(in, in + static_cast<size_t>(g.height) * g.width, Dtype(0));
    for (int iy = 0; iy < InputRows(); ++iy) {
      const Dtype* row = padded + static_cast<size_t>(iy + g.pad_h) * cols + g.pad_w;
      std::copy(row, row + InputCols(), in + static_cast<size_t>(iy) * g.width);
    }
  }

  // Where output block (oy, ox) starts reading, and where tap k reads from that start.
  size_t BlockStart(int oy, int ox) const {
    return static_cast<size_t>(oy) * g.stride_h * cols + static_cast<size_t>(ox) * g.stride_w;
  }
  size_t TapOffset(int k) const { return tap_offsets[k]; }

  // Image n's plane of input channel c in x, and of output channel o in y.
  template <typename Dtype>
  Dtype* InputPlane(Dtype* x, int n, int c) const {
    return x + (static_cast<size_t>(n) * g.channels + c) * g.height * g.width;
  }
  template <typename Dtype>
  Dtype* OutputPlane(Dtype* y, int n, int o) const {
    return y + (static_cast<size_t>(n) * outputs + o) * g.out_height * g.out_width;
  }

  const DepthwiseGeometry& g;
  int outputs, taps, rows, cols;
  int fast;                         // Fast3x3Stride(g), for the loops to branch on
  std::vector<size_t> tap_offsets;  // per tap, computed once: no division in the loops
};

// Calls visit(oy, ox, lanes) for every block of up to kLanes outputs of a plane.
template <typename Visit>
void ForEachBlock(const DepthwiseGeometry& g, Visit visit) {
  for (int oy = 0; oy < g.out_height; ++oy) {
    for (int ox = 0; ox < g.out_width; ox += kLanes) {
      visit(oy, ox, std::min(kLanes, g.out_width - ox));
    }
  }
}

// The three ways a tap meets a block: sum += a * p (forward), p += a * d (input gradient), sum
// += d * p (weight gradient), over kLanes lanes of p at the given stride. Strides 1 and 2, the
// common ones, are constants in their loops, so that these vectorize.
template <typename Op>
inline void ForEachLane(int stride, Op op) {
  if (stride == 1) {
    for (int l = 0; l < kLanes; ++l) op(l, l);
  } else if (stride == 2) {
    for (int l = 0; l < kLanes; ++l) op(l, 2 * l);
  } else {
    for (int l = 0; l < kLanes; ++l) op(l, l * stride);
  }
}

// 3x3 kernels without dilation (MobileNet's), at column stride S (1 or 2): all nine taps in one
// expression per lane, which keeps the block's sums in registers (2-5x the loop over taps).
template <typename Dtype, int S>
void Forward3x3Block(const Dtype* r0, size_t cols, const Dtype* w, Dtype* sum) {
  const Dtype* r1 = r0 + cols;
  const Dtype* r2 = r1 + cols;
  for (int l = 0; l < kLanes; ++l) {
    const int i = l * S;
    sum[l] += w[0] * r0[i] + w[1] * r0[i + 1] + w[2] * r0[i + 2] + w[3] * r1[i] +
              w[4] * r1[i + 1] + w[5] * r1[i + 2] + w[6] * r2[i] + w[7] * r2[i + 1] +
              w[8] * r2[i + 2];
  }
}

template <typename Dtype, int S>
void Weights3x3Block(const Dtype* r0, size_t cols, const Dtype* d, Dtype* sums) {
  const Dtype* r1 = r0 + cols;
  const Dtype* r2 = r1 + cols;
  for (int l = 0; l < kLanes; ++l) {
    const int i = l * S;
    sums[0 * kLanes + l] += d[l] * r0[i];
    sums[1 * kLanes + l] += d[l] * r0[i + 1];
    sums[2 * kLanes + l] += d[l] * r0[i + 2];
    sums[3 * kLanes + l] += d[l] * r1[i];
    sums[4 * kLanes + l] += d[l] * r1[i + 1];
    sums[5 * kLanes + l] += d[l] * r1[i + 2];
    sums[6 * kLanes + l] += d[l] * r2[i];
    sums[7 * kLanes + l] += d[l] * r2[i + 1];
    sums[8 * kLanes + l] += d[l] * r2[i + 2];
  }
}

// d = a block of a gradient row, 0 in lanes past the row's end.
template <typename Dtype>
void LoadBlock(const Dtype* row, int lanes, Dtype* d) {
  for (int l = 0; l < kLanes; ++l) d[l] = l < lanes ? row[l] : Dtype(0);
}

}  // namespace

template <typename Dtype>
void DepthwiseForward(const DepthwiseGeometry& g, const Dtype* x, const Dtype* w,
                      const Dtype* bias, Dtype* y) {
  const PaddedPlane pad(g);
#pragma omp parallel
  {
    std::vector<Dtype> padded(pad.size());
#pragma omp for collapse(2) schedule(static)
    for (int n = 0; n < g.num; ++n) {
      for (int o = 0; o < pad.outputs; ++o) {
        pad.Fill(pad.InputPlane(x, n, o / g.multiplier), padded.data());
        const Dtype* filter = w + static_cast<size_t>(o) * pad.taps;
        Dtype* out = pad.OutputPlane(y, n, o);
        ForEachBlock(g, [&](int oy, int ox, int lanes) {
          Dtype sum[kLanes];
          std::fill(sum, sum + kLanes, bias ? bias[o] : Dtype(0));
          const Dtype* start = padded.data() + pad.BlockStart(oy, ox);
          if (pad.fast == 1) {
            Forward3x3Block<Dtype, 1>(start, pad.cols, filter, sum);
          } else if (pad.fast == 2) {
            Forward3x3Block<Dtype, 2>(start, pad.cols, filter, sum);
          } else {
            for (int k = 0; k < pad.taps; ++k) {
              const Dtype* p = start + pad.TapOffset(k);
              const Dtype a = filter[k];
              ForEachLane(g.stride_w, [&](int l, int i) { sum[l] += a * p[i]; });
            }
          }
          std::copy(sum, sum + lanes, out + static_cast<size_t>(oy) * g.out_width + ox);
        });
      }
    }
  }
}

template <typename Dtype>
void DepthwiseBackwardData(const DepthwiseGeometry& g, const Dtype* dy, const Dtype* w,
                           Dtype* dx) {
  const PaddedPlane pad(g);
  // One task per input plane, with all the outputs that read it: no two tasks write one value.
#pragma omp parallel
  {
    std::vector<Dtype> padded(pad.size());
#pragma omp for collapse(2) schedule(static)
    for (int n = 0; n < g.num; ++n) {
      for (int c = 0; c < g.channels; ++c) {
        std::fill(padded.begin(), padded.end(), Dtype(0));
        for (int o = c * g.multiplier; o < (c + 1) * g.multiplier; ++o) {
          const Dtype* filter = w + static_cast<size_t>(o) * pad.taps;
          const Dtype* out_diff = pad.OutputPlane(dy, n, o);
          ForEachBlock(g, [&](int oy, int ox, int lanes) {
            Dtype d[kLanes];
            LoadBlock(out_diff + static_cast<size_t>(oy) * g.out_width + ox, lanes, d);
            Dtype* start = padded.data() + pad.BlockStart(oy, ox);
            for (int k = 0; k < pad.taps; ++k) {
              Dtype* p = start + pad.TapOffset(k);
              const Dtype a = filter[k];
              ForEachLane(g.stride_w, [&](int l, int i) { p[i] += a * d[l]; });
            }
          });
        }
        pad.CopyOut(padded.data(), pad.InputPlane(dx, n, c));
      }
    }
  }
}

template <typename Dtype>
void DepthwiseBackwardWeights(const DepthwiseGeometry& g, const Dtype* dy, const Dtype* x,
                              Dtype* dw) {
  const PaddedPlane pad(g);
  // One task per filter, summing over the images: no two tasks write one weight. Each tap sums
  // in kLanes lanes, added together at the end.
#pragma omp parallel
  {
    std::vector<Dtype> padded(pad.size()), sums(static_cast<size_t>(pad.taps) * kLanes);
#pragma omp for schedule(static)
    for (int o = 0; o < pad.outputs; ++o) {
      std::fill(sums.begin(), sums.end(), Dtype(0));
      for (int n = 0; n < g.num; ++n) {
        pad.Fill(pad.InputPlane(x, n, o / g.multiplier), padded.data());
        const Dtype* out_diff = pad.OutputPlane(dy, n, o);
        ForEachBlock(g, [&](int oy, int ox, int lanes) {
          Dtype d[kLanes];
          LoadBlock(out_diff + static_cast<size_t>(oy) * g.out_width + ox, lanes, d);
          const Dtype* start = padded.data() + pad.BlockStart(oy, ox);
          if (pad.fast == 1) {
            Weights3x3Block<Dtype, 1>(start, pad.cols, d, sums.data());
          } else if (pad.fast == 2) {
            Weights3x3Block<Dtype, 2>(start, pad.cols, d, sums.data());
          } else {
            for (int k = 0; k < pad.taps; ++k) {
              const Dtype* p = start + pad.TapOffset(k);
              Dtype* sum = sums.data() + static_cast<size_t>(k) * kLanes;
              ForEachLane(g.stride_w, [&](int l, int i) { sum[l] += d[l] * p[i]; });
            }
          }
        });
      }
      Dtype* filter_diff = dw + static_cast<size_t>(o) * pad.taps;
      for (int k = 0; k < pad.taps; ++k) {
        Dtype total = 0;
        for (int l = 0; l < kLanes; ++l) total += sums[static_cast<size_t>(k) * kLanes + l];
        filter_diff[k] += total;
      }
    }
  }
}

#define INSTANTIATE_DEPTHWISE(Dtype)                                                           \
  template void DepthwiseForward<Dtype>(const DepthwiseGeometry&, const Dtype*, const Dtype*, \
                                        const Dtype*, Dtype*);                                 \
  template void DepthwiseBackwardData<Dtype>(const DepthwiseGeometry&, const Dtype*,          \
                                             const Dtype*, Dtype*);                            \
  template void DepthwiseBackwardWeights<Dtype>(const DepthwiseGeometry&, const Dtype*,       \
                                                const Dtype*, Dtype*);
INSTANTIATE_DEPTHWISE(float)
INSTANTIATE_DEPTHWISE(double)
#undef INSTANTIATE_DEPTHWISE

}  // namespace caffe
