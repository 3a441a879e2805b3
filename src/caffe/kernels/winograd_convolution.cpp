#include "caffe/kernels/winograd_convolution.hpp"

#include <glog/logging.h>

#include <algorithm>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>

#include "caffe/kernels/dnnl_context.hpp"
#include "caffe/kernels/thread_scratch.hpp"

namespace caffe {

namespace {

constexpr int kLanes = 8;    // channels per vector: the transforms run on 8 at once (AVX2)
constexpr int kPoints = 36;  // a 6x6 tile's transform
// The filter transforms' fractions, as products (a division per entry took the filter transform
// as long as the batched products on 256 channels).
constexpr float kQuarter = 1.f / 4, kSixth = 1.f / 6, kTwelfth = 1.f / 12, k24th = 1.f / 24;
// A group of images' tiles, transformed (and their products), stays near this size per buffer,
// so the scratch does not grow with the batch.
constexpr size_t kTileBytes = 4 << 20;

// Scratch shared by every convolution call on the thread (layers run one at a time): the input
// tiles transformed, the filters transformed, the products (or the top gradient's tiles).
enum Slot { kTiles = kConvolutionSrc, kFilters = kConvolutionWeights, kProducts = kConvolutionDst };

float* Scratch(int slot, size_t floats) {
  return static_cast<float*>(
      ThreadScratch(ScratchUser::kConvolution, slot, floats * sizeof(float)));
}

// An (N, C, H, W) array in channel blocks of `block` (1: plain), read and written 8 channels at
// a time: the 8 from c (a multiple of 8) at (n, h, w) lie `step()` floats apart from At(...).
template <typename T>
struct Lanes {
  T* base;
  int block, channels, height, width;
  T* At(int n, int c, int h, int w) const {
    const size_t plane = static_cast<size_t>(height) * width;
    if (block == 1) return base + (static_cast<size_t>(n) * channels + c) * plane + h * width + w;
    return base +
           ((static_cast<size_t>(n) * (channels / block) + c / block) * plane + h * width + w) *
               block +
           c % block;
  }
  size_t step() const { return block == 1 ? static_cast<size_t>(height) * width : 1; }
  /// The R x R tile of channels c..c+7 from (n, h0, w0) into d, 0 where it lies outside the
  /// array (the padding, or past the last output).
  template <int R>
  void LoadTile(int n, int c, int h0, int w0, float (*d)[R][kLanes]) const {
    for (int i = 0; i < R; ++i) {
      for (int j = 0; j < R; ++j) {
        const int h = h0 + i, w = w0 + j;
        if (h < 0 || h >= height || w < 0 || w >= width) {
          std::fill(d[i][j], d[i][j] + kLanes, 0.f);
          continue;
        }
        const T* from = At(n, c, h, w);
        for (int l = 0; l < kLanes; ++l) d[i][j][l] = from[l * step()];
      }
    }
  }
};

// A tile's 36 points, 8 channels each, to and from the transformed arrays, laid out a[(p * T + t)
// * channels + c] for the batched products.
void StorePoints(const float (*e)[6][kLanes], float* a, int tiles, int t, int channels, int c) {
  for (int p = 0; p < kPoints; ++p) {
    std::memcpy(a + (static_cast<size_t>(p) * tiles + t) * channels + c, e[p / 6][p % 6],
                sizeof(float) * kLanes);
  }
}

void LoadPoints(const float* a, int tiles, int t, int channels, int c, float (*e)[6][kLanes]) {
  for (int p = 0; p < kPoints; ++p) {
    std::memcpy(e[p / 6][p % 6], a + (static_cast<size_t>(p) * tiles + t) * channels + c,
                sizeof(float) * kLanes);
  }
}

// B^T of F(4x4, 3x3) applied to 6 rows of 8 lanes: in[i * si + l] -> out[i * so + l].
inline void InputRows(const float* in, int si, float* out, int so) {
  for (int l = 0; l < kLanes; ++l) {
    const float d0 = in[l], d1 = in[si + l], d2 = in[2 * si + l], d3 = in[3 * si + l],
                d4 = in[4 * si + l], d5 = in[5 * si + l];
    out[l] = 4.f * d0 - 5.f * d2 + d4;
    out[so + l] = -4.f * (d1 + d2) + d3 + d4;
    out[2 * so + l] = 4.f * (d1 - d2) - d3 + d4;
    out[3 * so + l] = 2.f * (d3 - d1) - d2 + d4;
    out[4 * so + l] = 2.f * (d1 - d3) - d2 + d4;
    out[5 * so + l] = 4.f * d1 - 5.f * d3 + d5;
  }
}

// A^T: 6 rows -> 4.
inline void OutputRows(const float* in, int si, float* out, int so) {
  for (int l = 0; l < kLanes; ++l) {
    const float m0 = in[l], m1 = in[si + l], m2 = in[2 * si + l], m3 = in[3 * si + l],
                m4 = in[4 * si + l], m5 = in[5 * si + l];
    out[l] = m0 + m1 + m2 + m3 + m4;
    out[so + l] = m1 - m2 + 2.f * (m3 - m4);
    out[2 * so + l] = m1 + m2 + 4.f * (m3 + m4);
    out[3 * so + l] = m1 - m2 + 8.f * (m3 - m4) + m5;
  }
}

// A (the transpose of A^T): 4 rows -> 6, for the top gradient's tiles.
inline void GradientRows(const float* in, int si, float* out, int so) {
  for (int l = 0; l < kLanes; ++l) {
    const float y0 = in[l], y1 = in[si + l], y2 = in[2 * si + l], y3 = in[3 * si + l];
    out[l] = y0;
    out[so + l] = y0 + y1 + y2 + y3;
    out[2 * so + l] = y0 - y1 + y2 - y3;
    out[3 * so + l] = y0 + 2.f * y1 + 4.f * y2 + 8.f * y3;
    out[4 * so + l] = y0 - 2.f * y1 + 4.f * y2 - 8.f * y3;
    out[5 * so + l] = y3;
  }
}

// G of F(4x4, 3x3) applied to 3 rows of 8 lanes: in[i * si + l] -> 6 rows out[i * so + l].
inline void FilterRows(const float* in, int si, float* out, int so) {
  for (int l = 0; l < kLanes; ++l) {
    const float g0 = in[l], g1 = in[si + l], g2 = in[2 * si + l];
    out[l] = kQuarter * g0;
    out[so + l] = -kSixth * (g0 + g1 + g2);
    out[2 * so + l] = -kSixth * (g0 - g1 + g2);
    out[3 * so + l] = k24th * g0 + kTwelfth * g1 + kSixth * g2;
    out[4 * so + l] = k24th * g0 - kTwelfth * g1 + kSixth * g2;
    out[5 * so + l] = g2;
  }
}

// G^T of F(4x4, 3x3): 6 rows of 8 lanes -> 3.
inline void FilterGradientRows(const float* in, int si, float* out, int so) {
  for (int l = 0; l < kLanes; ++l) {
    const float u0 = in[l], u1 = in[si + l], u2 = in[2 * si + l], u3 = in[3 * si + l],
                u4 = in[4 * si + l], u5 = in[5 * si + l];
    out[l] = kQuarter * u0 - kSixth * (u1 + u2) + k24th * (u3 + u4);
    out[so + l] = kSixth * (u2 - u1) + kTwelfth * (u3 - u4);
    out[2 * so + l] = kSixth * (u3 + u4 - u1 - u2) + u5;
  }
}

int TilesAcross(int size) { return (size + 3) / 4; }

// The 4x4 output tiles of images [first, first + images) of an out_h x out_w output, numbered
// image by image, row by row.
struct TileGrid {
  int first, across, per_image, count;
  TileGrid(int out_h, int out_w, int first_image, int images)
      : first(first_image),
        across(TilesAcross(out_w)),
        per_image(TilesAcross(out_h) * across),
        count(images * per_image) {}
  /// Tile t's image and its output's top-left corner.
  void Corner(int t, int* n, int* h0, int* w0) const {
    const int tile = t % per_image;
    *n = first + t / per_image;
    *h0 = tile / across * 4;
    *w0 = tile % across * 4;
  }
};

// The tiles of images [first, first + images) of input x in geometry g, transformed: v[(p * T +
// t) * C + c], T = images x tiles per image.
void TransformInput(const WinogradGeometry& g, const float* x, int first, int images, float* v) {
  const TileGrid grid(g.out_height(), g.out_width(), first, images);
  const int tiles = grid.count, groups = g.channels / kLanes;
  const Lanes<const float> in{x, g.in_block, g.channels, g.height, g.width};
#pragma omp parallel for schedule(static) collapse(2)
  for (int t = 0; t < tiles; ++t) {
    for (int group = 0; group < groups; ++group) {
      int n, h0, w0;
      grid.Corner(t, &n, &h0, &w0);
      const int c = group * kLanes;
      alignas(32) float d[6][6][kLanes], r[6][6][kLanes];
      // The input tile starts a padding before its outputs.
      in.LoadTile<6>(n, c, h0 - g.pad_h, w0 - g.pad_w, d);
      for (int j = 0; j < 6; ++j) InputRows(d[0][j], 6 * kLanes, r[0][j], 6 * kLanes);
      for (int i = 0; i < 6; ++i) InputRows(r[i][0], kLanes, d[i][0], kLanes);
      StorePoints(d, v, tiles, t, g.channels, c);
    }
  }
}

// The top gradient's 4x4 tiles of images [first, first + images), transformed by A: z[(p * T +
// t) * K + k]; positions past the output count as zero.
void TransformTopGradient(const WinogradGeometry& g, const float* dy, int first, int images,
                          float* z) {
  const int out_h = g.out_height(), out_w = g.out_width();
  const TileGrid grid(out_h, out_w, first, images);
  const int tiles = grid.count, groups = g.outputs / kLanes;
  const Lanes<const float> in{dy, g.out_block, g.outputs, out_h, out_w};
#pragma omp parallel for schedule(static) collapse(2)
  for (int t = 0; t < tiles; ++t) {
    for (int group = 0; group < groups; ++group) {
      int n, h0, w0;
      grid.Corner(t, &n, &h0, &w0);
      const int k = group * kLanes;
      alignas(32) float d[4][4][kLanes], r[6][4][kLanes], e[6][6][kLanes];
      in.LoadTile<4>(n, k, h0, w0, d);
      for (int j = 0; j < 4; ++j) GradientRows(d[0][j], 4 * kLanes, r[0][j], 4 * kLanes);
      for (int i = 0; i < 6; ++i) GradientRows(r[i][0], kLanes, e[i][0], kLanes);
      StorePoints(e, z, tiles, t, g.outputs, k);
    }
  }
}

// The products m[(p * T + t) * K + k] of images [first, first + images) back to 4x4 output tiles
// of y in geometry g, times scales, plus bias, then the ReLU where asked.
struct OutputEpilogue {
  const float* scales = nullptr;
  const float* bias = nullptr;
  bool relu = false;
  float slope = 0.f;
};

void TransformOutput(const WinogradGeometry& g, const float* m, int first, int images,
                     const OutputEpilogue& epilogue, float* y) {
  const int out_h = g.out_height(), out_w = g.out_width();
  const TileGrid grid(out_h, out_w, first, images);
  const int tiles = grid.count, groups = g.outputs / kLanes;
  const Lanes<float> out{y, g.out_block, g.outputs, out_h, out_w};
  const size_t step = out.step();
#pragma omp parallel for schedule(static) collapse(2)
  for (int t = 0; t < tiles; ++t) {
    for (int group = 0; group < groups; ++group) {
      int n, h0, w0;
      grid.Corner(t, &n, &h0, &w0);
      const int k = group * kLanes;
      alignas(32) float e[6][6][kLanes], r[4][6][kLanes], o[4][4][kLanes];
      LoadPoints(m, tiles, t, g.outputs, k, e);
      for (int j = 0; j < 6; ++j) OutputRows(e[0][j], 6 * kLanes, r[0][j], 6 * kLanes);
      for (int i = 0; i < 4; ++i) OutputRows(r[i][0], kLanes, o[i][0], kLanes);
      alignas(32) float scale[kLanes], shift[kLanes];
      for (int l = 0; l < kLanes; ++l) {
        scale[l] = epilogue.scales ? epilogue.scales[k + l] : 1.f;
        shift[l] = epilogue.bias ? epilogue.bias[k + l] : 0.f;
      }
      for (int i = 0; i < 4 && h0 + i < out_h; ++i) {
        for (int j = 0; j < 4 && w0 + j < out_w; ++j) {
          float* to = out.At(n, k, h0 + i, w0 + j);
          for (int l = 0; l < kLanes; ++l) {
            float value = o[i][j][l] * scale[l] + shift[l];
            if (epilogue.relu && value < 0.f) value *= epilogue.slope;
            to[l * step] = value;
          }
        }
      }
    }
  }
}

// c[b] (rows x cols) = a[b] (rows x inner) . w[b] (inner x cols), or += where `accumulate`, for
// b < kPoints, by one oneDNN matmul; a's element (b, i, j) at a[b * a_batch + i * a_row + j *
// a_col].
void BatchedProduct(const float* a, long a_batch, long a_row, long a_col, const float* w, float* c,
                    long rows, long inner, long cols, bool accumulate) {
  using dnnl::memory;
  const auto f32 = memory::data_type::f32;
  const memory::desc a_md({kPoints, rows, inner}, f32, {a_batch, a_row, a_col});
  const memory::desc w_md({kPoints, inner, cols}, f32, memory::format_tag::abc);
  const memory::desc c_md({kPoints, rows, cols}, f32, memory::format_tag::abc);
  dnnl::primitive_attr attr;
  if (accumulate) {
    dnnl::post_ops sum;
    sum.append_sum(1.f);
    attr.set_post_ops(sum);
  }
  const dnnl::engine& engine = DnnlEngine();
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, w_md, c_md), attr, engine);
  dnnl::matmul(pd).execute(DnnlStream(),
                           {{DNNL_ARG_SRC, memory(a_md, engine, const_cast<float*>(a))},
                            {DNNL_ARG_WEIGHTS, memory(w_md, engine, const_cast<float*>(w))},
                            {DNNL_ARG_DST, memory(c_md, engine, c)}});
  DnnlStream().wait();
}

// The filters w (K, C, 3, 3) transformed for geometry g's product: u[(p * C + c) * K + k]; where
// `turned` (the data gradient: g's channels are w's outputs), w's filter (k, c) turned 180
// degrees goes to u[(p * K + k) * C + c]. 8 of the product's outputs at a time.
void TransformFilters(const WinogradGeometry& g, const float* w, bool turned, float* u) {
  const int in = g.channels, out = g.outputs;  // of the product
  const size_t step = static_cast<size_t>(in) * out;
  const int groups = out / kLanes;
#pragma omp parallel for schedule(static) collapse(2)
  for (int i = 0; i < in; ++i) {
    for (int group = 0; group < groups; ++group) {
      alignas(32) float f[3][3][kLanes], r[6][3][kLanes], e[6][6][kLanes];
      for (int l = 0; l < kLanes; ++l) {
        const int o = group * kLanes + l;
        // w's filter for this product's (input i, output o)
        const float* filter = turned ? w + (static_cast<size_t>(i) * out + o) * 9
                                     : w + (static_cast<size_t>(o) * in + i) * 9;
        for (int t = 0; t < 9; ++t) f[t / 3][t % 3][l] = turned ? filter[8 - t] : filter[t];
      }
      for (int j = 0; j < 3; ++j) FilterRows(f[0][j], 3 * kLanes, r[0][j], 3 * kLanes);
      for (int row = 0; row < 6; ++row) FilterRows(r[row][0], kLanes, e[row][0], kLanes);
      float* to = u + static_cast<size_t>(i) * out + group * kLanes;
      for (int p = 0; p < kPoints; ++p) {
        std::memcpy(to + p * step, e[p / 6][p % 6], sizeof(float) * kLanes);
      }
    }
  }
}

// Images per group for tiles of `floats_per_image` floats, at most `num`.
int ImagesPerGroup(int num, size_t floats_per_image) {
  const size_t fit = kTileBytes / (sizeof(float) * std::max<size_t>(1, floats_per_image));
  return static_cast<int>(std::max<size_t>(1, std::min<size_t>(num, fit)));
}

size_t TilesPerImage(const WinogradGeometry& g) {
  return static_cast<size_t>(TilesAcross(g.out_height())) * TilesAcross(g.out_width());
}

// y = the forward of geometry g with the filters already transformed (u).
void Convolve(const WinogradGeometry& g, const float* x, const float* u, int images_per_group,
              const OutputEpilogue& epilogue, float* y) {
  const size_t per_image = TilesPerImage(g);
  for (int first = 0; first < g.num; first += images_per_group) {
    const int images = std::min(images_per_group, g.num - first);
    const long tiles = static_cast<long>(images * per_image);
    float* v = Scratch(kTiles, kPoints * tiles * g.channels);
    float* m = Scratch(kProducts, kPoints * tiles * g.outputs);
    TransformInput(g, x, first, images, v);
    BatchedProduct(v, tiles * g.channels, g.channels, 1, u, m, tiles, g.channels, g.outputs, false);
    TransformOutput(g, m, first, images, epilogue, y);
  }
}

}  // namespace

bool WinogradTakes(const WinogradGeometry& g) {
  const auto block_fits = [](int block, int channels) {
    return block == 1 || ((block == 8 || block == 16) && channels % block == 0);
  };
  return g.num > 0 && g.channels > 0 && g.outputs > 0 && g.channels % kLanes == 0 &&
         g.outputs % kLanes == 0 && g.pad_h >= 0 && g.pad_h <= 2 && g.pad_w >= 0 && g.pad_w <= 2 &&
         g.out_height() > 0 && g.out_width() > 0 && block_fits(g.in_block, g.channels) &&
         block_fits(g.out_block, g.outputs);
}

WinogradConvolution::WinogradConvolution(const WinogradGeometry& g) : g_(g), data_g_(g) {
  CHECK(WinogradTakes(g)) << "Winograd's 3x3 kernels do not take this geometry";
  data_g_.channels = g.outputs;
  data_g_.outputs = g.channels;
  data_g_.height = g.out_height();
  data_g_.width = g.out_width();
  data_g_.pad_h = 2 - g.pad_h;
  data_g_.pad_w = 2 - g.pad_w;
  data_g_.in_block = g.out_block;
  data_g_.out_block = g.in_block;
  const size_t widest = static_cast<size_t>(std::max(g.channels, g.outputs));
  images_ =
      ImagesPerGroup(g.num, kPoints * std::max(TilesPerImage(g), TilesPerImage(data_g_)) * widest);
}

void WinogradConvolution::Forward(const float* x, const float* w, const float* scales,
                                  const float* bias, bool relu, float slope, float* y) {
  float* u = Scratch(kFilters, static_cast<size_t>(kPoints) * g_.channels * g_.outputs);
  TransformFilters(g_, w, false, u);
  Convolve(g_, x, u, images_, OutputEpilogue{scales, bias, relu, slope}, y);
}

void WinogradConvolution::BackwardData(const float* dy, const float* w, float* dx) {
  float* u = Scratch(kFilters, static_cast<size_t>(kPoints) * g_.channels * g_.outputs);
  TransformFilters(data_g_, w, true, u);
  Convolve(data_g_, dy, u, images_, OutputEpilogue{}, dx);
}

void WinogradConvolution::BackwardWeights(const float* x, const float* dy, float* dw) {
  const int channels = g_.channels, outputs = g_.outputs;
  const size_t pairs = static_cast<size_t>(channels) * outputs;
  float* du = Scratch(kFilters, kPoints * pairs);  // du[(p * C + c) * K + k]
  const size_t per_image = TilesPerImage(g_);
  for (int first = 0; first < g_.num; first += images_) {
    const int images = std::min(images_, g_.num - first);
    const long tiles = static_cast<long>(images * per_image);
    float* v = Scratch(kTiles, kPoints * tiles * channels);
    float* z = Scratch(kProducts, kPoints * tiles * outputs);
    TransformInput(g_, x, first, images, v);
    TransformTopGradient(g_, dy, first, images, z);
    // du[p] (C x K) (+)= v[p]^T (C x T) . z[p] (T x K)
    BatchedProduct(v, tiles * channels, 1, channels, z, du, channels, tiles, outputs, first > 0);
  }
  // dw[k][c] += G^T du[.][c][k] G, 8 outputs at a time.
  const int groups = outputs / kLanes;
#pragma omp parallel for schedule(static) collapse(2)
  for (int c = 0; c < channels; ++c) {
    for (int group = 0; group < groups; ++group) {
      alignas(32) float e[6][6][kLanes], r[3][6][kLanes], f[3][3][kLanes];
      const float* from = du + static_cast<size_t>(c) * outputs + group * kLanes;
      for (int p = 0; p < kPoints; ++p) {
        std::memcpy(e[p / 6][p % 6], from + p * pairs, sizeof(float) * kLanes);
      }
      for (int j = 0; j < 6; ++j) FilterGradientRows(e[0][j], 6 * kLanes, r[0][j], 6 * kLanes);
      for (int i = 0; i < 3; ++i) FilterGradientRows(r[i][0], kLanes, f[i][0], kLanes);
      for (int l = 0; l < kLanes; ++l) {
        float* to = dw + (static_cast<size_t>(group * kLanes + l) * channels + c) * 9;
        for (int t = 0; t < 9; ++t) to[t] += f[t / 3][t % 3][l];
      }
    }
  }
}

}  // namespace caffe
