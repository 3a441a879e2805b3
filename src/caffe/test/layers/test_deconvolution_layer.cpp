// DeconvolutionLayer: top shapes for 1-D, 2-D and 3-D inputs with stride, pad, dilation and groups;
// forward against hand-computed values and, with backward, against a direct scatter loop; exact
// adjointness with Convolution sharing its weights; finite-difference gradients; bad parameters;
// and BVLC's own numbers for the layerzoo fixture's "deconv" layer.
// DeconvolutionLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
// Legend: N images, C bottom channels, C_out num_output, G groups, k kernel, d bottom size,
// o top size along a spatial axis.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/io/hdf5.hpp"
#include "caffe/layers/convolution_layer.hpp"
#include "caffe/layers/deconvolution_layer.hpp"
#include "caffe/test/column_budget.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

// The geometry of a deconvolution, every field given per spatial axis.
struct Geometry {
  std::vector<int> kernel, pad, stride, dilation;
  int group = 1;
};

std::string GeometryText(const Geometry& g) {
  std::string text = " group: " + std::to_string(g.group);
  for (size_t i = 0; i < g.kernel.size(); ++i) {
    text += " kernel_size: " + std::to_string(g.kernel[i]) + " pad: " + std::to_string(g.pad[i]) +
            " stride: " + std::to_string(g.stride[i]) +
            " dilation: " + std::to_string(g.dilation[i]);
  }
  return text;
}

std::string DeconvText(const std::string& conv_param) {
  return "name: 'deconv' type: 'Deconvolution' convolution_param { " + conv_param + " }";
}

// Walks every index of `shape` in row-major order; false after the last one.
bool NextIndex(const std::vector<int>& shape, std::vector<int>* index) {
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    if (++(*index)[i] < shape[i]) return true;
    (*index)[i] = 0;
  }
  return false;
}

// Calls visit(bottom offset, top offset, weight offset) for every product of the deconvolution of
// bottom (N, C, d...) into top (N, C_out, o...): bottom[n][c][x] * W[c][o % (C_out / G)][t] lands
// on top[n][o][x * stride - pad + t * dilation] for each output o of c's group.
template <typename Visit>
void ForEachProduct(const std::vector<int>& bottom_shape, const std::vector<int>& top_shape,
                    const Geometry& g, Visit visit) {
  const int axes = static_cast<int>(bottom_shape.size()) - 2;
  const int channels = bottom_shape[1], outputs = top_shape[1];
  const int group_in = channels / g.group, group_out = outputs / g.group;
  const std::vector<int> in(bottom_shape.begin() + 2, bottom_shape.end());
  const std::vector<int> out(top_shape.begin() + 2, top_shape.end());
  int in_size = 1, out_size = 1, taps = 1;
  for (int i = 0; i < axes; ++i) {
    in_size *= in[i];
    out_size *= out[i];
    taps *= g.kernel[i];
  }
  for (int n = 0; n < bottom_shape[0]; ++n) {
    for (int c = 0; c < channels; ++c) {
      std::vector<int> x(axes, 0);
      for (int x_flat = 0; x_flat < in_size; ++x_flat, NextIndex(in, &x)) {
        for (int oi = 0; oi < group_out; ++oi) {
          const int o = c / group_in * group_out + oi;
          std::vector<int> t(axes, 0);
          for (int t_flat = 0; t_flat < taps; ++t_flat, NextIndex(g.kernel, &t)) {
            int y_flat = 0;
            bool inside = true;
            for (int i = 0; i < axes; ++i) {
              const int y = x[i] * g.stride[i] - g.pad[i] + t[i] * g.dilation[i];
              inside = inside && y >= 0 && y < out[i];
              y_flat = y_flat * out[i] + y;
            }
            if (!inside) continue;
            visit((n * channels + c) * in_size + x_flat, (n * outputs + o) * out_size + y_flat,
                  (c * group_out + oi) * taps + t_flat);
          }
        }
      }
    }
  }
}

template <typename Dtype>
double Dot(const Blob<Dtype>& a, const Blob<Dtype>& b) {
  double sum = 0;
  for (int i = 0; i < a.count(); ++i) sum += double(a.cpu_data()[i]) * b.cpu_data()[i];
  return sum;
}

}  // namespace

template <typename TypeParam>
class DeconvolutionLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  DeconvolutionLayerTest() : bottom_(std::vector<int>{2, 4, 3, 5}) { FillGaussian(&bottom_, 1701); }

  // Top shape of a deconvolution of `bottom_shape`, or "" and the error's message.
  std::string SetUpError(const std::string& conv_param, const std::vector<int>& bottom_shape) {
    Blob<Dtype> bottom(bottom_shape), top;
    Blobs<Dtype> bottoms{&bottom}, tops{&top};
    DeconvolutionLayer<Dtype> layer(ParseLayerParam(DeconvText(conv_param)));
    try {
      layer.SetUp(bottoms, tops);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

  // Runs the layer on a Gaussian bottom of `shape` and compares top, bottom diff and param diffs
  // with the direct scatter loop, for a Gaussian top diff.
  void CheckAgainstDirect(const std::vector<int>& shape, const Geometry& g, int num_output,
                          bool bias_term = true) {
    Blob<Dtype> bottom(shape), top;
    FillGaussian(&bottom, 3);
    Blobs<Dtype> bottoms{&bottom}, tops{&top};
    DeconvolutionLayer<Dtype> layer(ParseLayerParam(
        DeconvText("num_output: " + std::to_string(num_output) + GeometryText(g) +
                   (bias_term ? "" : " bias_term: false") +
                   " weight_filler { type: 'gaussian' } bias_filler { type: 'gaussian' }")));
    layer.SetUp(bottoms, tops);
    layer.Forward(bottoms, tops);
    const std::string where = GeometryText(g) + " on " + bottom.shape_string();
    const Dtype* x = bottom.cpu_data();
    const Dtype* w = layer.blobs()[0]->cpu_data();
    std::vector<double> expected(top.count(), 0.0);
    ForEachProduct(bottom.shape(), top.shape(), g,
                   [&](int xi, int yi, int wi) { expected[yi] += double(w[wi]) * x[xi]; });
    const int out_size = top.count(2);
    if (bias_term) {
      for (int i = 0; i < top.count(); ++i) {
        expected[i] += layer.blobs()[1]->cpu_data()[(i / out_size) % num_output];
      }
    }
    const double tolerance = sizeof(Dtype) == 4 ? 1e-4 : 1e-10;
    for (int i = 0; i < top.count(); ++i) {
      ASSERT_NEAR(top.cpu_data()[i], expected[i], tolerance * (1 + std::abs(expected[i])))
          << "top " << i << " of " << top.shape_string() << "; " << where;
    }

    FillGaussian(&top, 7);  // the forward values are not needed any more
    caffe_copy(top.count(), top.cpu_data(), top.mutable_cpu_diff());
    for (auto& blob : layer.blobs()) caffe_set(blob->count(), Dtype(0), blob->mutable_cpu_diff());
    layer.Backward(tops, {true}, bottoms);
    const Dtype* dy = top.cpu_diff();
    std::vector<double> dx(bottom.count(), 0.0), dw(layer.blobs()[0]->count(), 0.0);
    std::vector<double> db(num_output, 0.0);
    ForEachProduct(bottom.shape(), top.shape(), g, [&](int xi, int yi, int wi) {
      dx[xi] += double(w[wi]) * dy[yi];
      dw[wi] += double(x[xi]) * dy[yi];
    });
    for (int i = 0; i < top.count(); ++i) db[(i / out_size) % num_output] += dy[i];
    auto expect_near = [&](const Dtype* actual, const std::vector<double>& wanted,
                           const char* what) {
      for (size_t i = 0; i < wanted.size(); ++i) {
        ASSERT_NEAR(actual[i], wanted[i], tolerance * (1 + std::abs(wanted[i])))
            << what << " " << i << "; " << where;
      }
    };
    expect_near(bottom.cpu_diff(), dx, "bottom diff");
    expect_near(layer.blobs()[0]->cpu_diff(), dw, "weight diff");
    if (bias_term) expect_near(layer.blobs()[1]->cpu_diff(), db, "bias diff");
  }

  // <conv(x), y> = <x, deconv(y)> and deconv's bottom diff for top diff x equals conv(x), with
  // one weight blob: Convolution from x (C_x channels) to y (C_y) has weights (C_y, C_x / G, k...),
  // exactly the layout of the Deconvolution from y to x.
  void CheckAdjointOfConvolution(const std::vector<int>& x_shape, const std::string& geometry,
                                 int y_channels) {
    Blob<Dtype> x(x_shape), conv_top, y, deconv_top;
    FillGaussian(&x, 11);
    Blobs<Dtype> x_vec{&x}, conv_top_vec{&conv_top};
    ConvolutionLayer<Dtype> conv(
        ParseLayerParam("name: 'conv' type: 'Convolution' convolution_param { num_output: " +
                        std::to_string(y_channels) + " bias_term: false " + geometry +
                        " weight_filler { type: 'gaussian' } }"));
    conv.SetUp(x_vec, conv_top_vec);
    conv.Forward(x_vec, conv_top_vec);
    y.ReshapeLike(conv_top);
    FillGaussian(&y, 12);
    LayerParameter param = ParseLayerParam(
        DeconvText("num_output: " + std::to_string(x_shape[1]) + " bias_term: false " + geometry));
    conv.blobs()[0]->ToProto(param.add_blobs());
    DeconvolutionLayer<Dtype> deconv(param);
    Blobs<Dtype> y_vec{&y}, deconv_top_vec{&deconv_top};
    deconv.SetUp(y_vec, deconv_top_vec);
    ASSERT_EQ(deconv_top.shape(), x.shape()) << geometry;
    deconv.Forward(y_vec, deconv_top_vec);
    const double lhs = Dot(conv_top, y), rhs = Dot(x, deconv_top);
    const double tolerance = sizeof(Dtype) == 4 ? 1e-4 : 1e-10;
    EXPECT_NEAR(lhs, rhs, tolerance * (1 + std::abs(lhs)))
        << geometry << " on " << x.shape_string();

    // Backward of the deconvolution to its bottom is the convolution's forward.
    caffe_copy(x.count(), x.cpu_data(), deconv_top.mutable_cpu_diff());
    deconv.Backward(deconv_top_vec, {true}, y_vec);
    for (int i = 0; i < y.count(); ++i) {
      ASSERT_NEAR(y.cpu_diff()[i], conv_top.cpu_data()[i],
                  tolerance * (1 + std::abs(conv_top.cpu_data()[i])))
          << "bottom diff " << i << "; " << geometry << " on " << x.shape_string();
    }
  }

  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(DeconvolutionLayerTest, TestDtypesAndDevices);

TYPED_TEST(DeconvolutionLayerTest, TopAndParamShapes) {
  using Dtype = typename TypeParam::Dtype;
  DeconvolutionLayer<Dtype> layer(
      ParseLayerParam(DeconvText("num_output: 6 kernel_size: 3 stride: 2")));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_STREQ(layer.type(), "Deconvolution");
  // 2 * (3 - 1) + 3 = 7, 2 * (5 - 1) + 3 = 11.
  EXPECT_EQ(this->top_.shape(), (std::vector<int>{2, 6, 7, 11}));
  ASSERT_EQ(layer.blobs().size(), 2u);
  // Weights (C, C_out / G, k, k): BVLC's layout.
  EXPECT_EQ(layer.blobs()[0]->shape(), (std::vector<int>{4, 6, 3, 3}));
  EXPECT_EQ(layer.blobs()[1]->shape(), (std::vector<int>{6}));
}

TYPED_TEST(DeconvolutionLayerTest, TopShapesFollowTheFormulaForOneTwoAndThreeSpatialAxes) {
  using Dtype = typename TypeParam::Dtype;
  const struct {
    std::vector<int> bottom;
    const char* geometry;
    std::vector<int> top, weights;
  } cases[] = {
      // 3 * (10 - 1) + 4 - 2 * 2 = 27.
      {{3, 2, 10}, "num_output: 5 kernel_size: 4 stride: 3 pad: 2", {3, 5, 27}, {2, 5, 4}},
      // FCN-style 2x upsampling: 2 * (8 - 1) + 4 - 2 = 16.
      {{1, 6, 8, 8}, "num_output: 4 kernel_size: 4 stride: 2 pad: 1", {1, 4, 16, 16}, {6, 4, 4, 4}},
      // Dilation 2 on a 3-tap kernel spans 5: 1 * (4 - 1) + 5 - 0 = 8.
      {{2, 4, 4, 3},
       "num_output: 2 kernel_size: 3 dilation: 2 group: 2",
       {2, 2, 8, 7},
       {4, 1, 3, 3}},
      // 3-D, per axis (V-Net up-convolution): 2*(3-1)+2 = 6, 1*(4-1)+3-2 = 4, 2*(5-1)+2 = 10.
      {{1, 4, 3, 4, 5},
       "num_output: 8 kernel_size: 2 kernel_size: 3 kernel_size: 2 stride: 2 stride: 1 stride: 2 "
       "pad: 0 pad: 1 pad: 0",
       {1, 8, 6, 4, 10},
       {4, 8, 2, 3, 2}},
      // _h / _w fields.
      {{1, 2, 3, 4},
       "num_output: 3 kernel_h: 3 kernel_w: 1 stride_h: 2 stride_w: 3 pad_h: 1 pad_w: 0",
       {1, 3, 5, 10},
       {2, 3, 3, 1}},
  };
  for (const auto& c : cases) {
    Blob<Dtype> bottom(c.bottom), top;
    Blobs<Dtype> bottoms{&bottom}, tops{&top};
    DeconvolutionLayer<Dtype> layer(ParseLayerParam(DeconvText(c.geometry)));
    layer.SetUp(bottoms, tops);
    EXPECT_EQ(top.shape(), c.top) << c.geometry;
    EXPECT_EQ(layer.blobs()[0]->shape(), c.weights) << c.geometry;
  }
}

TYPED_TEST(DeconvolutionLayerTest, ForwardMatchesHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  // 1-D, bottom [1, 2, 3], kernel [1, 10, 100], bias 0.5. Each input spreads its kernel over the
  // top, starting at x * stride - pad, with taps dilation apart.
  const struct {
    const char* geometry;
    std::vector<Dtype> expected;
  } cases[] = {
      // Stride 1: the full correlation [1, 12, 123, 230, 300].
      {"stride: 1", {1.5, 12.5, 123.5, 230.5, 300.5}},
      // Pad 1 cuts one value from each end.
      {"stride: 1 pad: 1", {12.5, 123.5, 230.5}},
      // Stride 2: windows overlap in one place each: [1, 10, 102, 20, 203, 30, 300].
      {"stride: 2", {1.5, 10.5, 102.5, 20.5, 203.5, 30.5, 300.5}},
      // Dilation 2: taps at +0, +2, +4: [1, 2, 13, 20, 130, 200, 300].
      {"dilation: 2", {1.5, 2.5, 13.5, 20.5, 130.5, 200.5, 300.5}},
  };
  Blob<Dtype> bottom(std::vector<int>{1, 1, 3}), top;
  const Dtype x[3] = {1, 2, 3};
  caffe_copy(3, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottoms{&bottom}, tops{&top};
  for (const auto& c : cases) {
    DeconvolutionLayer<Dtype> layer(
        ParseLayerParam(DeconvText(std::string("num_output: 1 kernel_size: 3 ") + c.geometry +
                                   " bias_filler { type: 'constant' value: 0.5 }")));
    layer.SetUp(bottoms, tops);
    ASSERT_EQ(top.shape(), (std::vector<int>{1, 1, static_cast<int>(c.expected.size())}))
        << c.geometry;
    const Dtype kernel[3] = {1, 10, 100};
    caffe_copy(3, kernel, layer.blobs()[0]->mutable_cpu_data());
    layer.Forward(bottoms, tops);
    for (int i = 0; i < top.count(); ++i) {
      EXPECT_NEAR(top.cpu_data()[i], c.expected[i], 1e-4) << c.geometry << " at " << i;
    }
  }
}

TYPED_TEST(DeconvolutionLayerTest, GroupsKeepChannelsApart) {
  using Dtype = typename TypeParam::Dtype;
  // C = 2, C_out = 4, G = 2, 1x1 kernel: top channels 0-1 come from bottom channel 0 only,
  // channels 2-3 from bottom channel 1. Weights (2, 2, 1, 1) = [[1, 2], [3, 4]].
  Blob<Dtype> bottom(std::vector<int>{1, 2, 1, 2}), top;
  const Dtype x[4] = {1, 10, 100, 1000};  // channel 0: [1, 10], channel 1: [100, 1000]
  caffe_copy(4, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottoms{&bottom}, tops{&top};
  DeconvolutionLayer<Dtype> layer(
      ParseLayerParam(DeconvText("num_output: 4 group: 2 kernel_size: 1 bias_term: false")));
  layer.SetUp(bottoms, tops);
  ASSERT_EQ(layer.blobs()[0]->shape(), (std::vector<int>{2, 2, 1, 1}));
  const Dtype w[4] = {1, 2, 3, 4};
  caffe_copy(4, w, layer.blobs()[0]->mutable_cpu_data());
  layer.Forward(bottoms, tops);
  ASSERT_EQ(top.shape(), (std::vector<int>{1, 4, 1, 2}));
  const Dtype expected[8] = {1, 10, 2, 20, 300, 3000, 400, 4000};
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(top.cpu_data()[i], expected[i], 1e-3) << i;
}

TYPED_TEST(DeconvolutionLayerTest, MatchesDirectDeconvolution2d) {
  this->CheckAgainstDirect({2, 4, 3, 5}, {{3, 3}, {1, 1}, {2, 2}, {1, 1}, 1}, 3);
  this->CheckAgainstDirect({2, 4, 3, 5}, {{4, 3}, {1, 0}, {2, 3}, {1, 2}, 2}, 6);  // groups
  this->CheckAgainstDirect({1, 3, 4, 4}, {{1, 1}, {0, 0}, {1, 1}, {1, 1}, 1}, 5);  // 1x1
  this->CheckAgainstDirect({2, 2, 3, 3}, {{2, 2}, {0, 0}, {3, 3}, {1, 1}, 1}, 2, false);
}

TYPED_TEST(DeconvolutionLayerTest, MatchesDirectDeconvolution1dAnd3d) {
  this->CheckAgainstDirect({3, 2, 6}, {{3}, {1}, {2}, {2}, 2}, 4);
  this->CheckAgainstDirect({2, 2, 3, 2, 3}, {{2, 3, 2}, {0, 1, 1}, {2, 1, 2}, {1, 1, 2}, 1}, 3);
  this->CheckAgainstDirect({1, 4, 2, 3, 2}, {{2, 2, 2}, {0, 0, 0}, {2, 2, 2}, {1, 1, 1}, 2}, 2);
}

TYPED_TEST(DeconvolutionLayerTest, MatchesDirectDeconvolutionForLargeBatchesOfSmallImages) {
  // Many small images run several per GEMM (and in parallel): a shorter last chunk included.
  this->CheckAgainstDirect({37, 3, 2, 3}, {{3, 3}, {1, 1}, {2, 2}, {1, 1}, 1}, 4);
  this->CheckAgainstDirect({29, 2, 3, 3}, {{1, 1}, {0, 0}, {1, 1}, {1, 1}, 2}, 4);
}

TYPED_TEST(DeconvolutionLayerTest, IsTheAdjointOfConvolutionWithTheSameWeights) {
  // x shapes with (d + 2 pad - extent) divisible by stride, so deconv(conv(x)) has x's shape.
  this->CheckAdjointOfConvolution({2, 4, 7, 5}, "kernel_size: 3 stride: 2 pad: 1", 6);
  this->CheckAdjointOfConvolution({2, 4, 7, 5}, "kernel_size: 3 stride: 2 pad: 1 group: 2", 6);
  this->CheckAdjointOfConvolution({3, 2, 9, 6},
                                  "kernel_size: 3 kernel_size: 2 dilation: 2 dilation: 1", 3);
  this->CheckAdjointOfConvolution({2, 3, 4, 4}, "kernel_size: 1", 5);
  this->CheckAdjointOfConvolution({3, 2, 9}, "kernel_size: 3 stride: 3", 4);
  this->CheckAdjointOfConvolution({2, 2, 5, 3, 5}, "kernel_size: 3 stride: 2 pad: 1", 2);
  this->CheckAdjointOfConvolution({2, 2, 4, 4, 4}, "kernel_size: 2 stride: 2 group: 2", 4);
  this->CheckAdjointOfConvolution({67, 2, 3, 3}, "kernel_size: 3 pad: 1", 3);
}

TYPED_TEST(DeconvolutionLayerTest, TwoBottomsShareTheWeights) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom2(std::vector<int>{2, 4, 3, 5}), top2;
  FillGaussian(&bottom2, 5);
  Blobs<Dtype> bottoms{&this->bottom_, &bottom2}, tops{&this->top_, &top2};
  DeconvolutionLayer<Dtype> layer(ParseLayerParam(
      DeconvText("num_output: 3 kernel_size: 2 stride: 2 weight_filler { type: 'gaussian' } "
                 "bias_filler { type: 'gaussian' }")));
  layer.SetUp(bottoms, tops);
  layer.Forward(bottoms, tops);
  EXPECT_EQ(top2.shape(), (std::vector<int>{2, 3, 6, 10}));
  Blob<Dtype> single_top;
  Blobs<Dtype> single_bottoms{&bottom2}, single_tops{&single_top};
  layer.Reshape(single_bottoms, single_tops);
  layer.Forward(single_bottoms, single_tops);
  for (int i = 0; i < top2.count(); ++i) EXPECT_EQ(top2.cpu_data()[i], single_top.cpu_data()[i]);
}

TYPED_TEST(DeconvolutionLayerTest, ParamDiffsAccumulateAndBottomDiffIsOptional) {
  using Dtype = typename TypeParam::Dtype;
  DeconvolutionLayer<Dtype> layer(ParseLayerParam(
      DeconvText("num_output: 3 kernel_size: 3 stride: 2 weight_filler { type: 'gaussian' }")));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  FillGaussian(&this->top_, 9);
  caffe_copy(this->top_.count(), this->top_.cpu_data(), this->top_.mutable_cpu_diff());
  for (auto& blob : layer.blobs()) caffe_set(blob->count(), Dtype(0), blob->mutable_cpu_diff());
  caffe_set(this->bottom_.count(), Dtype(42), this->bottom_.mutable_cpu_diff());
  layer.Backward(this->top_vec_, {false}, this->bottom_vec_);
  for (int i = 0; i < this->bottom_.count(); ++i) {
    ASSERT_EQ(this->bottom_.cpu_diff()[i], Dtype(42)) << "bottom diff written at " << i;
  }
  std::vector<Dtype> once(layer.blobs()[0]->cpu_diff(),
                          layer.blobs()[0]->cpu_diff() + layer.blobs()[0]->count());
  const Dtype bias_once = layer.blobs()[1]->cpu_diff()[1];
  layer.Backward(this->top_vec_, {false}, this->bottom_vec_);
  for (size_t i = 0; i < once.size(); ++i) {
    EXPECT_NEAR(layer.blobs()[0]->cpu_diff()[i], 2 * once[i], 1e-4 * (1 + std::abs(once[i])));
  }
  EXPECT_NEAR(layer.blobs()[1]->cpu_diff()[1], 2 * bias_once, 1e-4 * (1 + std::abs(bias_once)));
}

TYPED_TEST(DeconvolutionLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 2, 2, 3});
  FillGaussian(&bottom, 31);
  Blobs<Dtype> bottoms{&bottom};
  DeconvolutionLayer<Dtype> layer(ParseLayerParam(
      DeconvText("num_output: 4 group: 2 kernel_size: 3 kernel_size: 2 stride: 2 pad: 1 "
                 "weight_filler { type: 'gaussian' } bias_filler { type: 'gaussian' }")));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradientExhaustive(&layer, bottoms, this->top_vec_);
}

TYPED_TEST(DeconvolutionLayerTest, GradientsMatchFiniteDifferences1dDilated) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 3, 3});
  FillGaussian(&bottom, 32);
  Blobs<Dtype> bottoms{&bottom};
  DeconvolutionLayer<Dtype> layer(ParseLayerParam(
      DeconvText("num_output: 2 kernel_size: 3 dilation: 2 stride: 2 pad: 1 "
                 "weight_filler { type: 'gaussian' } bias_filler { type: 'gaussian' }")));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradientExhaustive(&layer, bottoms, this->top_vec_);
}

TYPED_TEST(DeconvolutionLayerTest, GradientsMatchFiniteDifferences3d) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{1, 2, 2, 2, 2});
  FillGaussian(&bottom, 33);
  Blobs<Dtype> bottoms{&bottom};
  DeconvolutionLayer<Dtype> layer(ParseLayerParam(
      DeconvText("num_output: 2 kernel_size: 2 stride: 2 pad: 0 pad: 1 pad: 0 "
                 "weight_filler { type: 'gaussian' } bias_filler { type: 'gaussian' }")));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradientExhaustive(&layer, bottoms, this->top_vec_);
}

TYPED_TEST(DeconvolutionLayerTest, RejectsBadParameters) {
  const std::vector<int> image{2, 4, 3, 5};
  const struct {
    const char* conv_param;
    std::vector<int> shape;
    const char* says;
  } cases[] = {
      {"kernel_size: 3", image, "num_output must be >= 1"},
      {"num_output: 2", image, "kernel_size must be given once"},
      {"num_output: 2 kernel_size: 3 stride: 0", image, "stride along spatial axis 0 is 0"},
      {"num_output: 3 kernel_size: 3 group: 2", image,
       "num_output 3 must be a multiple of group 2"},
      {"num_output: 6 kernel_size: 3 group: 3", image,
       "the 4 input channels of bottom 2 4 3 5 (120) must be a multiple of group 3"},
      // 1 * (1 - 1) + 1 - 2 * 1 = -1.
      {"num_output: 2 kernel_size: 1 pad: 1",
       {1, 4, 1, 1},
       "spatial axis 0 of bottom 1 4 1 1 (4) gives output size -1"},
  };
  for (const auto& c : cases) {
    const std::string message = this->SetUpError(c.conv_param, c.shape);
    EXPECT_EQ(message.rfind("Deconvolution layer 'deconv': ", 0), 0u)
        << c.conv_param << " gave: " << message;
    EXPECT_NE(message.find(c.says), std::string::npos) << c.conv_param << " gave: " << message;
  }
}

TYPED_TEST(DeconvolutionLayerTest, RejectsWeightsOfTheWrongLayoutAndChangedBottoms) {
  using Dtype = typename TypeParam::Dtype;
  // Convolution's layout (C_out, C, k, k) instead of (C, C_out, k, k).
  LayerParameter param = ParseLayerParam(DeconvText("num_output: 3 kernel_size: 2"));
  Blob<Dtype>(std::vector<int>{3, 4, 2, 2}).ToProto(param.add_blobs());
  Blob<Dtype>(std::vector<int>{3}).ToProto(param.add_blobs());
  DeconvolutionLayer<Dtype> layer(param);
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), Error);

  DeconvolutionLayer<Dtype> good(ParseLayerParam(DeconvText("num_output: 3 kernel_size: 2")));
  good.SetUp(this->bottom_vec_, this->top_vec_);
  this->bottom_.Reshape({2, 5, 3, 5});
  EXPECT_THROW(good.Reshape(this->bottom_vec_, this->top_vec_), Error);
  this->bottom_.Reshape({2, 4, 3, 5, 1});
  EXPECT_THROW(good.Reshape(this->bottom_vec_, this->top_vec_), Error);
}

// The layerzoo fixture's "deconv" (6 -> 4 channels, kernel 4, stride 2, pad 1 on 8x8 images):
// forward, bottom diff, weight and bias diffs against BVLC's, from BVLC's inputs and top diff.
TYPED_TEST(DeconvolutionLayerTest, MatchesBvlcOnTheLayerzooFixture) {
  using Dtype = typename TypeParam::Dtype;
  CAFFE_REQUIRE_SHARED_DIR();
  Hdf5File file(SharedDir() + "/fixtures/golden/layerzoo/blobs.h5", H5F_ACC_RDONLY);
  auto load = [&](const std::string& path, Blob<Dtype>* blob) {
    hdf5_load_nd_dataset<Dtype>(file.id(), path.c_str(), 0, kMaxBlobAxes, blob, true);
  };
  // The deconv layer reads the second of the four Split copies of conv0's top c0.
  Blob<Dtype> bottom, weights, bias, expected_top, top_diff, expected_bottom_diff;
  Blob<Dtype> expected_weight_diff, expected_bias_diff;
  load("forward/c0_conv0_0_split_1", &bottom);
  load("param/deconv/0", &weights);
  load("param/deconv/1", &bias);
  load("forward/dc", &expected_top);
  load("backward/dc", &top_diff);
  load("backward/c0_conv0_0_split_1", &expected_bottom_diff);
  load("param_diff/deconv/0", &expected_weight_diff);
  load("param_diff/deconv/1", &expected_bias_diff);

  LayerParameter param =
      ParseLayerParam(DeconvText("num_output: 4 pad: 1 kernel_size: 4 stride: 2"));
  weights.ToProto(param.add_blobs());
  bias.ToProto(param.add_blobs());
  DeconvolutionLayer<Dtype> layer(param);
  Blobs<Dtype> bottoms{&bottom};
  layer.SetUp(bottoms, this->top_vec_);
  ASSERT_EQ(this->top_.shape(), expected_top.shape());
  layer.Forward(bottoms, this->top_vec_);
  caffe_copy(top_diff.count(), top_diff.cpu_data(), this->top_.mutable_cpu_diff());
  for (auto& blob : layer.blobs()) caffe_set(blob->count(), Dtype(0), blob->mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true}, bottoms);

  // max |ours - BVLC| <= 1e-4 max |BVLC|, the golden nets' bar.
  auto expect_close = [](const Dtype* ours, const Blob<Dtype>& bvlc, const char* what) {
    double max_diff = 0, max_ref = 0;
    for (int i = 0; i < bvlc.count(); ++i) {
      max_diff = std::max(max_diff, std::abs(double(ours[i]) - bvlc.cpu_data()[i]));
      max_ref = std::max(max_ref, std::abs(double(bvlc.cpu_data()[i])));
    }
    EXPECT_GT(max_ref, 0) << what;
    EXPECT_LE(max_diff, 1e-4 * max_ref)
        << what << ": max |ours - BVLC| = " << max_diff << ", max |BVLC| = " << max_ref;
  };
  expect_close(this->top_.cpu_data(), expected_top, "forward/dc");
  expect_close(bottom.cpu_diff(), expected_bottom_diff, "backward/c0_conv0_0_split_1");
  expect_close(layer.blobs()[0]->cpu_diff(), expected_weight_diff, "param_diff/deconv/0");
  expect_close(layer.blobs()[1]->cpu_diff(), expected_bias_diff, "param_diff/deconv/1");
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----
// The cases name engine CAFFE, so that neither DNNL (CPU) nor cuDNN (GPU, the default there)
// replaces the code under test.

template <typename Dtype>
class DeconvolutionLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(DeconvolutionLayerGpuTest, TestDtypes);

TYPED_TEST(DeconvolutionLayerGpuTest, DeconvolutionUpsamplingWithGroups) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Deconvolution", "CAFFE",
                           "num_output: 6 group: 2 kernel_size: 4 stride: 2 pad: 1"),
      {{2, 4, 9, 7}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(DeconvolutionLayerGpuTest, DeconvolutionDilatedRectangular) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText(
          "Deconvolution", "CAFFE",
          "num_output: 3 kernel_size: 3 kernel_size: 2 stride: 3 stride: 1 dilation: 2 "
          "pad: 1"),
      {{2, 5, 6, 8}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(DeconvolutionLayerGpuTest, DeconvolutionOneByOneWithoutBias) {
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>(ConvolutionLayerText("Deconvolution", "CAFFE",
                                                  "num_output: 10 kernel_size: 1", /*bias=*/false),
                             {{3, 7, 9, 11}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(DeconvolutionLayerGpuTest, Deconvolution3d) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Deconvolution", "CAFFE", "num_output: 3 kernel_size: 2 stride: 2"),
      {{2, 4, 3, 4, 5}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(DeconvolutionLayerGpuTest, DeconvolutionTiled) {
  // The image side is the top (17 x 19), the output side the bottom (8 x 9): 2 x 3 x 3 = 18
  // column rows, lines of 9 positions; the budget gives tiles of 3, 3 and 2 lines.
  ColumnBudget<TypeParam> budget(18 * 9 * 3);
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Deconvolution", "CAFFE", "num_output: 2 kernel_size: 3 stride: 2"),
      {{2, 3, 8, 9}}, GpuLongSumTolerance<TypeParam>()));
}

}  // namespace caffe
