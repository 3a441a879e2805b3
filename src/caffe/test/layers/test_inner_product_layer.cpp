// InnerProductLayer: shapes for each axis, hand-computed forward, the transposed weight layout,
// finite-difference gradients, accumulation of param diffs, and bad weights or inputs.
// InnerProductLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
// Legend: M examples, K inputs per example, N outputs.
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/inner_product_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

LayerParameter IpParam(const std::string& ip_param) {
  return ParseLayerParam("name: 'ip' type: 'InnerProduct' inner_product_param { " + ip_param +
                         " }");
}

const char kFillers[] =
    " weight_filler { type: 'gaussian' std: 1 } bias_filler { type: 'gaussian' std: 1 }";

}  // namespace

template <typename TypeParam>
class InnerProductLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  InnerProductLayerTest() : bottom_(std::vector<int>{2, 3, 4, 5}) { FillGaussian(&bottom_, 1701); }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(InnerProductLayerTest, TestDtypesAndDevices);

TYPED_TEST(InnerProductLayerTest, ShapesForEachAxisAndLayout) {
  using Dtype = typename TypeParam::Dtype;
  using Shape = std::vector<int>;
  struct Case {
    const char* param;
    Shape top, weights;
  };
  for (const Case& c : {Case{"num_output: 10", {2, 10}, {10, 60}},
                        Case{"num_output: 10 axis: 2", {2, 3, 10}, {10, 20}},
                        Case{"num_output: 10 axis: -1", {2, 3, 4, 10}, {10, 5}},
                        Case{"num_output: 10 transpose: true", {2, 10}, {60, 10}},
                        Case{"num_output: 7 axis: 0", {7}, {7, 120}}}) {
    InnerProductLayer<Dtype> layer(IpParam(c.param));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    EXPECT_EQ(this->top_.shape(), c.top) << c.param;
    ASSERT_EQ(layer.blobs().size(), 2u);
    EXPECT_EQ(layer.blobs()[0]->shape(), c.weights) << c.param;
    EXPECT_EQ(layer.blobs()[1]->shape(), (Shape{c.top.back()})) << c.param;
  }
  InnerProductLayer<Dtype> no_bias(IpParam("num_output: 3 bias_term: false"));
  no_bias.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(no_bias.blobs().size(), 1u);
}

TYPED_TEST(InnerProductLayerTest, ForwardMatchesHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(std::vector<int>{2, 3});
  const Dtype x[6] = {1, 2, 3, -1, 0, 2};
  caffe_copy(6, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottoms{&bottom};
  const Dtype w[6] = {1, 0, -1,    // output 0: x0 - x2
                      2, 1, 0.5};  // output 1: 2 x0 + x1 + x2 / 2
  const Dtype expected[4] = {-2 + 10, 5.5 - 1, -3 + 10, -1 - 1};
  for (bool transpose : {false, true}) {
    InnerProductLayer<Dtype> layer(
        IpParam(std::string("num_output: 2 bias_filler { type: 'constant' value: 10 }") +
                (transpose ? " transpose: true" : "")));
    layer.SetUp(bottoms, this->top_vec_);
    Dtype* weights = layer.blobs()[0]->mutable_cpu_data();
    for (int n = 0; n < 2; ++n) {
      for (int k = 0; k < 3; ++k) weights[transpose ? k * 2 + n : n * 3 + k] = w[n * 3 + k];
    }
    layer.blobs()[1]->mutable_cpu_data()[1] = -1;
    layer.Forward(bottoms, this->top_vec_);
    for (int i = 0; i < 4; ++i) {
      EXPECT_NEAR(this->top_.cpu_data()[i], expected[i], 1e-6) << "transpose " << transpose;
    }
  }
}

TYPED_TEST(InnerProductLayerTest, TransposedLayoutGivesTheSameResultsAndDiffs) {
  using Dtype = typename TypeParam::Dtype;
  InnerProductLayer<Dtype> plain(IpParam(std::string("num_output: 4 axis: 2") + kFillers));
  plain.SetUp(this->bottom_vec_, this->top_vec_);
  // The same weights stored (K, N).
  LayerParameter transposed_param = IpParam("num_output: 4 axis: 2 transpose: true");
  const Blob<Dtype>& w = *plain.blobs()[0];
  Blob<Dtype> w_t(std::vector<int>{20, 4});
  for (int n = 0; n < 4; ++n) {
    for (int k = 0; k < 20; ++k) w_t.mutable_cpu_data()[k * 4 + n] = w.cpu_data()[n * 20 + k];
  }
  w_t.ToProto(transposed_param.add_blobs());
  plain.blobs()[1]->ToProto(transposed_param.add_blobs());
  InnerProductLayer<Dtype> transposed(transposed_param);
  Blob<Dtype> top_t;
  Blobs<Dtype> tops_t{&top_t};
  transposed.SetUp(this->bottom_vec_, tops_t);

  plain.Forward(this->bottom_vec_, this->top_vec_);
  transposed.Forward(this->bottom_vec_, tops_t);
  ASSERT_EQ(top_t.shape(), this->top_.shape());
  FillGaussian(&this->top_, 3);
  caffe_copy(this->top_.count(), this->top_.cpu_data(), this->top_.mutable_cpu_diff());
  caffe_copy(this->top_.count(), this->top_.cpu_data(), top_t.mutable_cpu_diff());
  for (auto* layer : {&plain, &transposed}) {
    for (auto& blob : layer->blobs()) caffe_set(blob->count(), Dtype(0), blob->mutable_cpu_diff());
  }
  plain.Backward(this->top_vec_, {true}, this->bottom_vec_);
  std::vector<Dtype> bottom_diff(this->bottom_.cpu_diff(),
                                 this->bottom_.cpu_diff() + this->bottom_.count());
  transposed.Backward(tops_t, {true}, this->bottom_vec_);
  for (int i = 0; i < this->bottom_.count(); ++i) {
    EXPECT_NEAR(this->bottom_.cpu_diff()[i], bottom_diff[i], 1e-5);
  }
  const Dtype* dw = plain.blobs()[0]->cpu_diff();
  const Dtype* dw_t = transposed.blobs()[0]->cpu_diff();
  for (int n = 0; n < 4; ++n) {
    for (int k = 0; k < 20; ++k) EXPECT_NEAR(dw_t[k * 4 + n], dw[n * 20 + k], 1e-5);
  }
  for (int n = 0; n < 4; ++n) {
    EXPECT_NEAR(transposed.blobs()[1]->cpu_diff()[n], plain.blobs()[1]->cpu_diff()[n], 1e-5);
  }
}

TYPED_TEST(InnerProductLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  this->bottom_.Reshape({2, 3, 2, 2});
  FillGaussian(&this->bottom_, 4);
  for (const char* param : {"num_output: 5", "num_output: 3 axis: 2 transpose: true",
                            "num_output: 4 bias_term: false"}) {
    InnerProductLayer<Dtype> layer(IpParam(param + std::string(kFillers)));
    GradientChecker<Dtype> checker(1e-2, 1e-3);
    checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_);
  }
}

TYPED_TEST(InnerProductLayerTest, ParamDiffsAccumulate) {
  using Dtype = typename TypeParam::Dtype;
  InnerProductLayer<Dtype> layer(IpParam(std::string("num_output: 3") + kFillers));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  caffe_set(this->top_.count(), Dtype(1), this->top_.mutable_cpu_diff());
  for (auto& blob : layer.blobs()) caffe_set(blob->count(), Dtype(0), blob->mutable_cpu_diff());
  layer.Backward(this->top_vec_, {false}, this->bottom_vec_);
  const Dtype w_once = layer.blobs()[0]->cpu_diff()[7];
  EXPECT_EQ(layer.blobs()[1]->cpu_diff()[2], 2);  // two examples with top diff 1
  layer.Backward(this->top_vec_, {false}, this->bottom_vec_);
  EXPECT_NEAR(layer.blobs()[0]->cpu_diff()[7], 2 * w_once, 1e-5);
  EXPECT_EQ(layer.blobs()[1]->cpu_diff()[2], 4);
}

TYPED_TEST(InnerProductLayerTest, AcceptsLegacyFourAxisWeights) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = IpParam("num_output: 2");
  Blob<Dtype> weights(std::vector<int>{1, 1, 2, 60}), bias(std::vector<int>{1, 1, 1, 2});
  FillGaussian(&weights, 5);
  weights.ToProto(param.add_blobs());
  bias.ToProto(param.add_blobs());
  InnerProductLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(layer.blobs()[0]->shape(), (std::vector<int>{2, 60}));
  EXPECT_EQ(layer.blobs()[1]->shape(), (std::vector<int>{2}));
  EXPECT_EQ(layer.blobs()[0]->cpu_data()[61], weights.cpu_data()[61]);
}

TYPED_TEST(InnerProductLayerTest, RejectsBadParametersWeightsAndInputs) {
  using Dtype = typename TypeParam::Dtype;
  InnerProductLayer<Dtype> no_outputs(IpParam("bias_term: true"));
  EXPECT_THROW(no_outputs.SetUp(this->bottom_vec_, this->top_vec_), Error);
  InnerProductLayer<Dtype> bad_axis(IpParam("num_output: 2 axis: 4"));
  EXPECT_THROW(bad_axis.SetUp(this->bottom_vec_, this->top_vec_), Error);

  InnerProductLayer<Dtype> layer(IpParam("num_output: 2"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  Blob<Dtype> other(std::vector<int>{2, 3, 4, 6});
  Blobs<Dtype> others{&other};
  EXPECT_THROW(layer.Reshape(others, this->top_vec_), Error);
  Blob<Dtype> same_inputs(std::vector<int>{4, 60});  // a different batch is fine
  Blobs<Dtype> same{&same_inputs};
  EXPECT_NO_THROW(layer.Reshape(same, this->top_vec_));
  EXPECT_EQ(this->top_.shape(), (std::vector<int>{4, 2}));

  LayerParameter param = IpParam("num_output: 2");
  Blob<Dtype> weights(std::vector<int>{2, 59}), bias(std::vector<int>{2});
  weights.ToProto(param.add_blobs());
  bias.ToProto(param.add_blobs());
  InnerProductLayer<Dtype> wrong_weights(param);
  EXPECT_THROW(wrong_weights.SetUp(this->bottom_vec_, this->top_vec_), Error);
  param.clear_blobs();
  weights.Reshape({2, 60});
  weights.ToProto(param.add_blobs());
  InnerProductLayer<Dtype> missing_bias(param);
  EXPECT_THROW(missing_bias.SetUp(this->bottom_vec_, this->top_vec_), Error);
  Blob<Dtype> long_bias(std::vector<int>{3});
  long_bias.ToProto(param.add_blobs());
  InnerProductLayer<Dtype> wrong_bias(param);
  EXPECT_THROW(wrong_bias.SetUp(this->bottom_vec_, this->top_vec_), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

namespace {

std::string InnerProductText(const std::string& params, bool bias = true) {
  return "name: 'ip' type: 'InnerProduct' bottom: 'x' top: 'y' inner_product_param { " + params +
         " weight_filler { type: 'gaussian' std: 0.3 }" +
         (bias ? " bias_filler { type: 'gaussian' } }" : " bias_term: false }");
}

}  // namespace

template <typename Dtype>
class InnerProductLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(InnerProductLayerGpuTest, TestDtypes);

TYPED_TEST(InnerProductLayerGpuTest, InnerProduct) {
  // K = 5 x 7 x 11 = 385 inputs, N = 19 outputs.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(InnerProductText("num_output: 19"), {{3, 5, 7, 11}},
                                             GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(InnerProductLayerGpuTest, InnerProductTransposed) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(InnerProductText("num_output: 23 transpose: true"),
                                             {{4, 3, 13}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(InnerProductLayerGpuTest, InnerProductWithoutBiasAxis2) {
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>(InnerProductText("num_output: 9 axis: 2", /*bias=*/false),
                             {{2, 6, 5, 17}}, GpuLongSumTolerance<TypeParam>()));
}

TYPED_TEST(InnerProductLayerGpuTest, InnerProductLargeBatch) {
  // M = 130 examples: the bias gradient sums over all of them.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(InnerProductText("num_output: 100 transpose: true"),
                                             {{130, 300}}, GpuLongSumTolerance<TypeParam>()));
}

}  // namespace caffe
