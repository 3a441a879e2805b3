// Winograd's F(4x4, 3x3) kernels (kernels/winograd_convolution) against a direct loop in double:
// forward (with the scales, bias and ReLU of a folded BatchNorm), data gradient and weight
// gradient, on geometries with whole and partial 4x4 tiles, pads 0 to 2, rectangular planes,
// channels in 8s but not 16s, the activations plain and in oneDNN's channel blocks of 8 and 16,
// and batches that take several groups of images. Tolerance 1e-5 of the largest value: the 6x6
// transforms have entries up to 8 (5 and 1/24 in the filters'), so each product carries a few
// roundings of values up to ~100x the inputs (measured: 2e-6 to 4e-6 of the largest value).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "caffe/test/test_caffe_main.hpp"
#ifdef USE_DNNL
#include "caffe/kernels/winograd_convolution.hpp"
#endif

namespace caffe {

#ifdef USE_DNNL

namespace {

struct Case {
  std::string name;
  WinogradGeometry g;
};

WinogradGeometry Geometry(int num, int channels, int outputs, int height, int width, int pad_h,
                          int pad_w, int in_block, int out_block) {
  WinogradGeometry g;
  g.num = num;
  g.channels = channels;
  g.outputs = outputs;
  g.height = height;
  g.width = width;
  g.pad_h = pad_h;
  g.pad_w = pad_w;
  g.in_block = in_block;
  g.out_block = out_block;
  return g;
}

// Index of (n, c, h, w) in an (N, C, H, W) array held in channel blocks of `block`.
size_t At(int block, int channels, int height, int width, int n, int c, int h, int w) {
  const size_t plane = static_cast<size_t>(height) * width;
  if (block == 1) return (static_cast<size_t>(n) * channels + c) * plane + h * width + w;
  return ((static_cast<size_t>(n) * (channels / block) + c / block) * plane + h * width + w) *
             block +
         c % block;
}

// max |actual - expected| <= 1e-5 max |expected|, actual in blocks of `block`, expected plain.
void ExpectClose(const std::vector<float>& actual, const std::vector<double>& expected, int block,
                 int channels, int height, int width, const std::string& what) {
  const int num =
      static_cast<int>(expected.size() / (static_cast<size_t>(channels) * height * width));
  double scale = 0, error = 0;
  for (int n = 0; n < num; ++n) {
    for (int c = 0; c < channels; ++c) {
      for (int h = 0; h < height; ++h) {
        for (int w = 0; w < width; ++w) {
          const double e = expected[At(1, channels, height, width, n, c, h, w)];
          const double a = actual[At(block, channels, height, width, n, c, h, w)];
          scale = std::max(scale, std::abs(e));
          error = std::max(error, std::abs(a - e));
        }
      }
    }
  }
  EXPECT_GT(scale, 0) << what;
  EXPECT_LE(error, 1e-5 * scale) << what << ": max error " << error << " of " << scale;
}

class WinogradConvolutionTest : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST_P(WinogradConvolutionTest, MatchesTheDirectSums) {
  const WinogradGeometry& g = GetParam().g;
  ASSERT_TRUE(WinogradTakes(g));
  const int out_h = g.out_height(), out_w = g.out_width();
  const size_t x_count = static_cast<size_t>(g.num) * g.channels * g.height * g.width;
  const size_t y_count = static_cast<size_t>(g.num) * g.outputs * out_h * out_w;
  const std::vector<float> x = UniformValues(x_count, 1),
                           w = UniformValues(g.outputs * g.channels * 9, 2),
                           dy = UniformValues(y_count, 3), scales = UniformValues(g.outputs, 4),
                           bias = UniformValues(g.outputs, 5);
  std::vector<double> y(y_count, 0.), dx(x_count, 0.), dw(w.size(), 0.);
  for (int n = 0; n < g.num; ++n) {
    for (int k = 0; k < g.outputs; ++k) {
      for (int oh = 0; oh < out_h; ++oh) {
        for (int ow = 0; ow < out_w; ++ow) {
          const size_t yi = At(1, g.outputs, out_h, out_w, n, k, oh, ow);
          for (int c = 0; c < g.channels; ++c) {
            for (int i = 0; i < 3; ++i) {
              for (int j = 0; j < 3; ++j) {
                const int h = oh + i - g.pad_h, v = ow + j - g.pad_w;
                if (h < 0 || h >= g.height || v < 0 || v >= g.width) continue;
                const size_t xi = At(1, g.channels, g.height, g.width, n, c, h, v);
                const size_t wi = ((static_cast<size_t>(k) * g.channels + c) * 3 + i) * 3 + j;
                y[yi] += static_cast<double>(x[xi]) * w[wi];
                dx[xi] += static_cast<double>(dy[yi]) * w[wi];
                dw[wi] += static_cast<double>(dy[yi]) * x[xi];
              }
            }
          }
        }
      }
    }
  }
  // The inputs in the case's blocks.
  std::vector<float> x_blocked(x_count), dy_blocked(y_count);
  for (size_t i = 0; i < x_count; ++i) {
    const int plane = g.height * g.width;
    const int n = static_cast<int>(i / (static_cast<size_t>(g.channels) * plane));
    const int c = static_cast<int>(i / plane % g.channels), s = static_cast<int>(i % plane);
    x_blocked[At(g.in_block, g.channels, g.height, g.width, n, c, s / g.width, s % g.width)] = x[i];
  }
  for (size_t i = 0; i < y_count; ++i) {
    const int plane = out_h * out_w;
    const int n = static_cast<int>(i / (static_cast<size_t>(g.outputs) * plane));
    const int k = static_cast<int>(i / plane % g.outputs), s = static_cast<int>(i % plane);
    dy_blocked[At(g.out_block, g.outputs, out_h, out_w, n, k, s / out_w, s % out_w)] = dy[i];
  }
  WinogradConvolution convolution(g);
  std::vector<float> y_out(y_count, 9.f);
  convolution.Forward(x_blocked.data(), w.data(), nullptr, nullptr, false, 0.f, y_out.data());
  ExpectClose(y_out, y, g.out_block, g.outputs, out_h, out_w, "forward");

  // Folded: y * scale + bias, then a leaky ReLU.
  std::vector<double> folded(y_count);
  for (size_t i = 0; i < y_count; ++i) {
    const int k = static_cast<int>(i / (static_cast<size_t>(out_h) * out_w) % g.outputs);
    const double value = y[i] * scales[k] + bias[k];
    folded[i] = value < 0 ? 0.25 * value : value;
  }
  convolution.Forward(x_blocked.data(), w.data(), scales.data(), bias.data(), true, 0.25f,
                      y_out.data());
  ExpectClose(y_out, folded, g.out_block, g.outputs, out_h, out_w, "folded forward");

  std::vector<float> dx_out(x_count, 9.f);  // overwritten
  convolution.BackwardData(dy_blocked.data(), w.data(), dx_out.data());
  ExpectClose(dx_out, dx, g.in_block, g.channels, g.height, g.width, "data gradient");

  std::vector<float> dw_out(w.size(), 0.5f);  // added to
  convolution.BackwardWeights(x_blocked.data(), dy_blocked.data(), dw_out.data());
  for (double& value : dw) value += 0.5;
  ExpectClose(dw_out, dw, 1, g.outputs, g.channels, 9, "weight gradient");
}

INSTANTIATE_TEST_SUITE_P(
    Geometries, WinogradConvolutionTest,
    ::testing::Values(Case{"WholeTilesPlain", Geometry(2, 8, 16, 8, 8, 1, 1, 1, 1)},
                      Case{"PartialTilesRectangular", Geometry(2, 16, 8, 9, 13, 1, 1, 1, 1)},
                      Case{"UnpaddedAndPaddedTwice", Geometry(1, 8, 8, 11, 7, 0, 2, 1, 1)},
                      Case{"BlocksOfEight", Geometry(2, 24, 40, 10, 6, 1, 1, 8, 8)},
                      Case{"BlocksOfSixteenInPlainOut", Geometry(2, 32, 16, 7, 7, 1, 1, 16, 1)},
                      Case{"PlainInBlocksOfEightOut", Geometry(3, 16, 24, 6, 9, 1, 0, 1, 8)},
                      Case{"OneOutputRow", Geometry(2, 8, 8, 3, 5, 0, 1, 8, 8)},
                      // 36 points x 196 tiles x 64 channels is 1.8 MB an image: the 5 images go in
                      // three groups (4 MB of tiles each).
                      Case{"SeveralGroupsOfImages", Geometry(5, 64, 8, 56, 56, 1, 1, 8, 8)}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(WinogradConvolutionGeometryTest, TakesWholeBlocksOfEightAndPadsUpToTwo) {
  EXPECT_TRUE(WinogradTakes(Geometry(1, 8, 8, 4, 4, 1, 1, 1, 1)));
  EXPECT_FALSE(WinogradTakes(Geometry(1, 12, 8, 4, 4, 1, 1, 1, 1)));  // channels
  EXPECT_FALSE(WinogradTakes(Geometry(1, 8, 20, 4, 4, 1, 1, 1, 1)));  // outputs
  EXPECT_FALSE(WinogradTakes(Geometry(1, 8, 8, 4, 4, 3, 1, 1, 1)));   // pad
  EXPECT_FALSE(WinogradTakes(Geometry(1, 8, 8, 2, 2, 0, 0, 1, 1)));   // no output
  EXPECT_FALSE(WinogradTakes(Geometry(1, 8, 8, 4, 4, 1, 1, 16, 1)));  // a block past the channels
  EXPECT_FALSE(WinogradTakes(Geometry(1, 16, 8, 4, 4, 1, 1, 1, 4)));  // not oneDNN's blocks
}

#endif  // USE_DNNL

}  // namespace caffe
