// BaseConvolutionLayer, the shared part of convolution-like layers: how ConvolutionParameter is
// parsed into per-axis geometry (with the error each bad combination gives), the shapes of tops and
// weights for 0 to 4 spatial axes and leading batch axes, and the reverse-dimension path that
// Deconvolution will use, exercised through a minimal transposed-convolution layer defined here:
// it must be the adjoint of Convolution with the same weights and pass the gradient check.
// Legend: N images, C channels, C_out num_output, G group.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/kernels/im2col.hpp"
#include "caffe/layers/base_conv_layer.hpp"
#include "caffe/layers/convolution_layer.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

// Convolution with its parsed geometry visible.
template <typename Dtype>
class ProbeConvolutionLayer : public ConvolutionLayer<Dtype> {
 public:
  using ConvolutionLayer<Dtype>::ConvolutionLayer;
  const std::vector<int>& kernel_shape() const { return this->kernel_shape_; }
  const std::vector<int>& stride() const { return this->stride_; }
  const std::vector<int>& pad() const { return this->pad_; }
  const std::vector<int>& dilation() const { return this->dilation_; }
  int num_spatial_axes() const { return this->num_spatial_axes_; }
  int channel_axis() const { return this->channel_axis_; }
  bool is_1x1() const { return this->is_1x1_; }
  int num() const { return this->num_; }
  static void AddChannelBias(Dtype* data, int num, int channels, int spatial, const Dtype* bias) {
    BaseConvolutionLayer<Dtype>::AddChannelBias(data, num, channels, spatial, bias);
  }
  static void AccumulateChannelSums(const Dtype* data, int num, int channels, int spatial,
                                    Dtype* sums) {
    BaseConvolutionLayer<Dtype>::AccumulateChannelSums(data, num, channels, spatial, sums);
  }
};

// The transposed convolution (what BVLC calls Deconvolution), written the way the base class
// header says it maps onto the helpers: bottom is the GEMM's output side, top the image side.
template <typename Dtype>
class TransposedConvolutionLayer : public BaseConvolutionLayer<Dtype> {
 public:
  using BaseConvolutionLayer<Dtype>::BaseConvolutionLayer;
  const char* type() const override { return "TransposedConvolution"; }

 protected:
  bool reverse_dimensions() override { return true; }
  void compute_output_shape() override {
    this->output_shape_.clear();
    for (int i = 0; i < this->num_spatial_axes_; ++i) {
      const int input = (*this->bottom_shape_)[this->channel_axis_ + 1 + i];
      const int extent = this->dilation_[i] * (this->kernel_shape_[i] - 1) + 1;
      this->output_shape_.push_back(this->stride_[i] * (input - 1) + extent - 2 * this->pad_[i]);
    }
  }
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {
    const Dtype* weights = this->blobs_[0]->cpu_data();
    for (size_t i = 0; i < bottom.size(); ++i) {
      Dtype* out = top[i]->mutable_cpu_data();
      this->BackwardGemm(bottom[i]->cpu_data(), nullptr, this->num_, weights, nullptr, out);
      if (this->bias_term_) {
        this->AddChannelBias(out, this->num_, this->num_output_, this->out_spatial_dim_,
                             this->blobs_[1]->cpu_data());
      }
    }
  }
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override {
    const Dtype* weights = this->blobs_[0]->cpu_data();
    for (size_t i = 0; i < top.size(); ++i) {
      const Dtype* top_diff = top[i]->cpu_diff();
      if (this->bias_term_ && this->param_propagate_down_[1]) {
        this->AccumulateChannelSums(top_diff, this->num_, this->num_output_, this->out_spatial_dim_,
                                    this->blobs_[1]->mutable_cpu_diff());
      }
      if (this->param_propagate_down_[0]) {
        this->BackwardGemm(bottom[i]->cpu_data(), top_diff, this->num_, weights,
                           this->blobs_[0]->mutable_cpu_diff(), nullptr);
      }
      if (propagate_down[i]) {
        this->ImageToOutput(top_diff, this->num_, weights, nullptr, bottom[i]->mutable_cpu_diff());
      }
    }
  }
};

std::string ConvText(const std::string& conv_param) {
  return "name: 'conv' type: 'Convolution' convolution_param { " + conv_param + " }";
}

template <typename Dtype>
double Dot(const Blob<Dtype>& a, const Blob<Dtype>& b) {
  double sum = 0;
  for (int i = 0; i < a.count(); ++i) sum += double(a.cpu_data()[i]) * b.cpu_data()[i];
  return sum;
}

}  // namespace

template <typename TypeParam>
class BaseConvolutionLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  BaseConvolutionLayerTest() : bottom_(std::vector<int>{2, 4, 7, 6}) { FillGaussian(&bottom_, 3); }

  // Sets up a Convolution on `shape` and returns the error message, or "" if it succeeded.
  std::string SetUpError(const std::string& conv_param, const std::vector<int>& shape) {
    Blob<Dtype> bottom(shape), top;
    Blobs<Dtype> bottoms{&bottom}, tops{&top};
    ConvolutionLayer<Dtype> layer(ParseLayerParam(ConvText(conv_param)));
    try {
      layer.SetUp(bottoms, tops);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

  // Checks <conv(x), y> = <x, transposed_conv(y)> with shared weights: the reverse path computes
  // exactly the adjoint of the forward path.
  void CheckAdjoint(const std::vector<int>& x_shape, const std::string& geometry, int num_output) {
    Blob<Dtype> x(x_shape), conv_top, y, transposed_top;
    FillGaussian(&x, 11);
    Blobs<Dtype> x_vec{&x}, conv_top_vec{&conv_top};
    ProbeConvolutionLayer<Dtype> conv(ParseLayerParam(
        ConvText("num_output: " + std::to_string(num_output) + " bias_term: false " + geometry +
                 " weight_filler { type: 'gaussian' }")));
    conv.SetUp(x_vec, conv_top_vec);
    conv.Forward(x_vec, conv_top_vec);
    y.ReshapeLike(conv_top);
    FillGaussian(&y, 12);
    Blobs<Dtype> y_vec{&y}, transposed_top_vec{&transposed_top};
    LayerParameter param = ParseLayerParam(
        "name: 'tconv' convolution_param { num_output: " + std::to_string(x_shape[1]) +
        " bias_term: false " + geometry + " }");
    conv.blobs()[0]->ToProto(param.add_blobs());  // (C_out, C / G, k...) fits both
    TransposedConvolutionLayer<Dtype> transposed(param);
    transposed.SetUp(y_vec, transposed_top_vec);
    ASSERT_EQ(transposed_top.shape(), x.shape()) << geometry;
    transposed.Forward(y_vec, transposed_top_vec);
    const double lhs = Dot(conv_top, y), rhs = Dot(x, transposed_top);
    EXPECT_NEAR(lhs, rhs, (sizeof(Dtype) == 4 ? 1e-4 : 1e-10) * (1 + std::abs(lhs)))
        << geometry << " on " << x.shape_string();
  }

  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(BaseConvolutionLayerTest, TestDtypesAndDevices);

TYPED_TEST(BaseConvolutionLayerTest, SingleValuesApplyToEveryAxisAndDefaultsAreBvlcs) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{1, 2, 9, 8, 7});
  Blobs<Dtype> bottoms{&bottom};
  ProbeConvolutionLayer<Dtype> layer(ParseLayerParam(ConvText("num_output: 2 kernel_size: 3")));
  layer.SetUp(bottoms, this->top_vec_);
  EXPECT_EQ(layer.num_spatial_axes(), 3);
  EXPECT_EQ(layer.kernel_shape(), (std::vector<int>{3, 3, 3}));
  EXPECT_EQ(layer.stride(), (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(layer.pad(), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(layer.dilation(), (std::vector<int>{1, 1, 1}));
  EXPECT_FALSE(layer.is_1x1());
  EXPECT_EQ(this->top_.shape(), (std::vector<int>{1, 2, 7, 6, 5}));
}

TYPED_TEST(BaseConvolutionLayerTest, PerAxisAndHeightWidthFormsGiveTheSameGeometry) {
  using Dtype = typename TypeParam::Dtype;
  ProbeConvolutionLayer<Dtype> per_axis(ParseLayerParam(
      ConvText("num_output: 2 kernel_size: 3 kernel_size: 2 stride: 2 stride: 1 pad: 1 pad: 0")));
  per_axis.SetUp(this->bottom_vec_, this->top_vec_);
  const std::vector<int> per_axis_top = this->top_.shape();
  ProbeConvolutionLayer<Dtype> hw(ParseLayerParam(
      ConvText("num_output: 2 kernel_h: 3 kernel_w: 2 stride_h: 2 stride_w: 1 pad_h: 1 pad_w: 0")));
  hw.SetUp(this->bottom_vec_, this->top_vec_);
  for (const auto* layer : {&per_axis, &hw}) {
    EXPECT_EQ(layer->kernel_shape(), (std::vector<int>{3, 2}));
    EXPECT_EQ(layer->stride(), (std::vector<int>{2, 1}));
    EXPECT_EQ(layer->pad(), (std::vector<int>{1, 0}));
  }
  // H: (7 + 2 - 3) / 2 + 1 = 4; W: (6 - 2) / 1 + 1 = 5.
  EXPECT_EQ(per_axis_top, (std::vector<int>{2, 2, 4, 5}));
  EXPECT_EQ(this->top_.shape(), per_axis_top);
}

TYPED_TEST(BaseConvolutionLayerTest, OneByOneIsDetectedOnlyWithoutStrideOrPadding) {
  using Dtype = typename TypeParam::Dtype;
  const struct {
    const char* geometry;
    bool is_1x1;
  } cases[] = {{"kernel_size: 1", true},
               {"kernel_size: 1 stride: 2", false},
               {"kernel_size: 1 pad: 1", false},
               {"kernel_size: 1 dilation: 3", true},  // dilation does not move a single tap
               {"kernel_size: 1 kernel_size: 3", false}};
  for (const auto& c : cases) {
    ProbeConvolutionLayer<Dtype> layer(
        ParseLayerParam(ConvText(std::string("num_output: 3 ") + c.geometry)));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    EXPECT_EQ(layer.is_1x1(), c.is_1x1) << c.geometry;
  }
}

TYPED_TEST(BaseConvolutionLayerTest, TopShapesFollowTheFormulaForOneToFourSpatialAxes) {
  using Dtype = typename TypeParam::Dtype;
  const struct {
    std::vector<int> bottom;
    const char* geometry;
    std::vector<int> top;
  } cases[] = {
      {{3, 2, 10}, "kernel_size: 4 stride: 3 pad: 2", {3, 5, 4}},  // (10 + 4 - 4) / 3 + 1
      {{1, 2, 5, 5}, "kernel_size: 5", {1, 5, 1, 1}},
      {{1, 2, 8, 9, 10},
       "kernel_size: 3 dilation: 2 dilation: 1 dilation: 3 pad: 1",
       {1, 5, 6, 9, 6}},  // extents 5, 3, 7
      {{2, 2, 4, 5, 6, 7},
       "kernel_size: 2 kernel_size: 1 kernel_size: 3 kernel_size: 2 stride: 2",
       {2, 5, 2, 3, 2, 3}},
  };
  for (const auto& c : cases) {
    Blob<Dtype> bottom(c.bottom);
    Blobs<Dtype> bottoms{&bottom};
    ProbeConvolutionLayer<Dtype> layer(
        ParseLayerParam(ConvText(std::string("num_output: 5 ") + c.geometry)));
    layer.SetUp(bottoms, this->top_vec_);
    EXPECT_EQ(this->top_.shape(), c.top) << c.geometry;
    // Weights: (C_out, C, kernel...).
    std::vector<int> weight_shape{5, 2};
    weight_shape.insert(weight_shape.end(), layer.kernel_shape().begin(),
                        layer.kernel_shape().end());
    EXPECT_EQ(layer.blobs()[0]->shape(), weight_shape) << c.geometry;
  }
}

TYPED_TEST(BaseConvolutionLayerTest, FourSpatialAxesMatchAPlainLoop) {
  using Dtype = typename TypeParam::Dtype;
  // bottom (1, 2, 3, 4, 3, 4), kernel 2 on every axis, stride 1 except the last (2), pad 1 on the
  // second axis: top (1, 2, 2, 5, 2, 2).
  Blob<Dtype> bottom(std::vector<int>{1, 2, 3, 4, 3, 4});
  FillGaussian(&bottom, 21);
  Blobs<Dtype> bottoms{&bottom};
  ProbeConvolutionLayer<Dtype> layer(ParseLayerParam(
      ConvText("num_output: 2 kernel_size: 2 stride: 1 stride: 1 stride: 1 stride: 2 "
               "pad: 0 pad: 1 pad: 0 pad: 0 weight_filler { type: 'gaussian' } "
               "bias_filler { type: 'gaussian' }")));
  layer.SetUp(bottoms, this->top_vec_);
  ASSERT_EQ(this->top_.shape(), (std::vector<int>{1, 2, 2, 5, 2, 2}));
  layer.Forward(bottoms, this->top_vec_);
  const Dtype* w = layer.blobs()[0]->cpu_data();
  const Dtype* b = layer.blobs()[1]->cpu_data();
  const int in[4] = {3, 4, 3, 4}, out[4] = {2, 5, 2, 2}, stride[4] = {1, 1, 1, 2},
            pad[4] = {0, 1, 0, 0};
  for (int o = 0; o < 2; ++o) {
    for (int y0 = 0; y0 < out[0]; ++y0)
      for (int y1 = 0; y1 < out[1]; ++y1)
        for (int y2 = 0; y2 < out[2]; ++y2)
          for (int y3 = 0; y3 < out[3]; ++y3) {
            double expected = b[o];
            for (int c = 0; c < 2; ++c)
              for (int t = 0; t < 16; ++t) {
                const int taps[4] = {(t >> 3) & 1, (t >> 2) & 1, (t >> 1) & 1, t & 1};
                const int ys[4] = {y0, y1, y2, y3};
                int offset = c;
                bool inside = true;
                for (int a = 0; a < 4; ++a) {
                  const int x = ys[a] * stride[a] - pad[a] + taps[a];
                  inside = inside && x >= 0 && x < in[a];
                  offset = offset * in[a] + x;
                }
                if (inside) expected += double(w[(o * 2 + c) * 16 + t]) * bottom.cpu_data()[offset];
              }
            const int top_offset = (((o * out[0] + y0) * out[1] + y1) * out[2] + y2) * out[3] + y3;
            EXPECT_NEAR(this->top_.cpu_data()[top_offset], expected,
                        1e-4 * (1 + std::abs(expected)))
                << "output " << o << " at (" << y0 << ", " << y1 << ", " << y2 << ", " << y3 << ")";
          }
  }
}

TYPED_TEST(BaseConvolutionLayerTest, NoSpatialAxesActsAsAnInnerProduct) {
  using Dtype = typename TypeParam::Dtype;
  for (int num : {1, 5}) {  // one image reads the bottom directly; several go through columns
    Blob<Dtype> bottom(std::vector<int>{num, 6});
    FillGaussian(&bottom, 4);
    Blobs<Dtype> bottoms{&bottom};
    ProbeConvolutionLayer<Dtype> layer(
        ParseLayerParam(ConvText("num_output: 3 kernel_size: 1 weight_filler { type: 'gaussian' } "
                                 "bias_filler { type: 'gaussian' }")));
    layer.SetUp(bottoms, this->top_vec_);
    EXPECT_EQ(layer.num_spatial_axes(), 0);
    ASSERT_EQ(this->top_.shape(), (std::vector<int>{num, 3}));
    EXPECT_EQ(layer.blobs()[0]->shape(), (std::vector<int>{3, 6}));
    layer.Forward(bottoms, this->top_vec_);
    for (int n = 0; n < num; ++n) {
      for (int o = 0; o < 3; ++o) {
        double expected = layer.blobs()[1]->cpu_data()[o];
        for (int c = 0; c < 6; ++c) {
          expected +=
              double(layer.blobs()[0]->cpu_data()[o * 6 + c]) * bottom.cpu_data()[n * 6 + c];
        }
        EXPECT_NEAR(this->top_.cpu_data()[n * 3 + o], expected, 1e-5) << n << ", " << o;
      }
    }
  }
}

TYPED_TEST(BaseConvolutionLayerTest, LeadingAxesBeforeTheChannelAxisAreBatch) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 3, 4, 5, 6});
  Blobs<Dtype> bottoms{&bottom};
  ProbeConvolutionLayer<Dtype> layer(
      ParseLayerParam(ConvText("num_output: 7 kernel_size: 2 axis: -3")));
  layer.SetUp(bottoms, this->top_vec_);
  EXPECT_EQ(layer.channel_axis(), 2);
  EXPECT_EQ(layer.num(), 6);
  EXPECT_EQ(this->top_.shape(), (std::vector<int>{2, 3, 7, 4, 5}));
  EXPECT_EQ(layer.blobs()[0]->shape(), (std::vector<int>{7, 4, 2, 2}));
}

TYPED_TEST(BaseConvolutionLayerTest, ParameterErrorsNameTheLayerAndTheRule) {
  const std::vector<int> image{2, 4, 7, 6}, volume{1, 4, 5, 5, 5};
  const struct {
    const char* conv_param;
    std::vector<int> shape;
    const char* says;
  } cases[] = {
      {"num_output: 2", image,
       "kernel_size must be given once, or once per spatial axis; it is given 0 times for 2"},
      {"num_output: 2 kernel_size: 1 kernel_size: 2", volume, "it is given 2 times for 3"},
      {"num_output: 2 kernel_size: 3 stride: 1 stride: 1 stride: 1", image,
       "stride must be given once"},
      {"num_output: 2 kernel_size: 3 dilation: 1 dilation: 2 dilation: 1", image,
       "dilation must be given once"},
      {"num_output: 2 kernel_h: 3 kernel_w: 3", volume,
       "kernel_h and kernel_w can only be used for 2-D convolution"},
      {"num_output: 2 kernel_size: 3 kernel_h: 3 kernel_w: 3", image,
       "give either kernel_size or kernel_h and kernel_w, not both"},
      {"num_output: 2 kernel_size: 3 pad: 1 pad_h: 1 pad_w: 1", image,
       "give either pad or pad_h and pad_w, not both"},
      {"num_output: 2 kernel_h: 3", image, "kernel_h and kernel_w must be given together"},
      {"num_output: 2 kernel_size: 3 stride_w: 2", image,
       "stride_h and stride_w must be given together"},
      {"num_output: 2 kernel_size: 3 kernel_size: 0", image,
       "kernel size along spatial axis 1 is 0; must be >= 1"},
      {"num_output: 2 kernel_size: 3 stride: 0", image, "stride along spatial axis 0 is 0"},
      {"num_output: 2 kernel_size: 3 dilation: 0", image, "dilation along spatial axis 0 is 0"},
      {"kernel_size: 3", image, "num_output must be >= 1"},
      {"num_output: 2 kernel_size: 3 group: 0", image, "group must be >= 1"},
      {"num_output: 3 kernel_size: 3 group: 3", image,
       "the 4 input channels of bottom 2 4 7 6 (336) must be a multiple of group 3"},
      {"num_output: 3 kernel_size: 3 group: 2", image,
       "num_output 3 must be a multiple of group 2"},
      {"num_output: 2 kernel_size: 3 stride: 1 kernel_size: 7", image,
       "does not fit spatial axis 1 of bottom 2 4 7 6 (336)"},
  };
  for (const auto& c : cases) {
    const std::string message = this->SetUpError(c.conv_param, c.shape);
    EXPECT_EQ(message.rfind("Convolution layer 'conv': ", 0), 0u)
        << c.conv_param << " gave: " << message;
    EXPECT_NE(message.find(c.says), std::string::npos) << c.conv_param << " gave: " << message;
  }
  EXPECT_NE(this->SetUpError("num_output: 2 kernel_size: 1 axis: 4", image), "");
  EXPECT_NE(this->SetUpError("num_output: 2 kernel_size: 1 axis: -5", image), "");
  EXPECT_EQ(this->SetUpError("num_output: 2 kernel_size: 7 pad: 1", image), "");
}

TYPED_TEST(BaseConvolutionLayerTest, GivenWeightsOfTheWrongShapeAreNamedWithBothShapes) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = ParseLayerParam(ConvText("num_output: 3 kernel_size: 2"));
  Blob<Dtype> weights(std::vector<int>{3, 4, 3, 3}), bias(std::vector<int>{3});
  weights.ToProto(param.add_blobs());
  bias.ToProto(param.add_blobs());
  ConvolutionLayer<Dtype> layer(param);
  try {
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("weights have shape 3 4 3 3 (108); expected 3 4 2 2 (48)"),
              std::string::npos)
        << message;
  }
  param.clear_blobs();
  Blob<Dtype>(std::vector<int>{3, 4, 2, 2}).ToProto(param.add_blobs());
  ConvolutionLayer<Dtype> no_bias(param);
  try {
    no_bias.SetUp(this->bottom_vec_, this->top_vec_);
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expected weights and bias (bias_term: true), got 1"),
              std::string::npos)
        << e.what();
  }
}

TYPED_TEST(BaseConvolutionLayerTest, ReshapeRejectsAChangedChannelCountOrRank) {
  using Dtype = typename TypeParam::Dtype;
  ConvolutionLayer<Dtype> layer(ParseLayerParam(ConvText("num_output: 3 kernel_size: 2")));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  // A new spatial size is fine (Reshape before every Forward follows the bottom).
  this->bottom_.Reshape({1, 4, 3, 9});
  layer.Reshape(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (std::vector<int>{1, 3, 2, 8}));
  this->bottom_.Reshape({1, 5, 3, 9});
  try {
    layer.Reshape(this->bottom_vec_, this->top_vec_);
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("wrong number of channels"), std::string::npos)
        << e.what();
  }
  this->bottom_.Reshape({1, 4, 3, 9, 2});
  try {
    layer.Reshape(this->bottom_vec_, this->top_vec_);
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("changed its number of axes"), std::string::npos)
        << e.what();
  }
}

TYPED_TEST(BaseConvolutionLayerTest, ReverseDimensionsSwapTheSidesOfTheWeights) {
  using Dtype = typename TypeParam::Dtype;
  // Transposed: bottom (2, 4, 7, 6) is the output side; num_output 6 channels on the image side.
  TransposedConvolutionLayer<Dtype> layer(ParseLayerParam(
      "name: 't' convolution_param { num_output: 6 group: 2 kernel_size: 3 stride: 2 pad: 1 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  // (C_bottom, num_output / G, k, k); top: 2 * (7 - 1) + 3 - 2 = 13, 2 * (6 - 1) + 3 - 2 = 11.
  EXPECT_EQ(layer.blobs()[0]->shape(), (std::vector<int>{4, 3, 3, 3}));
  EXPECT_EQ(layer.blobs()[1]->shape(), (std::vector<int>{6}));
  EXPECT_EQ(this->top_.shape(), (std::vector<int>{2, 6, 13, 11}));
}

TYPED_TEST(BaseConvolutionLayerTest, TransposedForwardMatchesHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  // 1-D: bottom (1, 1, 2) = [1, 2], kernel [1, 10, 100], stride 2, bias 0.5:
  // each input spreads its kernel over 3 outputs, 2 apart: [1, 10, 100 + 2, 20, 200] + 0.5.
  Blob<Dtype> bottom(std::vector<int>{1, 1, 2});
  bottom.mutable_cpu_data()[0] = 1;
  bottom.mutable_cpu_data()[1] = 2;
  Blobs<Dtype> bottoms{&bottom};
  TransposedConvolutionLayer<Dtype> layer(
      ParseLayerParam("name: 't' convolution_param { num_output: 1 kernel_size: 3 stride: 2 "
                      "bias_filler { type: 'constant' value: 0.5 } }"));
  layer.SetUp(bottoms, this->top_vec_);
  ASSERT_EQ(this->top_.shape(), (std::vector<int>{1, 1, 5}));
  const Dtype kernel[3] = {1, 10, 100};
  caffe_copy(3, kernel, layer.blobs()[0]->mutable_cpu_data());
  layer.Forward(bottoms, this->top_vec_);
  const Dtype expected[5] = {1.5, 10.5, 102.5, 20.5, 200.5};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(this->top_.cpu_data()[i], expected[i], 1e-5) << i;
}

TYPED_TEST(BaseConvolutionLayerTest, TransposedPathIsTheAdjointOfConvolution) {
  // Sizes with (d + 2 pad - extent) divisible by stride, so the transposed top has x's shape.
  this->CheckAdjoint({2, 4, 7, 5}, "kernel_size: 3 stride: 2 pad: 1", 6);
  this->CheckAdjoint({2, 4, 7, 5}, "kernel_size: 3 stride: 2 pad: 1 group: 2", 6);
  this->CheckAdjoint({3, 2, 9, 6}, "kernel_size: 3 kernel_size: 2 dilation: 2 dilation: 1", 3);
  this->CheckAdjoint({2, 3, 4, 4}, "kernel_size: 1", 5);                        // 1x1
  this->CheckAdjoint({1, 3, 4, 4}, "kernel_size: 1", 2);                        // 1x1, one image
  this->CheckAdjoint({2, 2, 5, 3, 5}, "kernel_size: 3 stride: 2 pad: 1", 2);    // 3-D
  this->CheckAdjoint({3, 2, 9}, "kernel_size: 3 stride: 3", 4);                 // 1-D
  this->CheckAdjoint({2, 4, 6, 5}, "kernel_size: 2 force_nd_im2col: true", 3);  // N-D im2col
  // Many small images: several images per GEMM, with a shorter last chunk.
  this->CheckAdjoint({67, 2, 3, 3}, "kernel_size: 3 pad: 1", 3);
  this->CheckAdjoint({67, 2, 3, 3}, "kernel_size: 1", 3);
}

TYPED_TEST(BaseConvolutionLayerTest, TransposedGradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{1, 2, 3, 2});
  FillGaussian(&bottom, 31);
  Blobs<Dtype> bottoms{&bottom};
  TransposedConvolutionLayer<Dtype> layer(ParseLayerParam(
      "name: 't' convolution_param { num_output: 2 group: 2 kernel_size: 3 kernel_size: 2 "
      "stride: 2 pad: 1 weight_filler { type: 'gaussian' } bias_filler { type: 'gaussian' } }"));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradientExhaustive(&layer, bottoms, this->top_vec_);
}

TYPED_TEST(BaseConvolutionLayerTest, ChannelBiasAndChannelSumHelpers) {
  using Dtype = typename TypeParam::Dtype;
  // data[n][c][s] for N = 2, C = 3, S = 2, all zero; bias [1, 2, 3].
  std::vector<Dtype> data(12, Dtype(0));
  const Dtype bias[3] = {1, 2, 3};
  ProbeConvolutionLayer<Dtype>::AddChannelBias(data.data(), 2, 3, 2, bias);
  const Dtype expected[12] = {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(data[i], expected[i]) << i;
  for (int i = 0; i < 12; ++i) data[i] = i;
  Dtype sums[3] = {100, 0, 0};  // accumulated into, not overwritten
  ProbeConvolutionLayer<Dtype>::AccumulateChannelSums(data.data(), 2, 3, 2, sums);
  // c0: 0 + 1 + 6 + 7; c1: 2 + 3 + 8 + 9; c2: 4 + 5 + 10 + 11.
  EXPECT_EQ(sums[0], 114);
  EXPECT_EQ(sums[1], 22);
  EXPECT_EQ(sums[2], 30);
}

}  // namespace caffe

namespace caffe {

namespace {

// Forward and backward of a Convolution (or the transposed one) with every image in one piece,
// then again in tiles of output lines (by lowering the column budget): the results must agree.
template <typename Dtype, typename LayerType>
void CheckTiledMatchesWhole(const std::vector<int>& shape, const std::string& conv_param,
                            long tile_budget) {
  struct Result {
    Blob<Dtype> top, bottom_diff, weight_diff, bias_diff;
  };
  auto run = [&](long budget, Result* result) {
    const long saved = BaseConvolutionLayer<Dtype>::max_image_column_values();
    BaseConvolutionLayer<Dtype>::set_max_image_column_values(budget);
    Blob<Dtype> bottom(shape);
    FillGaussian(&bottom, 21);
    Blobs<Dtype> bottoms{&bottom}, tops{&result->top};
    Caffe::set_random_seed(5);
    LayerType layer(ParseLayerParam("name: 'c' convolution_param { " + conv_param +
                                    " weight_filler { type: 'gaussian' }"
                                    " bias_filler { type: 'gaussian' } }"));
    layer.SetUp(bottoms, tops);
    layer.Forward(bottoms, tops);
    FillGaussian(&result->top, 22);  // as the top's diff below
    caffe_copy(result->top.count(), result->top.cpu_data(), result->top.mutable_cpu_diff());
    layer.Forward(bottoms, tops);
    layer.Backward(tops, {true}, bottoms);
    result->bottom_diff.CopyFrom(bottom, true, true);
    result->weight_diff.CopyFrom(*layer.blobs()[0], true, true);
    result->bias_diff.CopyFrom(*layer.blobs()[1], true, true);
    BaseConvolutionLayer<Dtype>::set_max_image_column_values(saved);
  };
  Result whole, tiled;
  run(1L << 40, &whole);
  run(tile_budget, &tiled);
  const Dtype tolerance = sizeof(Dtype) == 4 ? 1e-4 : 1e-10;
  auto expect_near = [&](const Blob<Dtype>& a, const Blob<Dtype>& b, bool diff, const char* what) {
    ASSERT_EQ(a.shape(), b.shape()) << what;
    const Dtype* x = diff ? a.cpu_diff() : a.cpu_data();
    const Dtype* y = diff ? b.cpu_diff() : b.cpu_data();
    for (int i = 0; i < a.count(); ++i) {
      ASSERT_NEAR(x[i], y[i], tolerance * (1 + std::fabs(x[i]))) << what << " at " << i;
    }
  };
  expect_near(whole.top, tiled.top, false, "top");
  expect_near(whole.bottom_diff, tiled.bottom_diff, true, "bottom diff");
  expect_near(whole.weight_diff, tiled.weight_diff, true, "weight diff");
  expect_near(whole.bias_diff, tiled.bias_diff, true, "bias diff");
}

}  // namespace

// Budgets of a few output lines, so tiles end mid-plane and the last tile is short.
TYPED_TEST(BaseConvolutionLayerTest, TiledConvolutionMatchesWholeImages2D) {
  using Dtype = typename TypeParam::Dtype;
  // Columns per line: 3 * 3 * 3 rows * 7 columns = 189 values; a budget of 3 lines.
  CheckTiledMatchesWhole<Dtype, ConvolutionLayer<Dtype>>(
      {2, 3, 9, 7}, "num_output: 4 kernel_size: 3 pad: 1", 3 * 189);
}

TYPED_TEST(BaseConvolutionLayerTest, TiledConvolutionMatchesWholeImages3DWithStrideAndGroups) {
  using Dtype = typename TypeParam::Dtype;
  CheckTiledMatchesWhole<Dtype, ConvolutionLayer<Dtype>>(
      {2, 4, 5, 6, 7}, "num_output: 6 kernel_size: 3 pad: 1 stride: 2 group: 2", 100);
}

TYPED_TEST(BaseConvolutionLayerTest, TiledTransposedConvolutionMatchesWholeImages) {
  using Dtype = typename TypeParam::Dtype;
  CheckTiledMatchesWhole<Dtype, TransposedConvolutionLayer<Dtype>>(
      {1, 3, 3, 4, 5}, "num_output: 2 kernel_size: 2 stride: 2", 70);
}

}  // namespace caffe
