// ConvolutionLayer: shapes for every way of giving the geometry, forward and backward against a
// direct (loop-over-everything) convolution on 1-D, 2-D and 3-D inputs with padding, strides,
// dilation and groups, both for batches the layer runs one image per GEMM and for batches of
// small images it runs several images per GEMM, finite-difference gradients, and bad parameters.
// ConvolutionLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
// Legend: N images, C channels, C_out outputs, G groups, H/W (D) spatial sizes.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/kernels/im2col.hpp"
#include "caffe/layers/convolution_layer.hpp"
#include "caffe/memory/memory_use.hpp"
#include "caffe/test/column_budget.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

// The geometry of a reference convolution over bottom (N, C, spatial...).
struct Geometry {
  std::vector<int> kernel, pad, stride, dilation;
  int group = 1;
};

// "convolution_param { ... }" text for a geometry with every field given per axis.
std::string ConvParamText(const Geometry& g, int num_output, bool bias_term = true) {
  std::string text = "name: 'conv' type: 'Convolution' convolution_param { num_output: " +
                     std::to_string(num_output) + " group: " + std::to_string(g.group) +
                     (bias_term ? "" : " bias_term: false");
  for (size_t i = 0; i < g.kernel.size(); ++i) {
    text += " kernel_size: " + std::to_string(g.kernel[i]) + " pad: " + std::to_string(g.pad[i]) +
            " stride: " + std::to_string(g.stride[i]) +
            " dilation: " + std::to_string(g.dilation[i]);
  }
  return text +
         " weight_filler { type: 'gaussian' std: 1 } bias_filler { type: 'gaussian' std: 1 } }";
}

// Walks every index of `shape` in row-major order.
bool NextIndex(const std::vector<int>& shape, std::vector<int>* index) {
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    if (++(*index)[i] < shape[i]) return true;
    (*index)[i] = 0;
  }
  return false;
}

// Calls visit(n, o, c, top offset, bottom offset, weight offset) for every product of the
// convolution; bottom offset -1 marks a tap in the padding.
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
    for (int o = 0; o < outputs; ++o) {
      const int grp = o / group_out;
      std::vector<int> y(axes, 0);
      for (int y_flat = 0; y_flat < out_size; ++y_flat, NextIndex(out, &y)) {
        const int top_offset = (n * outputs + o) * out_size + y_flat;
        for (int ci = 0; ci < group_in; ++ci) {
          const int c = grp * group_in + ci;
          std::vector<int> t(axes, 0);
          for (int t_flat = 0; t_flat < taps; ++t_flat, NextIndex(g.kernel, &t)) {
            int x_flat = 0;
            bool inside = true;
            for (int i = 0; i < axes; ++i) {
              const int x = y[i] * g.stride[i] - g.pad[i] + t[i] * g.dilation[i];
              inside = inside && x >= 0 && x < in[i];
              x_flat = x_flat * in[i] + x;
            }
            visit(n, o, top_offset, inside ? (n * channels + c) * in_size + x_flat : -1,
                  (o * group_in + ci) * taps + t_flat);
          }
        }
      }
    }
  }
}

}  // namespace

template <typename TypeParam>
class ConvolutionLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  ConvolutionLayerTest() : bottom_(std::vector<int>{2, 3, 6, 5}) { FillGaussian(&bottom_, 1701); }

  // Runs the layer on bottom_ and compares top, bottom diff and param diffs with the direct
  // convolution, for a top diff of N(0, 1) values.
  void CheckAgainstReference(const Geometry& g, int num_output, bool bias_term = true,
                             const std::string& extra = "") {
    std::string text = ConvParamText(g, num_output, bias_term);
    text.insert(text.size() - 2, " " + extra);
    ConvolutionLayer<Dtype> layer(ParseLayerParam(text));
    layer.SetUp(bottom_vec_, top_vec_);
    layer.Forward(bottom_vec_, top_vec_);
    const Dtype* x = bottom_.cpu_data();
    const Dtype* w = layer.blobs()[0]->cpu_data();
    std::vector<Dtype> expected(top_.count(), Dtype(0));
    ForEachProduct(bottom_.shape(), top_.shape(), g, [&](int, int, int y, int xi, int wi) {
      if (xi >= 0) expected[y] += w[wi] * x[xi];
    });
    const int out_size = top_.count(2);
    if (bias_term) {
      for (int i = 0; i < top_.count(); ++i) {
        expected[i] += layer.blobs()[1]->cpu_data()[(i / out_size) % num_output];
      }
    }
    const Dtype tolerance = sizeof(Dtype) == 4 ? 1e-4 : 1e-10;
    for (int i = 0; i < top_.count(); ++i) {
      ASSERT_NEAR(top_.cpu_data()[i], expected[i], tolerance * (1 + std::abs(expected[i])))
          << "top " << i << " of " << top_.shape_string();
    }

    FillGaussian(&top_, 7);  // the values are not needed any more
    caffe_copy(top_.count(), top_.cpu_data(), top_.mutable_cpu_diff());
    for (auto& blob : layer.blobs()) {
      caffe_set(blob->count(), Dtype(0), blob->mutable_cpu_diff());
    }
    layer.Backward(top_vec_, {true}, bottom_vec_);
    const Dtype* dy = top_.cpu_diff();
    std::vector<Dtype> dx(bottom_.count(), Dtype(0)), dw(layer.blobs()[0]->count(), Dtype(0));
    std::vector<Dtype> db(num_output, Dtype(0));
    ForEachProduct(bottom_.shape(), top_.shape(), g, [&](int, int o, int y, int xi, int wi) {
      if (xi < 0) return;
      dx[xi] += w[wi] * dy[y];
      dw[wi] += x[xi] * dy[y];
    });
    for (int i = 0; i < top_.count(); ++i) db[(i / out_size) % num_output] += dy[i];
    auto expect_near = [&](const Dtype* actual, const std::vector<Dtype>& wanted,
                           const char* what) {
      for (size_t i = 0; i < wanted.size(); ++i) {
        ASSERT_NEAR(actual[i], wanted[i], tolerance * (1 + std::abs(wanted[i])))
            << what << " " << i;
      }
    };
    expect_near(bottom_.cpu_diff(), dx, "bottom diff");
    expect_near(layer.blobs()[0]->cpu_diff(), dw, "weight diff");
    if (bias_term) expect_near(layer.blobs()[1]->cpu_diff(), db, "bias diff");
  }

  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(ConvolutionLayerTest, TestDtypesAndDevices);

TYPED_TEST(ConvolutionLayerTest, TopAndParamShapes) {
  using Dtype = typename TypeParam::Dtype;
  ConvolutionLayer<Dtype> layer(ParseLayerParam(
      "name: 'conv' type: 'Convolution' convolution_param { num_output: 4 kernel_size: 3 "
      "stride: 2 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (std::vector<int>{2, 4, 2, 2}));
  ASSERT_EQ(layer.blobs().size(), 2u);
  EXPECT_EQ(layer.blobs()[0]->shape(), (std::vector<int>{4, 3, 3, 3}));
  EXPECT_EQ(layer.blobs()[1]->shape(), (std::vector<int>{4}));
}

TYPED_TEST(ConvolutionLayerTest, TwoBottomsShareTheWeights) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom2(std::vector<int>{2, 3, 6, 5}), top2;
  FillGaussian(&bottom2, 5);
  Blobs<Dtype> bottoms{&this->bottom_, &bottom2}, tops{&this->top_, &top2};
  ConvolutionLayer<Dtype> layer(ParseLayerParam(
      "name: 'conv' type: 'Convolution' convolution_param { num_output: 4 kernel_size: 3 "
      "weight_filler { type: 'gaussian' } }"));
  layer.SetUp(bottoms, tops);
  layer.Forward(bottoms, tops);
  EXPECT_EQ(top2.shape(), (std::vector<int>{2, 4, 4, 3}));
  // The second top is the first one's computation applied to the second bottom.
  Blob<Dtype> single_top;
  Blobs<Dtype> single_bottoms{&bottom2}, single_tops{&single_top};
  layer.Reshape(single_bottoms, single_tops);
  layer.Forward(single_bottoms, single_tops);
  for (int i = 0; i < top2.count(); ++i) EXPECT_EQ(top2.cpu_data()[i], single_top.cpu_data()[i]);
}

TYPED_TEST(ConvolutionLayerTest, RectangularGeometryFromHAndWFields) {
  using Dtype = typename TypeParam::Dtype;
  ConvolutionLayer<Dtype> layer(ParseLayerParam(
      "name: 'conv' type: 'Convolution' convolution_param { num_output: 2 kernel_h: 3 "
      "kernel_w: 2 pad_h: 1 pad_w: 0 stride_h: 2 stride_w: 3 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  // H: (6 + 2 - 3) / 2 + 1 = 3; W: (5 - 2) / 3 + 1 = 2.
  EXPECT_EQ(this->top_.shape(), (std::vector<int>{2, 2, 3, 2}));
  EXPECT_EQ(layer.blobs()[0]->shape(), (std::vector<int>{2, 3, 3, 2}));
}

TYPED_TEST(ConvolutionLayerTest, PerAxisRepeatedFieldsAndDilation) {
  using Dtype = typename TypeParam::Dtype;
  ConvolutionLayer<Dtype> layer(ParseLayerParam(
      "name: 'conv' type: 'Convolution' convolution_param { num_output: 6 group: 3 "
      "kernel_size: 2 kernel_size: 3 pad: 2 stride: 1 stride: 2 dilation: 3 dilation: 1 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  // H: extent 3 * (2 - 1) + 1 = 4: (6 + 4 - 4) / 1 + 1 = 7; W: (5 + 4 - 3) / 2 + 1 = 4.
  EXPECT_EQ(this->top_.shape(), (std::vector<int>{2, 6, 7, 4}));
  EXPECT_EQ(layer.blobs()[0]->shape(), (std::vector<int>{6, 1, 2, 3}));
}

TYPED_TEST(ConvolutionLayerTest, OneAndThreeSpatialAxes) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom_1d(std::vector<int>{2, 3, 9}), bottom_3d(std::vector<int>{2, 4, 5, 6, 7});
  Blobs<Dtype> bottoms_1d{&bottom_1d}, bottoms_3d{&bottom_3d};
  ConvolutionLayer<Dtype> conv_1d(ParseLayerParam(
      "name: 'c' type: 'Convolution' convolution_param { num_output: 5 kernel_size: 3 "
      "stride: 2 pad: 1 bias_term: false }"));
  conv_1d.SetUp(bottoms_1d, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (std::vector<int>{2, 5, 5}));
  EXPECT_EQ(conv_1d.blobs().size(), 1u);
  EXPECT_EQ(conv_1d.blobs()[0]->shape(), (std::vector<int>{5, 3, 3}));
  ConvolutionLayer<Dtype> conv_3d(
      ParseLayerParam("name: 'c' type: 'Convolution' convolution_param { num_output: 4 group: 2 "
                      "kernel_size: 3 kernel_size: 1 kernel_size: 2 stride: 2 }"));
  conv_3d.SetUp(bottoms_3d, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (std::vector<int>{2, 4, 2, 3, 3}));
  EXPECT_EQ(conv_3d.blobs()[0]->shape(), (std::vector<int>{4, 2, 3, 1, 2}));
}

TYPED_TEST(ConvolutionLayerTest, ForwardMatchesHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  // 1 image, 1 channel, 3x3 input 1..9; two 2x2 filters; bias 0.5 and -1.
  Blob<Dtype> bottom(std::vector<int>{1, 1, 3, 3});
  for (int i = 0; i < 9; ++i) bottom.mutable_cpu_data()[i] = i + 1;
  Blobs<Dtype> bottoms{&bottom};
  ConvolutionLayer<Dtype> layer(ParseLayerParam(
      "name: 'conv' type: 'Convolution' convolution_param { num_output: 2 kernel_size: 2 "
      "bias_filler { type: 'constant' value: 0.5 } }"));
  layer.SetUp(bottoms, this->top_vec_);
  const Dtype weights[8] = {1, 0, 0, -1,  // x[h][w] - x[h+1][w+1]
                            1, 1, 1, 1};  // window sum
  caffe_copy(8, weights, layer.blobs()[0]->mutable_cpu_data());
  layer.blobs()[1]->mutable_cpu_data()[1] = -1;
  layer.Forward(bottoms, this->top_vec_);
  const Dtype expected[8] = {-3.5, -3.5, -3.5, -3.5, 11, 15, 23, 27};
  ASSERT_EQ(this->top_.count(), 8);
  for (int i = 0; i < 8; ++i) EXPECT_NEAR(this->top_.cpu_data()[i], expected[i], 1e-6) << i;
}

TYPED_TEST(ConvolutionLayerTest, MatchesDirectConvolution2d) {
  this->CheckAgainstReference({{3, 3}, {1, 1}, {1, 1}, {1, 1}, 1}, 4);
  this->CheckAgainstReference({{3, 2}, {2, 0}, {2, 3}, {1, 1}, 3}, 6);         // groups
  this->CheckAgainstReference({{2, 3}, {1, 2}, {1, 2}, {2, 1}, 1}, 2);         // dilation
  this->CheckAgainstReference({{1, 1}, {0, 0}, {1, 1}, {1, 1}, 3}, 3);         // 1x1
  this->CheckAgainstReference({{1, 1}, {0, 0}, {2, 2}, {1, 1}, 1}, 2);         // strided 1x1
  this->CheckAgainstReference({{7, 6}, {1, 1}, {1, 1}, {1, 1}, 1}, 2, false);  // only with pad
}

// Depthwise convolutions (group = channels; num_output a multiple of them) run directly on the
// CPU, not by im2col + GEMM: MobileNet's 3x3, strided, and with 2 and 3 filters per channel on
// rectangular, dilated, padded and strided geometries, with and without bias.
TYPED_TEST(ConvolutionLayerTest, DepthwiseMatchesDirectConvolution) {
  this->bottom_.Reshape({3, 4, 9, 8});
  FillGaussian(&this->bottom_, 1702);
  this->CheckAgainstReference({{3, 3}, {1, 1}, {1, 1}, {1, 1}, 4}, 4);
  this->CheckAgainstReference({{3, 3}, {1, 1}, {2, 2}, {1, 1}, 4}, 4);
  this->CheckAgainstReference({{3, 2}, {2, 0}, {2, 3}, {2, 1}, 4}, 8);
  this->CheckAgainstReference({{5, 5}, {0, 3}, {3, 1}, {1, 2}, 4}, 12, false);
  this->CheckAgainstReference({{1, 1}, {0, 0}, {1, 2}, {1, 1}, 4}, 4);
}

TYPED_TEST(ConvolutionLayerTest, DepthwiseGradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  this->bottom_.Reshape({2, 3, 5, 4});
  FillGaussian(&this->bottom_, 12);
  ConvolutionLayer<Dtype> layer(
      ParseLayerParam(ConvParamText({{3, 3}, {1, 1}, {2, 1}, {1, 1}, 3}, 6)));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ConvolutionLayerTest, DepthwiseDeclaresNoColumnBuffersToLms) {
  // LMS moves what a layer declares; the depthwise kernels use no column buffers, im2col does.
  using Dtype = typename TypeParam::Dtype;
  for (const int group : {1, 3}) {
    ConvolutionLayer<Dtype> layer(
        ParseLayerParam(ConvParamText({{3, 3}, {1, 1}, {1, 1}, {1, 1}, group}, 3)));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    for (const Pass pass : {Pass::kForward, Pass::kBackward}) {
      MemoryUses own, plain;
      ASSERT_TRUE(layer.DeclareMemoryUse(pass, this->bottom_vec_, this->top_vec_, {true}, &own));
      layer.Layer<Dtype>::DeclareMemoryUse(pass, this->bottom_vec_, this->top_vec_, {true}, &plain);
      if (group == 1) {
        EXPECT_GT(own.uses().size(), plain.uses().size()) << "im2col's column buffer";
      } else {
        EXPECT_EQ(own.uses().size(), plain.uses().size()) << "depthwise";
      }
    }
  }
}

TYPED_TEST(ConvolutionLayerTest, ForceNdIm2colGivesTheSameResult) {
  this->CheckAgainstReference({{3, 2}, {2, 1}, {2, 1}, {1, 2}, 3}, 3, true,
                              "force_nd_im2col: true");
}

TYPED_TEST(ConvolutionLayerTest, MatchesDirectConvolution1dAnd3d) {
  this->bottom_.Reshape({3, 4, 11});
  FillGaussian(&this->bottom_, 3);
  this->CheckAgainstReference({{3}, {2}, {2}, {2}, 2}, 4);
  this->bottom_.Reshape({2, 2, 4, 5, 3});
  FillGaussian(&this->bottom_, 4);
  this->CheckAgainstReference({{2, 3, 2}, {1, 0, 1}, {2, 1, 1}, {1, 1, 2}, 2}, 4);
  this->CheckAgainstReference({{1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 1}, 3);
}

// Batches of small images run several images per GEMM (with a shorter last chunk); large images
// one per GEMM. Both must give the direct convolution's results.
TYPED_TEST(ConvolutionLayerTest, MatchesDirectConvolutionForLargeBatchesOfSmallImages) {
  this->bottom_.Reshape({151, 2, 4, 4});
  FillGaussian(&this->bottom_, 5);
  this->CheckAgainstReference({{3, 3}, {1, 1}, {1, 1}, {1, 1}, 2}, 4);
  this->CheckAgainstReference({{1, 1}, {0, 0}, {1, 1}, {1, 1}, 1}, 3);
  this->bottom_.Reshape({3, 1, 50, 48});
  FillGaussian(&this->bottom_, 6);
  this->CheckAgainstReference({{3, 3}, {1, 1}, {1, 1}, {1, 1}, 1}, 2);
  this->CheckAgainstReference({{1, 1}, {0, 0}, {1, 1}, {1, 1}, 1}, 2);
}

TYPED_TEST(ConvolutionLayerTest, AxisTwoTreatsLeadingAxesAsBatch) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 3, 2, 5, 4}), top;
  FillGaussian(&bottom, 8);
  Blobs<Dtype> bottoms{&bottom}, tops{&top};
  ConvolutionLayer<Dtype> layer(ParseLayerParam(
      "name: 'conv' type: 'Convolution' convolution_param { num_output: 3 kernel_size: 2 "
      "axis: 2 weight_filler { type: 'gaussian' } bias_filler { type: 'gaussian' } }"));
  layer.SetUp(bottoms, tops);
  ASSERT_EQ(top.shape(), (std::vector<int>{2, 3, 3, 4, 3}));
  layer.Forward(bottoms, tops);
  // Same as axis 1 on the (6, 2, 5, 4) view with the same weights.
  this->bottom_.Reshape({6, 2, 5, 4});
  caffe_copy(bottom.count(), bottom.cpu_data(), this->bottom_.mutable_cpu_data());
  LayerParameter param = ParseLayerParam(
      "name: 'conv' type: 'Convolution' convolution_param { num_output: 3 kernel_size: 2 }");
  for (auto& blob : layer.blobs()) blob->ToProto(param.add_blobs());
  ConvolutionLayer<Dtype> flat(param);
  flat.SetUp(this->bottom_vec_, this->top_vec_);
  flat.Forward(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(this->top_.count(), top.count());
  for (int i = 0; i < top.count(); ++i) EXPECT_EQ(top.cpu_data()[i], this->top_.cpu_data()[i]);
}

TYPED_TEST(ConvolutionLayerTest, ParamDiffsAccumulateAndBottomDiffIsOptional) {
  using Dtype = typename TypeParam::Dtype;
  // Im2col + GEMM, and a depthwise convolution (group = channels), which runs directly.
  const std::vector<std::pair<Geometry, int>> cases{{{{3, 3}, {1, 1}, {1, 1}, {1, 1}}, 2},
                                                    {{{3, 3}, {1, 1}, {2, 2}, {1, 1}, 3}, 6}};
  for (const auto& [geometry, outputs] : cases) {
    ConvolutionLayer<Dtype> layer(ParseLayerParam(ConvParamText(geometry, outputs)));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    layer.Forward(this->bottom_vec_, this->top_vec_);
    FillGaussian(&this->top_, 9);
    caffe_copy(this->top_.count(), this->top_.cpu_data(), this->top_.mutable_cpu_diff());
    for (auto& blob : layer.blobs()) caffe_set(blob->count(), Dtype(0), blob->mutable_cpu_diff());
    caffe_set(this->bottom_.count(), Dtype(42), this->bottom_.mutable_cpu_diff());
    layer.Backward(this->top_vec_, {false}, this->bottom_vec_);
    for (int i = 0; i < this->bottom_.count(); ++i) ASSERT_EQ(this->bottom_.cpu_diff()[i], 42);
    std::vector<Dtype> once(layer.blobs()[0]->cpu_diff(),
                            layer.blobs()[0]->cpu_diff() + layer.blobs()[0]->count());
    const Dtype bias_once = layer.blobs()[1]->cpu_diff()[1];
    layer.Backward(this->top_vec_, {false}, this->bottom_vec_);
    for (size_t i = 0; i < once.size(); ++i) {
      EXPECT_NEAR(layer.blobs()[0]->cpu_diff()[i], 2 * once[i], 1e-4 * (1 + std::abs(once[i])));
    }
    EXPECT_NEAR(layer.blobs()[1]->cpu_diff()[1], 2 * bias_once, 1e-4 * (1 + std::abs(bias_once)));
    // Frozen weights (lr_mult 0 makes the net turn param_propagate_down off) get no diff.
    layer.set_param_propagate_down(0, false);
    caffe_set(layer.blobs()[0]->count(), Dtype(0), layer.blobs()[0]->mutable_cpu_diff());
    layer.Backward(this->top_vec_, {true}, this->bottom_vec_);
    EXPECT_EQ(layer.blobs()[0]->asum_diff(), 0);
    EXPECT_GT(this->bottom_.asum_diff(), 0);
  }
}

TYPED_TEST(ConvolutionLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  this->bottom_.Reshape({2, 4, 4, 3});
  FillGaussian(&this->bottom_, 10);
  ConvolutionLayer<Dtype> layer(
      ParseLayerParam(ConvParamText({{3, 2}, {1, 0}, {2, 1}, {1, 2}, 2}, 4)));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ConvolutionLayerTest, GradientsMatchFiniteDifferences3d) {
  using Dtype = typename TypeParam::Dtype;
  this->bottom_.Reshape({2, 2, 3, 3, 2});
  FillGaussian(&this->bottom_, 11);
  ConvolutionLayer<Dtype> layer(
      ParseLayerParam(ConvParamText({{2, 2, 2}, {0, 1, 1}, {1, 2, 1}, {1, 1, 1}, 1}, 2)));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(ConvolutionLayerTest, RejectsBadParameters) {
  using Dtype = typename TypeParam::Dtype;
  auto setup = [&](const std::string& conv_param) {
    ConvolutionLayer<Dtype> layer(ParseLayerParam(
        "name: 'conv' type: 'Convolution' convolution_param { " + conv_param + " }"));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
  };
  EXPECT_NO_THROW(setup("num_output: 2 kernel_size: 3"));
  EXPECT_THROW(setup("num_output: 2"), Error);   // no kernel
  EXPECT_THROW(setup("kernel_size: 3"), Error);  // no num_output
  EXPECT_THROW(setup("num_output: 2 kernel_size: 0"), Error);
  EXPECT_THROW(setup("num_output: 2 kernel_size: 3 stride: 0"), Error);
  EXPECT_THROW(setup("num_output: 2 kernel_size: 3 dilation: 0"), Error);
  EXPECT_THROW(setup("num_output: 2 kernel_size: 1 kernel_size: 2 kernel_size: 3"), Error);
  EXPECT_THROW(setup("num_output: 2 kernel_size: 3 pad: 1 pad: 1 pad: 1"), Error);
  EXPECT_THROW(setup("num_output: 2 kernel_size: 3 kernel_h: 3 kernel_w: 3"), Error);
  EXPECT_THROW(setup("num_output: 2 kernel_h: 3"), Error);                 // no kernel_w
  EXPECT_THROW(setup("num_output: 2 kernel_size: 3 stride_h: 2"), Error);  // no stride_w
  EXPECT_THROW(setup("num_output: 2 kernel_size: 3 group: 2"), Error);     // 3 channels
  EXPECT_THROW(setup("num_output: 3 kernel_size: 3 group: 0"), Error);
  EXPECT_THROW(setup("num_output: 2 kernel_size: 3 group: 3"), Error);     // 2 outputs
  EXPECT_THROW(setup("num_output: 2 kernel_size: 7"), Error);              // larger than 6x5
  EXPECT_THROW(setup("num_output: 2 kernel_size: 3 dilation: 3"), Error);  // extent 7
  EXPECT_NO_THROW(setup("num_output: 2 kernel_size: 7 pad: 1"));
  EXPECT_THROW(setup("num_output: 2 kernel_size: 3 axis: 4"), Error);

  Blob<Dtype> bottom_3d(std::vector<int>{1, 2, 4, 4, 4});
  Blobs<Dtype> bottoms_3d{&bottom_3d};
  ConvolutionLayer<Dtype> hw_on_3d(ParseLayerParam(
      "name: 'conv' type: 'Convolution' convolution_param { num_output: 2 kernel_h: 3 "
      "kernel_w: 3 }"));
  EXPECT_THROW(hw_on_3d.SetUp(bottoms_3d, this->top_vec_), Error);
}

TYPED_TEST(ConvolutionLayerTest, RejectsBadBottomsAndWeights) {
  using Dtype = typename TypeParam::Dtype;
  const std::string text =
      "name: 'conv' type: 'Convolution' convolution_param { num_output: 2 kernel_size: 3 }";
  ConvolutionLayer<Dtype> layer(ParseLayerParam(text));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  Blob<Dtype> other_channels(std::vector<int>{2, 4, 6, 5}), other_axes(std::vector<int>{2, 3, 6}),
      second(std::vector<int>{2, 3, 7, 5}), top2;
  Blobs<Dtype> bottoms{&other_channels};
  EXPECT_THROW(layer.Reshape(bottoms, this->top_vec_), Error);
  bottoms = {&other_axes};
  EXPECT_THROW(layer.Reshape(bottoms, this->top_vec_), Error);
  Blobs<Dtype> two_bottoms{&this->bottom_, &second}, two_tops{&this->top_, &top2};
  EXPECT_THROW(layer.Reshape(two_bottoms, two_tops), Error);
  Blobs<Dtype> one_top{&this->top_};
  ConvolutionLayer<Dtype> unpaired(ParseLayerParam(text));
  EXPECT_THROW(unpaired.SetUp(two_bottoms, one_top), Error);

  // Weights supplied with the layer (as from a .caffemodel) must have the expected shape.
  LayerParameter with_blobs = ParseLayerParam(text);
  Blob<Dtype> weights(std::vector<int>{2, 3, 3, 2}), bias(std::vector<int>{2});
  weights.ToProto(with_blobs.add_blobs());
  bias.ToProto(with_blobs.add_blobs());
  ConvolutionLayer<Dtype> wrong_weights(with_blobs);
  EXPECT_THROW(wrong_weights.SetUp(this->bottom_vec_, this->top_vec_), Error);
  with_blobs.clear_blobs();
  weights.Reshape({2, 3, 3, 3});
  weights.ToProto(with_blobs.add_blobs());
  ConvolutionLayer<Dtype> missing_bias(with_blobs);
  EXPECT_THROW(missing_bias.SetUp(this->bottom_vec_, this->top_vec_), Error);
  bias.ToProto(with_blobs.add_blobs());
  ConvolutionLayer<Dtype> good(with_blobs);
  EXPECT_NO_THROW(good.SetUp(this->bottom_vec_, this->top_vec_));
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----
// The cases name engine CAFFE, so that neither DNNL (CPU) nor cuDNN (GPU, the default there)
// replaces the code under test.

template <typename Dtype>
class ConvolutionLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(ConvolutionLayerGpuTest, TestDtypes);

TYPED_TEST(ConvolutionLayerGpuTest, ConvolutionStridePad) {
  // Output 2 x 5 x 5 x 6 (300 values); the input 1782 values.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE", "num_output: 5 kernel_size: 3 stride: 2 pad: 1"),
      {{2, 3, 9, 11}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(ConvolutionLayerGpuTest, ConvolutionLargerThanManyBlocks) {
  // 16 x 9 = 144 column rows, 2 x 32 x 31 x 29 = 57536 outputs.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE", "num_output: 32 kernel_size: 3 pad: 1"),
      {{2, 16, 31, 29}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(ConvolutionLayerGpuTest, ConvolutionGroupsDilationRectangularKernel) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText(
          "Convolution", "CAFFE",
          "num_output: 6 group: 2 kernel_size: 3 kernel_size: 2 dilation: 2 pad: 2 "
          "stride: 1 stride: 2"),
      {{2, 4, 13, 12}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(ConvolutionLayerGpuTest, ConvolutionDepthwiseHeightWidthForms) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText(
          "Convolution", "CAFFE",
          "num_output: 6 group: 6 kernel_h: 5 kernel_w: 3 pad_h: 2 pad_w: 0 stride_h: 2 "
          "stride_w: 1"),
      {{3, 6, 15, 10}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(ConvolutionLayerGpuTest, ConvolutionDepthwiseMultiplierDilation) {
  // The depthwise kernels: 2 filters per channel, dilation, padding; 646 output positions per
  // channel, so each weight gradient's block loops over more values than it has threads.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE",
                           "num_output: 16 group: 8 kernel_size: 3 dilation: 2 pad: 2"),
      {{2, 8, 17, 19}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(ConvolutionLayerGpuTest, ConvolutionDepthwiseStrideTwoWithoutBias) {
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>(ConvolutionLayerText("Convolution", "CAFFE",
                                                  "num_output: 5 group: 5 kernel_size: 3 "
                                                  "stride: 2 pad: 1",
                                                  /*bias=*/false),
                             {{3, 5, 14, 11}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(ConvolutionLayerGpuTest, ConvolutionOneByOneWithoutBias) {
  // A 1x1 stride-1 unpadded kernel multiplies the image itself (no im2col).
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE", "num_output: 16 kernel_size: 1", /*bias=*/false),
      {{3, 8, 7, 9}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(ConvolutionLayerGpuTest, ConvolutionOneByOneStrideTwoGroups) {
  // 1x1 but strided: not the direct path.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE",
                           "num_output: 6 group: 3 kernel_size: 1 stride: 2"),
      {{2, 9, 11, 8}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(ConvolutionLayerGpuTest, Convolution3d) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText(
          "Convolution", "CAFFE",
          "num_output: 4 kernel_size: 3 kernel_size: 2 kernel_size: 3 pad: 1 pad: 0 pad: 1 "
          "stride: 1 stride: 2 stride: 1 dilation: 1 dilation: 1 dilation: 2"),
      {{2, 3, 5, 6, 7}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(ConvolutionLayerGpuTest, Convolution1d) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE", "num_output: 5 kernel_size: 4 stride: 3 pad: 2"),
      {{3, 4, 50}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(ConvolutionLayerGpuTest, ConvolutionForceNdIm2col) {
  // 2-D through the N-D im2col kernels.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText(
          "Convolution", "CAFFE",
          "num_output: 4 kernel_size: 3 stride: 2 pad: 1 dilation: 2 force_nd_im2col: true"),
      {{2, 3, 10, 9}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(ConvolutionLayerGpuTest, ConvolutionNoSpatialAxes) {
  // (N, C) bottoms: an inner product through the 1x1 path.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE", "num_output: 7 kernel_size: 1"), {{5, 12}},
      GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(ConvolutionLayerGpuTest, ConvolutionTwoBottomsShareWeights) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE", "num_output: 3 kernel_size: 3", /*bias=*/true,
                           "bottom: 'a' bottom: 'b' top: 'c' top: 'd'"),
      {{2, 2, 7, 8}, {2, 2, 7, 8}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(ConvolutionLayerGpuTest, ConvolutionPropagateDownFalse) {
  GpuLayerCase<TypeParam> test_case = MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE", "num_output: 4 kernel_size: 3"), {{2, 3, 8, 9}},
      GpuLongSumTolerance<TypeParam>());
  test_case.propagate_down = {false};
  ExpectGpuMatchesCpu(test_case);
}

TYPED_TEST(ConvolutionLayerGpuTest, ConvolutionTiledImages) {
  // 27 column rows x 143 positions per image; a budget of 3 output lines' columns (27 x 13 x 3)
  // makes both paths convolve in tiles of 3 lines, the last one short.
  ColumnBudget<TypeParam> budget(27 * 13 * 3);
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE", "num_output: 5 kernel_size: 3 pad: 1"),
      {{2, 3, 11, 13}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(ConvolutionLayerGpuTest, ConvolutionTiled3dWithGroups) {
  ColumnBudget<TypeParam> budget(200);
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      ConvolutionLayerText("Convolution", "CAFFE",
                           "num_output: 4 group: 2 kernel_size: 2 stride: 1 pad: 1"),
      {{2, 4, 4, 5, 6}}, GpuLongSumTolerance<TypeParam>()));
}

}  // namespace caffe
