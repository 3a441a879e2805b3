// im2col / col2im against their definition, on awkward shapes: padding larger than a stride,
// dilation, rectangular kernels, kernels that only fit thanks to the padding, 1-D and 3-D, and
// the strided column layout used to batch images.
// Legend: C channels, H/W (D) image sizes, K kernel taps, S output positions.
#include <cmath>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/kernels/im2col.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

// One spatial configuration: sizes per axis (outermost first).
struct ConvGeometry {
  int channels;
  std::vector<int> input, kernel, pad, stride, dilation;
  std::vector<int> Output() const {
    std::vector<int> output;
    for (size_t i = 0; i < input.size(); ++i) {
      output.push_back(ConvOutputSize(input[i], kernel[i], pad[i], stride[i], dilation[i]));
    }
    return output;
  }
  std::vector<int> ImShape() const {
    std::vector<int> shape{channels};
    shape.insert(shape.end(), input.begin(), input.end());
    return shape;
  }
  std::vector<int> ColShape() const {
    int taps = channels;
    for (int k : kernel) taps *= k;
    std::vector<int> shape{taps};
    const std::vector<int> output = Output();
    shape.insert(shape.end(), output.begin(), output.end());
    return shape;
  }
};

int Product(const std::vector<int>& values, size_t from = 0) {
  int product = 1;
  for (size_t i = from; i < values.size(); ++i) product *= values[i];
  return product;
}

// The definition: col[(c, taps...)][(outputs...)] = im[c][o * stride - pad + tap * dilation].
template <typename Dtype>
std::vector<Dtype> ReferenceIm2col(const Dtype* im, const ConvGeometry& g) {
  const int axes = static_cast<int>(g.input.size());
  const std::vector<int> output = g.Output();
  const int taps = Product(g.kernel), outputs = Product(output), pixels = Product(g.input);
  std::vector<Dtype> col(static_cast<size_t>(g.channels) * taps * outputs);
  std::vector<int> tap(axes), out(axes);
  for (int c = 0; c < g.channels; ++c) {
    for (int t = 0; t < taps; ++t) {
      for (int rest = t, i = axes - 1; i >= 0; --i) {
        tap[i] = rest % g.kernel[i];
        rest /= g.kernel[i];
      }
      for (int o = 0; o < outputs; ++o) {
        for (int rest = o, i = axes - 1; i >= 0; --i) {
          out[i] = rest % output[i];
          rest /= output[i];
        }
        bool inside = true;
        int index = 0;
        for (int i = 0; i < axes; ++i) {
          const int position = out[i] * g.stride[i] - g.pad[i] + tap[i] * g.dilation[i];
          inside = inside && position >= 0 && position < g.input[i];
          index = index * g.input[i] + position;
        }
        col[(static_cast<size_t>(c) * taps + t) * outputs + o] =
            inside ? im[c * pixels + index] : Dtype(0);
      }
    }
  }
  return col;
}

std::vector<ConvGeometry> Geometries2d() {
  return {
      {1, {3, 3}, {2, 2}, {0, 0}, {1, 1}, {1, 1}},    // hand-checked below
      {3, {7, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},    // "same" padding
      {2, {10, 13}, {3, 5}, {2, 1}, {2, 3}, {1, 1}},  // rectangular, pad, stride
      {2, {11, 8}, {3, 2}, {3, 0}, {2, 1}, {2, 3}},   // dilation, pad > stride
      {1, {5, 4}, {7, 6}, {1, 1}, {1, 1}, {1, 1}},    // the kernel fits only with padding
      {4, {6, 6}, {1, 1}, {0, 0}, {1, 1}, {1, 1}},    // 1x1
      {2, {13, 7}, {1, 1}, {0, 0}, {4, 3}, {1, 1}},   // 1x1 with stride: skips pixels
      {3, {5, 5}, {3, 3}, {2, 2}, {3, 3}, {2, 2}},    // dilated and strided, pad 2
      {2, {6, 7}, {3, 3}, {2, 2}, {1, 1}, {2, 2}},    // "same" size with dilation
      {1, {4, 9}, {2, 3}, {0, 1}, {1, 1}, {1, 1}},    // same width, smaller height
  };
}

}  // namespace

template <typename Dtype>
class Im2colTest : public ::testing::Test {
 protected:
  std::vector<Dtype> Image(const ConvGeometry& g, unsigned int seed) {
    Blob<Dtype> blob(g.ImShape());
    FillGaussian(&blob, seed);
    return std::vector<Dtype>(blob.cpu_data(), blob.cpu_data() + blob.count());
  }
};
TYPED_TEST_SUITE(Im2colTest, TestDtypes);

TYPED_TEST(Im2colTest, MatchesHandComputedColumns) {
  using Dtype = TypeParam;
  // 3x3 image 1..9, 2x2 kernel, stride 1: 4 rows (taps) x 4 columns (output positions).
  const Dtype im[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  Dtype col[16];
  im2col_cpu(im, 1, 3, 3, 2, 2, 0, 0, 1, 1, 1, 1, col);
  const Dtype expected[16] = {1, 2, 4, 5,   // tap (0, 0)
                              2, 3, 5, 6,   // tap (0, 1)
                              4, 5, 7, 8,   // tap (1, 0)
                              5, 6, 8, 9};  // tap (1, 1)
  for (int i = 0; i < 16; ++i) EXPECT_EQ(col[i], expected[i]) << i;
  // With pad 1 and stride 2 the output is 2x2 and the first window sees mostly padding.
  im2col_cpu(im, 1, 3, 3, 2, 2, 1, 1, 2, 2, 1, 1, col);
  const Dtype padded[16] = {0, 0, 0, 5, 0, 0, 4, 6, 0, 2, 0, 8, 1, 3, 7, 9};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(col[i], padded[i]) << i;
}

TYPED_TEST(Im2colTest, TwoDMatchesDefinition) {
  using Dtype = TypeParam;
  for (const ConvGeometry& g : Geometries2d()) {
    const std::vector<Dtype> im = this->Image(g, 1);
    const std::vector<Dtype> expected = ReferenceIm2col(im.data(), g);
    std::vector<Dtype> col(expected.size(), Dtype(-7));
    im2col_cpu(im.data(), g.channels, g.input[0], g.input[1], g.kernel[0], g.kernel[1], g.pad[0],
               g.pad[1], g.stride[0], g.stride[1], g.dilation[0], g.dilation[1], col.data());
    for (size_t i = 0; i < col.size(); ++i) {
      ASSERT_EQ(col[i], expected[i]) << "input " << g.input[0] << "x" << g.input[1] << " at " << i;
    }
  }
}

TYPED_TEST(Im2colTest, NdMatchesDefinitionIn1d2dAnd3d) {
  using Dtype = TypeParam;
  std::vector<ConvGeometry> geometries = Geometries2d();
  geometries.push_back({2, {17}, {4}, {2}, {3}, {2}});
  geometries.push_back({1, {6}, {1}, {0}, {1}, {1}});
  geometries.push_back({2, {5, 6, 7}, {3, 2, 3}, {1, 0, 2}, {2, 1, 2}, {1, 2, 1}});
  geometries.push_back({3, {4, 4, 4}, {2, 2, 2}, {0, 0, 0}, {2, 2, 2}, {1, 1, 1}});
  for (const ConvGeometry& g : geometries) {
    const std::vector<Dtype> im = this->Image(g, 2);
    const std::vector<Dtype> expected = ReferenceIm2col(im.data(), g);
    std::vector<Dtype> col(expected.size(), Dtype(-7));
    const std::vector<int> im_shape = g.ImShape(), col_shape = g.ColShape();
    im2col_nd_cpu(im.data(), static_cast<int>(g.input.size()), im_shape.data(), col_shape.data(),
                  g.kernel.data(), g.pad.data(), g.stride.data(), g.dilation.data(), col.data());
    for (size_t i = 0; i < col.size(); ++i) {
      ASSERT_EQ(col[i], expected[i]) << g.input.size() << "-D geometry, value " << i;
    }
  }
}

// col2im is the adjoint of im2col: <im2col(x), y> = <x, col2im(y)> for all x, y.
TYPED_TEST(Im2colTest, Col2imIsTheAdjointOfIm2col) {
  using Dtype = TypeParam;
  std::vector<ConvGeometry> geometries = Geometries2d();
  geometries.push_back({2, {5, 6, 7}, {3, 2, 3}, {1, 0, 2}, {2, 1, 2}, {1, 2, 1}});
  for (const ConvGeometry& g : geometries) {
    const std::vector<Dtype> x = this->Image(g, 3);
    const std::vector<Dtype> x_col = ReferenceIm2col(x.data(), g);
    Blob<Dtype> y_blob({static_cast<int>(x_col.size())});
    FillGaussian(&y_blob, 4);
    const Dtype* y = y_blob.cpu_data();
    std::vector<Dtype> y_im(x.size(), Dtype(-7));
    const std::vector<int> im_shape = g.ImShape(), col_shape = g.ColShape();
    if (g.input.size() == 2) {
      col2im_cpu(y, g.channels, g.input[0], g.input[1], g.kernel[0], g.kernel[1], g.pad[0],
                 g.pad[1], g.stride[0], g.stride[1], g.dilation[0], g.dilation[1], y_im.data());
    } else {
      col2im_nd_cpu(y, static_cast<int>(g.input.size()), im_shape.data(), col_shape.data(),
                    g.kernel.data(), g.pad.data(), g.stride.data(), g.dilation.data(), y_im.data());
    }
    double lhs = 0, rhs = 0;
    for (size_t i = 0; i < x_col.size(); ++i) lhs += static_cast<double>(x_col[i]) * y[i];
    for (size_t i = 0; i < x.size(); ++i) rhs += static_cast<double>(x[i]) * y_im[i];
    EXPECT_NEAR(lhs, rhs, 1e-4 * (1 + std::abs(lhs)))
        << g.input.size() << "-D, " << g.channels << " channels";
    // The N-D path agrees with the 2-D one.
    if (g.input.size() == 2) {
      std::vector<Dtype> y_nd(x.size(), Dtype(5));
      col2im_nd_cpu(y, 2, im_shape.data(), col_shape.data(), g.kernel.data(), g.pad.data(),
                    g.stride.data(), g.dilation.data(), y_nd.data());
      for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(y_nd[i], y_im[i], 1e-5) << i;
    }
  }
}

// Two images written side by side with col_row_stride = 2 * S equal two separate im2cols, and
// col2im reads the same layout back.
TYPED_TEST(Im2colTest, RowStridePlacesImagesSideBySide) {
  using Dtype = TypeParam;
  for (const ConvGeometry& g :
       {Geometries2d()[2], Geometries2d()[3],
        ConvGeometry{2, {5, 6, 7}, {3, 2, 3}, {1, 0, 2}, {2, 1, 2}, {1, 2, 1}}}) {
    const std::vector<Dtype> a = this->Image(g, 5), b = this->Image(g, 6);
    const std::vector<Dtype> col_a = ReferenceIm2col(a.data(), g);
    const std::vector<Dtype> col_b = ReferenceIm2col(b.data(), g);
    const int outputs = Product(g.Output());
    const int rows = static_cast<int>(col_a.size()) / outputs;
    const int stride = 2 * outputs;
    std::vector<Dtype> both(static_cast<size_t>(rows) * stride, Dtype(-7));
    const std::vector<int> im_shape = g.ImShape(), col_shape = g.ColShape();
    const int axes = static_cast<int>(g.input.size());
    auto im2col = [&](const Dtype* im, Dtype* col) {
      if (axes == 2) {
        im2col_cpu(im, g.channels, g.input[0], g.input[1], g.kernel[0], g.kernel[1], g.pad[0],
                   g.pad[1], g.stride[0], g.stride[1], g.dilation[0], g.dilation[1], col, stride);
      } else {
        im2col_nd_cpu(im, axes, im_shape.data(), col_shape.data(), g.kernel.data(), g.pad.data(),
                      g.stride.data(), g.dilation.data(), col, stride);
      }
    };
    im2col(a.data(), both.data());
    im2col(b.data(), both.data() + outputs);
    for (int r = 0; r < rows; ++r) {
      for (int o = 0; o < outputs; ++o) {
        ASSERT_EQ(both[r * stride + o], col_a[r * outputs + o]);
        ASSERT_EQ(both[r * stride + outputs + o], col_b[r * outputs + o]);
      }
    }
    // col2im of image b's band equals col2im of its dense copy.
    std::vector<Dtype> from_band(a.size()), from_dense(a.size());
    if (axes == 2) {
      col2im_cpu(both.data() + outputs, g.channels, g.input[0], g.input[1], g.kernel[0],
                 g.kernel[1], g.pad[0], g.pad[1], g.stride[0], g.stride[1], g.dilation[0],
                 g.dilation[1], from_band.data(), stride);
      col2im_cpu(col_b.data(), g.channels, g.input[0], g.input[1], g.kernel[0], g.kernel[1],
                 g.pad[0], g.pad[1], g.stride[0], g.stride[1], g.dilation[0], g.dilation[1],
                 from_dense.data());
    } else {
      col2im_nd_cpu(both.data() + outputs, axes, im_shape.data(), col_shape.data(), g.kernel.data(),
                    g.pad.data(), g.stride.data(), g.dilation.data(), from_band.data(), stride);
      col2im_nd_cpu(col_b.data(), axes, im_shape.data(), col_shape.data(), g.kernel.data(),
                    g.pad.data(), g.stride.data(), g.dilation.data(), from_dense.data());
    }
    for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(from_band[i], from_dense[i]) << i;
  }
}

}  // namespace caffe
