#include "caffe/kernels/depthwise_convolution.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

namespace caffe {

namespace {

// Outputs are computed kLanes at a time, each lane with its own sum in registers: every tap adds
// to all lanes in one vector step, and the sums are read and written once a block.
constexpr int kLanes = 8;

// Whether a geometry takes the 3x3 kernels below (Forward3x3Plane, Weights3x3Plane, and at
// stride 2 AddDataStrideTwoRow): 1 or 2 (the column stride), or 0 for none.
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

// row = the first `lanes` sums of a block; a whole block in one fixed-size copy (std::copy of a
// variable count is a call to memmove per block).
template <typename Dtype>
void StoreBlock(const Dtype* sum, int lanes, Dtype* row) {
  if (lanes == kLanes) {
    for (int l = 0; l < kLanes; ++l) row[l] = sum[l];
  } else {
    for (int l = 0; l < lanes; ++l) row[l] = sum[l];
  }
}

// d = a block of a gradient row, 0 in lanes past the row's end.
template <typename Dtype>
void LoadBlock(const Dtype* row, int lanes, Dtype* d) {
  for (int l = 0; l < kLanes; ++l) d[l] = l < lanes ? row[l] : Dtype(0);
}

// 3x3 kernels without dilation (MobileNet's) at column stride 1 or 2 take a plane a row of
// outputs at a time: output x of a row reads, for tap k, row[offset[k] + x], so consecutive
// outputs read consecutive values. At stride 1 the offsets are the 3 x 3 window's in the padded
// plane; at stride 2 the plane's rows are first split into their even columns and then their odd
// ones (SplitColumns), and a window row's three taps read even[x], odd[x] and even[x + 1] (the
// unsplit row would need a gather of every second value).
struct Taps3x3 {
  Taps3x3(int stride, size_t cols) {
    const size_t evens = (cols + 1) / 2;
    const size_t one = 1, two = 2;
    const size_t in_row[3] = {0, stride == 1 ? one : evens, stride == 1 ? two : one};
    for (int k = 0; k < 9; ++k) offset[k] = (k / 3) * cols + in_row[k % 3];
  }
  size_t offset[9];
};

// split = each row of the padded plane as its even columns, then its odd ones.
template <typename Dtype>
void SplitColumns(const Dtype* padded, int rows, size_t cols, Dtype* split) {
  const size_t evens = (cols + 1) / 2;
  for (int r = 0; r < rows; ++r) {
    const Dtype* in = padded + r * cols;
    Dtype* out = split + r * cols;
    for (size_t q = 0; q < evens; ++q) out[q] = in[2 * q];
    for (size_t q = 0; q < cols / 2; ++q) out[evens + q] = in[2 * q + 1];
  }
}

// The inverse of SplitColumns.
template <typename Dtype>
void MergeColumns(const Dtype* split, int rows, size_t cols, Dtype* padded) {
  const size_t evens = (cols + 1) / 2;
  for (int r = 0; r < rows; ++r) {
    const Dtype* in = split + r * cols;
    Dtype* out = padded + r * cols;
    for (size_t q = 0; q < evens; ++q) out[2 * q] = in[q];
    for (size_t q = 0; q < cols / 2; ++q) out[2 * q + 1] = in[evens + q];
  }
}

// The input gradient of one window row w[0..2] of a 3x3 kernel at column stride 2, added to a
// split row: its even column j takes w[0] x top gradient column j and w[2] x column j - 1, its
// odd column j w[1] x column j. d1 = the top gradient row from index 1, 0 around it (d1[j + 1]
// = column j). Gathered per column, so each value is written once, where adding each product in
// place in the unsplit row writes every second value, and the same ones again for the next tap.
template <typename Dtype>
void AddDataStrideTwoRow(const Dtype* w, const Dtype* d1, size_t cols, Dtype* row) {
  const size_t evens = (cols + 1) / 2;
  const Dtype w0 = w[0], w1 = w[1], w2 = w[2];
  Dtype* even = row;
  Dtype* odd = row + evens;
  for (size_t j = 0; j < evens; ++j) even[j] += w0 * d1[j + 1] + w2 * d1[j];
  for (size_t j = 0; j < cols / 2; ++j) odd[j] += w1 * d1[j + 1];
}

// What the 3x3 kernels read: the plane (padded, or split at stride 2), the step from one output
// row's start to the next's, and the output's size.
template <typename Dtype>
struct Plane3x3 {
  const Dtype* data;
  size_t row_step;
  int out_height, out_width;
};

// kLanes values in one vector (GCC's and Clang's vector extension): one AVX2 register of floats,
// two of doubles. The 3x3 kernels keep their sums in these, so that they stay in registers.
template <typename Dtype>
struct LaneVector {
  typedef Dtype type __attribute__((vector_size(kLanes * sizeof(Dtype))));
};

// Vectors are copied in and out with memcpy (unaligned loads and stores) and passed by
// reference, never by value: a vector of 8 doubles by value is an ABI note (-Wpsabi) where the
// build does not assume AVX-512. The kernels name their nine vectors, so that they stay in
// registers (in arrays, GCC kept them on the stack: 3x the time).
template <typename Dtype>
inline void LoadLanes(const Dtype* p, typename LaneVector<Dtype>::type* v) {
  std::memcpy(v, p, sizeof *v);
}

template <typename Dtype>
inline void StoreLanes(const typename LaneVector<Dtype>::type& v, Dtype* p) {
  std::memcpy(p, &v, sizeof v);
}

// s += v * the kLanes values at p.
template <typename Dtype>
inline void AddProduct(const typename LaneVector<Dtype>::type& v, const Dtype* p,
                       typename LaneVector<Dtype>::type* s) {
  typename LaneVector<Dtype>::type t;
  LoadLanes(p, &t);
  *s += v * t;
}

// out = init + the nine taps' products, kLanes outputs of a row at a time.
template <typename Dtype>
void Forward3x3Plane(const Plane3x3<Dtype>& in, const Taps3x3& taps, const Dtype* w, Dtype init,
                     Dtype* out) {
  using V = typename LaneVector<Dtype>::type;
  const V w0 = V{} + w[0], w1 = V{} + w[1], w2 = V{} + w[2], w3 = V{} + w[3], w4 = V{} + w[4];
  const V w5 = V{} + w[5], w6 = V{} + w[6], w7 = V{} + w[7], w8 = V{} + w[8];
  const int width = in.out_width;
  for (int oy = 0; oy < in.out_height; ++oy, out += width) {
    const Dtype* row = in.data + oy * in.row_step;
    for (int ox = 0; ox < width; ox += kLanes) {
      V a0, a1, a2, a3, a4, a5, a6, a7, a8;
      LoadLanes(row + taps.offset[0] + ox, &a0);
      LoadLanes(row + taps.offset[1] + ox, &a1);
      LoadLanes(row + taps.offset[2] + ox, &a2);
      LoadLanes(row + taps.offset[3] + ox, &a3);
      LoadLanes(row + taps.offset[4] + ox, &a4);
      LoadLanes(row + taps.offset[5] + ox, &a5);
      LoadLanes(row + taps.offset[6] + ox, &a6);
      LoadLanes(row + taps.offset[7] + ox, &a7);
      LoadLanes(row + taps.offset[8] + ox, &a8);
      const V sum = init + (w0 * a0 + w1 * a1 + w2 * a2) + (w3 * a3 + w4 * a4 + w5 * a5) +
                    (w6 * a6 + w7 * a7 + w8 * a8);
      if (width - ox >= kLanes) {
        StoreLanes(sum, out + ox);
      } else {
        Dtype lanes[kLanes];
        StoreLanes(sum, lanes);
        StoreBlock(lanes, width - ox, out + ox);
      }
    }
  }
}

// sums[k * kLanes + l] += the products of tap k in lane l over the plane's outputs (d: the top
// gradient's plane).
template <typename Dtype>
void Weights3x3Plane(const Plane3x3<Dtype>& in, const Taps3x3& taps, const Dtype* d, Dtype* sums) {
  using V = typename LaneVector<Dtype>::type;
  V s0, s1, s2, s3, s4, s5, s6, s7, s8;
  LoadLanes(sums, &s0);
  LoadLanes(sums + kLanes, &s1);
  LoadLanes(sums + 2 * kLanes, &s2);
  LoadLanes(sums + 3 * kLanes, &s3);
  LoadLanes(sums + 4 * kLanes, &s4);
  LoadLanes(sums + 5 * kLanes, &s5);
  LoadLanes(sums + 6 * kLanes, &s6);
  LoadLanes(sums + 7 * kLanes, &s7);
  LoadLanes(sums + 8 * kLanes, &s8);
  const int width = in.out_width;
  for (int oy = 0; oy < in.out_height; ++oy, d += width) {
    const Dtype* row = in.data + oy * in.row_step;
    for (int ox = 0; ox < width; ox += kLanes) {
      V v;
      if (width - ox >= kLanes) {
        LoadLanes(d + ox, &v);
      } else {
        Dtype block[kLanes];
        LoadBlock(d + ox, width - ox, block);
        LoadLanes(block, &v);
      }
      AddProduct(v, row + taps.offset[0] + ox, &s0);
      AddProduct(v, row + taps.offset[1] + ox, &s1);
      AddProduct(v, row + taps.offset[2] + ox, &s2);
      AddProduct(v, row + taps.offset[3] + ox, &s3);
      AddProduct(v, row + taps.offset[4] + ox, &s4);
      AddProduct(v, row + taps.offset[5] + ox, &s5);
      AddProduct(v, row + taps.offset[6] + ox, &s6);
      AddProduct(v, row + taps.offset[7] + ox, &s7);
      AddProduct(v, row + taps.offset[8] + ox, &s8);
    }
  }
  StoreLanes(s0, sums);
  StoreLanes(s1, sums + kLanes);
  StoreLanes(s2, sums + 2 * kLanes);
  StoreLanes(s3, sums + 3 * kLanes);
  StoreLanes(s4, sums + 4 * kLanes);
  StoreLanes(s5, sums + 5 * kLanes);
  StoreLanes(s6, sums + 6 * kLanes);
  StoreLanes(s7, sums + 7 * kLanes);
  StoreLanes(s8, sums + 8 * kLanes);
}

// The plane the 3x3 kernels read: the padded one, or at stride 2 its split copy.
template <typename Dtype>
Plane3x3<Dtype> Fill3x3(const PaddedPlane& pad, const Dtype* in, Dtype* padded, Dtype* split) {
  pad.Fill(in, padded);
  if (pad.fast == 2) SplitColumns(padded, pad.rows, pad.cols, split);
  return {pad.fast == 2 ? split : padded, pad.BlockStart(1, 0), pad.g.out_height, pad.g.out_width};
}

// Whether the input gradient is itself a depthwise convolution that DepthwiseForward computes:
// with stride 1 and one filter per channel, dx is the convolution of dy, padded by
// dilation (k - 1) - pad, with each filter turned by 180 degrees. That gathers each value's
// products with its sum in registers, where the general loop below scatters every product into
// the padded plane (about 3x the time).
bool GathersInputGradient(const DepthwiseGeometry& g) {
  return g.stride_h == 1 && g.stride_w == 1 && g.multiplier == 1 &&
         g.pad_h <= g.dilation_h * (g.kernel_h - 1) && g.pad_w <= g.dilation_w * (g.kernel_w - 1);
}

// The forward geometry of that convolution: dy's planes in, dx's out.
DepthwiseGeometry InputGradientGeometry(const DepthwiseGeometry& g) {
  DepthwiseGeometry t = g;
  t.height = g.out_height;
  t.width = g.out_width;
  t.out_height = g.height;
  t.out_width = g.width;
  t.pad_h = g.dilation_h * (g.kernel_h - 1) - g.pad_h;
  t.pad_w = g.dilation_w * (g.kernel_w - 1) - g.pad_w;
  return t;
}

}  // namespace

template <typename Dtype>
void DepthwiseForward(const DepthwiseGeometry& g, const Dtype* x, const Dtype* w, const Dtype* bias,
                      Dtype* y) {
  const PaddedPlane pad(g);
#pragma omp parallel
  {
    std::vector<Dtype> padded(pad.size()), split(pad.fast == 2 ? pad.size() : 0);
    const Taps3x3 taps(pad.fast, pad.cols);
#pragma omp for collapse(2) schedule(static)
    for (int n = 0; n < g.num; ++n) {
      for (int o = 0; o < pad.outputs; ++o) {
        const Dtype* in = pad.InputPlane(x, n, o / g.multiplier);
        const Dtype* filter = w + static_cast<size_t>(o) * pad.taps;
        Dtype* out = pad.OutputPlane(y, n, o);
        const Dtype init = bias ? bias[o] : Dtype(0);
        if (pad.fast) {
          Forward3x3Plane(Fill3x3(pad, in, padded.data(), split.data()), taps, filter, init, out);
          continue;
        }
        pad.Fill(in, padded.data());
        ForEachBlock(g, [&](int oy, int ox, int lanes) {
          Dtype sum[kLanes];
          std::fill(sum, sum + kLanes, init);
          const Dtype* start = padded.data() + pad.BlockStart(oy, ox);
          for (int k = 0; k < pad.taps; ++k) {
            const Dtype* p = start + pad.TapOffset(k);
            const Dtype a = filter[k];
            ForEachLane(g.stride_w, [&](int l, int i) { sum[l] += a * p[i]; });
          }
          StoreBlock(sum, lanes, out + static_cast<size_t>(oy) * g.out_width + ox);
        });
      }
    }
  }
}

template <typename Dtype>
void DepthwiseBackwardData(const DepthwiseGeometry& g, const Dtype* dy, const Dtype* w, Dtype* dx) {
  if (GathersInputGradient(g)) {
    const int taps = g.kernel_h * g.kernel_w;
    std::vector<Dtype> turned(static_cast<size_t>(g.channels) * taps);
    for (size_t f = 0; f < turned.size(); f += taps) {
      std::reverse_copy(w + f, w + f + taps, turned.begin() + f);
    }
    DepthwiseForward(InputGradientGeometry(g), dy, turned.data(), static_cast<Dtype*>(nullptr), dx);
    return;
  }
  const PaddedPlane pad(g);
  // One task per input plane, with all the outputs that read it: no two tasks write one value.
#pragma omp parallel
  {
    std::vector<Dtype> padded(pad.size()), split(pad.fast == 2 ? pad.size() : 0);
    std::vector<Dtype> d1(pad.fast == 2 ? (pad.cols + 1) / 2 + 1 : 0);
#pragma omp for collapse(2) schedule(static)
    for (int n = 0; n < g.num; ++n) {
      for (int c = 0; c < g.channels; ++c) {
        if (pad.fast == 2) {
          std::fill(split.begin(), split.end(), Dtype(0));
          for (int o = c * g.multiplier; o < (c + 1) * g.multiplier; ++o) {
            const Dtype* filter = w + static_cast<size_t>(o) * pad.taps;
            for (int oy = 0; oy < g.out_height; ++oy) {
              const Dtype* row = pad.OutputPlane(dy, n, o) + static_cast<size_t>(oy) * g.out_width;
              std::copy(row, row + g.out_width, d1.begin() + 1);
              for (int ky = 0; ky < 3; ++ky) {
                AddDataStrideTwoRow(filter + 3 * ky, d1.data(), pad.cols,
                                    split.data() + pad.BlockStart(oy, 0) + ky * pad.cols);
              }
            }
          }
          MergeColumns(split.data(), pad.rows, pad.cols, padded.data());
          pad.CopyOut(padded.data(), pad.InputPlane(dx, n, c));
          continue;
        }
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
    std::vector<Dtype> padded(pad.size()), split(pad.fast == 2 ? pad.size() : 0);
    std::vector<Dtype> sums(static_cast<size_t>(pad.taps) * kLanes);
    const Taps3x3 taps(pad.fast, pad.cols);
#pragma omp for schedule(static)
    for (int o = 0; o < pad.outputs; ++o) {
      std::fill(sums.begin(), sums.end(), Dtype(0));
      for (int n = 0; n < g.num; ++n) {
        const Dtype* in = pad.InputPlane(x, n, o / g.multiplier);
        const Dtype* out_diff = pad.OutputPlane(dy, n, o);
        if (pad.fast) {
          Weights3x3Plane(Fill3x3(pad, in, padded.data(), split.data()), taps, out_diff,
                          sums.data());
          continue;
        }
        pad.Fill(in, padded.data());
        ForEachBlock(g, [&](int oy, int ox, int lanes) {
          Dtype d[kLanes];
          LoadBlock(out_diff + static_cast<size_t>(oy) * g.out_width + ox, lanes, d);
          const Dtype* start = padded.data() + pad.BlockStart(oy, ox);
          for (int k = 0; k < pad.taps; ++k) {
            const Dtype* p = start + pad.TapOffset(k);
            Dtype* sum = sums.data() + static_cast<size_t>(k) * kLanes;
            ForEachLane(g.stride_w, [&](int l, int i) { sum[l] += d[l] * p[i]; });
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

#define INSTANTIATE_DEPTHWISE(Dtype)                                                               \
  template void DepthwiseForward<Dtype>(const DepthwiseGeometry&, const Dtype*, const Dtype*,      \
                                        const Dtype*, Dtype*);                                     \
  template void DepthwiseBackwardData<Dtype>(const DepthwiseGeometry&, const Dtype*, const Dtype*, \
                                             Dtype*);                                              \
  template void DepthwiseBackwardWeights<Dtype>(const DepthwiseGeometry&, const Dtype*,            \
                                                const Dtype*, Dtype*);
INSTANTIATE_DEPTHWISE(float)
INSTANTIATE_DEPTHWISE(double)
#undef INSTANTIATE_DEPTHWISE

}  // namespace caffe
