// DepthwiseForward, DepthwiseBackwardData and DepthwiseBackwardWeights against a direct loop in
// double, in float and double, on geometries that take each of their paths: 3x3 kernels at
// column stride 1 and 2 (all nine taps in one expression), and any other kernel, stride,
// dilation and multiplier (a loop over the taps); the input gradient gathered as a convolution
// of the top gradient (stride 1, one filter per channel) and otherwise added tap by tap; planes
// wider than a block of 8 outputs with a remainder, and windows that stop short of the input's
// end. The input gradient overwrites what was there; the weight gradient adds to it.
#include <cmath>
#include <string>
#include <vector>

#include "caffe/kernels/depthwise_convolution.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

struct Case {
  std::string name;
  DepthwiseGeometry g;
};

// g with its output size from Caffe's rule.
DepthwiseGeometry WithOutputs(DepthwiseGeometry g) {
  g.out_height = (g.height + 2 * g.pad_h - (g.dilation_h * (g.kernel_h - 1) + 1)) / g.stride_h + 1;
  g.out_width = (g.width + 2 * g.pad_w - (g.dilation_w * (g.kernel_w - 1) + 1)) / g.stride_w + 1;
  return g;
}

DepthwiseGeometry Geometry(int num, int channels, int multiplier, int height, int width,
                           int kernel_h, int kernel_w, int stride_h, int stride_w, int pad_h,
                           int pad_w, int dilation_h, int dilation_w) {
  DepthwiseGeometry g;
  g.num = num;
  g.channels = channels;
  g.multiplier = multiplier;
  g.height = height;
  g.width = width;
  g.kernel_h = kernel_h;
  g.kernel_w = kernel_w;
  g.stride_h = stride_h;
  g.stride_w = stride_w;
  g.pad_h = pad_h;
  g.pad_w = pad_w;
  g.dilation_h = dilation_h;
  g.dilation_w = dilation_w;
  return WithOutputs(g);
}

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {"ThreeByThree", Geometry(2, 3, 1, 17, 19, 3, 3, 1, 1, 1, 1, 1, 1)},
      {"ThreeByThreeStrideTwo", Geometry(2, 3, 1, 16, 21, 3, 3, 2, 2, 1, 1, 1, 1)},
      {"ThreeByThreeRowStrideTwoNoPad", Geometry(1, 4, 2, 9, 12, 3, 3, 2, 1, 0, 0, 1, 1)},
      {"ThreeByThreeShortOfTheEnd", Geometry(2, 2, 1, 12, 12, 3, 3, 4, 2, 0, 0, 1, 1)},
      {"RectangularDilatedStrided", Geometry(2, 3, 2, 13, 14, 5, 3, 3, 2, 2, 0, 2, 1)},
      {"DilatedThreeByThree", Geometry(1, 2, 3, 10, 9, 3, 3, 1, 1, 2, 2, 2, 2)},
      {"StrideThreeOneByOne", Geometry(2, 5, 1, 7, 10, 1, 1, 3, 3, 0, 0, 1, 1)},
      {"ColumnStrideTwoMultiplierTwo", Geometry(2, 2, 2, 11, 18, 3, 3, 1, 2, 1, 1, 1, 1)},
      {"RectangularDilatedStrideOne", Geometry(2, 3, 1, 11, 13, 5, 3, 1, 1, 1, 2, 2, 1)},
      {"PaddedBeyondTheKernel", Geometry(1, 2, 1, 6, 7, 3, 3, 1, 1, 3, 1, 1, 1)},
  };
  return cases;
}

// Calls visit(top index, bottom index, weight index) for every product of the convolution.
template <typename Visit>
void ForEachProduct(const DepthwiseGeometry& g, Visit visit) {
  const int outputs = g.channels * g.multiplier;
  for (int n = 0; n < g.num; ++n) {
    for (int o = 0; o < outputs; ++o) {
      for (int oy = 0; oy < g.out_height; ++oy) {
        for (int ox = 0; ox < g.out_width; ++ox) {
          for (int ky = 0; ky < g.kernel_h; ++ky) {
            for (int kx = 0; kx < g.kernel_w; ++kx) {
              const int iy = oy * g.stride_h - g.pad_h + ky * g.dilation_h;
              const int ix = ox * g.stride_w - g.pad_w + kx * g.dilation_w;
              if (iy < 0 || iy >= g.height || ix < 0 || ix >= g.width) continue;
              visit(((n * outputs + o) * g.out_height + oy) * g.out_width + ox,
                    ((n * g.channels + o / g.multiplier) * g.height + iy) * g.width + ix,
                    (o * g.kernel_h + ky) * g.kernel_w + kx);
            }
          }
        }
      }
    }
  }
}

// Deterministic values in [-1, 1).
template <typename Dtype>
std::vector<Dtype> Values(size_t count, int seed) {
  std::vector<Dtype> values(count);
  for (size_t i = 0; i < count; ++i) {
    values[i] = static_cast<Dtype>(std::sin(0.7 * i + seed) * 0.999);
  }
  return values;
}

template <typename Dtype>
void ExpectNear(const std::vector<Dtype>& actual, const std::vector<double>& expected,
                const std::string& what) {
  const double tolerance = sizeof(Dtype) == 4 ? 1e-5 : 1e-12;
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], tolerance * (1 + std::abs(expected[i])))
        << what << " " << i;
  }
}

template <typename Dtype>
void CheckAgainstTheDirectLoop(const Case& c) {
  const DepthwiseGeometry& g = c.g;
  const int outputs = g.channels * g.multiplier;
  const size_t x_count = static_cast<size_t>(g.num) * g.channels * g.height * g.width;
  const size_t y_count = static_cast<size_t>(g.num) * outputs * g.out_height * g.out_width;
  const size_t w_count = static_cast<size_t>(outputs) * g.kernel_h * g.kernel_w;
  const std::vector<Dtype> x = Values<Dtype>(x_count, 1), w = Values<Dtype>(w_count, 2);
  const std::vector<Dtype> bias = Values<Dtype>(outputs, 3), dy = Values<Dtype>(y_count, 4);

  std::vector<double> y_expected(y_count), dx_expected(x_count, 0), dw_expected(w_count, 1);
  const size_t plane = static_cast<size_t>(g.out_height) * g.out_width;
  for (size_t i = 0; i < y_count; ++i) y_expected[i] = bias[(i / plane) % outputs];
  ForEachProduct(g, [&](int top, int bottom, int weight) {
    y_expected[top] += static_cast<double>(w[weight]) * x[bottom];
    dx_expected[bottom] += static_cast<double>(w[weight]) * dy[top];
    dw_expected[weight] += static_cast<double>(dy[top]) * x[bottom];
  });

  std::vector<Dtype> y(y_count, Dtype(7)), dx(x_count, Dtype(7)), dw(w_count, Dtype(1));
  DepthwiseForward(g, x.data(), w.data(), bias.data(), y.data());
  ExpectNear(y, y_expected, c.name + " top");
  DepthwiseBackwardData(g, dy.data(), w.data(), dx.data());
  ExpectNear(dx, dx_expected, c.name + " bottom diff (overwritten)");
  DepthwiseBackwardWeights(g, dy.data(), x.data(), dw.data());
  ExpectNear(dw, dw_expected, c.name + " weight diff (added to ones)");

  // No bias: the top is the products alone.
  for (size_t i = 0; i < y_count; ++i) y_expected[i] -= bias[(i / plane) % outputs];
  DepthwiseForward<Dtype>(g, x.data(), w.data(), nullptr, y.data());
  ExpectNear(y, y_expected, c.name + " top without bias");
}

}  // namespace

TEST(DepthwiseConvolutionTest, FloatMatchesTheDirectLoop) {
  for (const Case& c : Cases()) CheckAgainstTheDirectLoop<float>(c);
}

TEST(DepthwiseConvolutionTest, DoubleMatchesTheDirectLoop) {
  for (const Case& c : Cases()) CheckAgainstTheDirectLoop<double>(c);
}

TEST(DepthwiseConvolutionTest, TheCasesCoverEveryPath) {
  // Widths above 8 (a block of outputs and a remainder), each 3x3 stride, the general loop; the
  // input gradient gathered as a forward convolution (stride 1, one filter per channel, padding
  // within the kernel's extent) and scattered otherwise, by the 3x3 stride-2 kernel and the
  // general loop.
  bool wide = false, stride_one = false, stride_two = false, general = false;
  bool gathered = false, scattered_stride_two = false, scattered_general = false;
  for (const Case& c : Cases()) {
    const DepthwiseGeometry& g = c.g;
    const bool three = g.kernel_h == 3 && g.kernel_w == 3 && g.dilation_h == 1 && g.dilation_w == 1;
    wide = wide || (g.out_width > 8 && g.out_width % 8 != 0);
    stride_one = stride_one || (three && g.stride_w == 1);
    stride_two = stride_two || (three && g.stride_w == 2);
    general = general || !three;
    const bool gathers = g.stride_h == 1 && g.stride_w == 1 && g.multiplier == 1 &&
                         g.pad_h <= g.dilation_h * (g.kernel_h - 1) &&
                         g.pad_w <= g.dilation_w * (g.kernel_w - 1);
    gathered = gathered || (gathers && !three);
    scattered_stride_two = scattered_stride_two || (three && g.stride_w == 2);
    scattered_general = scattered_general || (!gathers && !(three && g.stride_w == 2));
  }
  EXPECT_TRUE(wide && stride_one && stride_two && general);
  EXPECT_TRUE(gathered && scattered_stride_two && scattered_general);
}

}  // namespace caffe
