// EltwiseLayer: PROD, SUM (with and without coefficients) and MAX against hand-computed values,
// BVLC's MAX tie-breaking and gradient routing, finite-difference gradients for each operation
// (both PROD gradient formulas), and parameter/shape errors.
// EltwiseLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <cmath>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/eltwise_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class EltwiseLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  EltwiseLayerTest()
      : a_(vector<int>{2, 3, 2, 2}), b_(vector<int>{2, 3, 2, 2}), c_(vector<int>{2, 3, 2, 2}) {
    // Uniform values keep products well scaled and MAX winners well separated.
    FillUniform(&a_, 1701, Dtype(-1), Dtype(1));
    FillUniform(&b_, 1702, Dtype(-1), Dtype(1));
    FillUniform(&c_, 1703, Dtype(-1), Dtype(1));
  }
  Blob<Dtype> a_, b_, c_, top_;
  Blobs<Dtype> bottom_vec_{&a_, &b_, &c_};
  Blobs<Dtype> top_vec_{&top_};
};
TYPED_TEST_SUITE(EltwiseLayerTest, TestDtypesAndDevices);

TYPED_TEST(EltwiseLayerTest, TopHasTheBottomsShape) {
  using Dtype = typename TypeParam::Dtype;
  EltwiseLayer<Dtype> layer(ParseLayerParam("name: 'e' type: 'Eltwise'"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{2, 3, 2, 2}));
}

TYPED_TEST(EltwiseLayerTest, ProdMultipliesAllBottoms) {
  using Dtype = typename TypeParam::Dtype;
  EltwiseLayer<Dtype> layer(
      ParseLayerParam("name: 'e' type: 'Eltwise' eltwise_param { operation: PROD }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < this->top_.count(); ++i) {
    const Dtype expected = this->a_.cpu_data()[i] * this->b_.cpu_data()[i] * this->c_.cpu_data()[i];
    EXPECT_NEAR(this->top_.cpu_data()[i], expected, 1e-6);
  }
}

TYPED_TEST(EltwiseLayerTest, SumAddsBottomsWithCoefficients) {
  using Dtype = typename TypeParam::Dtype;
  EltwiseLayer<Dtype> plain(ParseLayerParam("name: 'e' type: 'Eltwise'"));
  plain.SetUp(this->bottom_vec_, this->top_vec_);
  plain.Forward(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < this->top_.count(); ++i) {
    const Dtype expected = this->a_.cpu_data()[i] + this->b_.cpu_data()[i] + this->c_.cpu_data()[i];
    EXPECT_NEAR(this->top_.cpu_data()[i], expected, 1e-6);
  }
  EltwiseLayer<Dtype> weighted(
      ParseLayerParam("name: 'e' type: 'Eltwise' eltwise_param { coeff: 1 coeff: -0.5 coeff: 2 }"));
  weighted.SetUp(this->bottom_vec_, this->top_vec_);
  weighted.Forward(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < this->top_.count(); ++i) {
    const Dtype expected = this->a_.cpu_data()[i] - Dtype(0.5) * this->b_.cpu_data()[i] +
                           Dtype(2) * this->c_.cpu_data()[i];
    EXPECT_NEAR(this->top_.cpu_data()[i], expected, 1e-6);
  }
}

TYPED_TEST(EltwiseLayerTest, MaxTakesTheLargestAndRoutesItsGradient) {
  using Dtype = typename TypeParam::Dtype;
  EltwiseLayer<Dtype> layer(
      ParseLayerParam("name: 'e' type: 'Eltwise' eltwise_param { operation: MAX }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  const int count = this->top_.count();
  for (int i = 0; i < count; ++i) this->top_.mutable_cpu_diff()[i] = Dtype(i + 1);
  layer.Backward(this->top_vec_, {true, true, true}, this->bottom_vec_);
  for (int i = 0; i < count; ++i) {
    const Dtype values[] = {this->a_.cpu_data()[i], this->b_.cpu_data()[i], this->c_.cpu_data()[i]};
    int winner = 0;
    for (int k = 1; k < 3; ++k) {
      if (values[k] > values[winner]) winner = k;
    }
    EXPECT_EQ(this->top_.cpu_data()[i], values[winner]);
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(this->bottom_vec_[k]->cpu_diff()[i], k == winner ? Dtype(i + 1) : Dtype(0))
          << "element " << i << " bottom " << k;
    }
  }
}

TYPED_TEST(EltwiseLayerTest, MaxBreaksTiesLikeBvlc) {
  using Dtype = typename TypeParam::Dtype;
  // Per element: a == b (bottom 1 wins), b < a == c (bottom 0 keeps it: c is not strictly
  // greater), a < b == c (bottom 1 keeps it), all equal (bottom 1).
  Blob<Dtype> a(vector<int>{4}), b(vector<int>{4}), c(vector<int>{4}), top;
  const Dtype a_values[] = {2, 5, 1, 3};
  const Dtype b_values[] = {2, 4, 6, 3};
  const Dtype c_values[] = {0, 5, 6, 3};
  caffe_copy(4, a_values, a.mutable_cpu_data());
  caffe_copy(4, b_values, b.mutable_cpu_data());
  caffe_copy(4, c_values, c.mutable_cpu_data());
  Blobs<Dtype> bottoms{&a, &b, &c}, tops{&top};
  EltwiseLayer<Dtype> layer(
      ParseLayerParam("name: 'e' type: 'Eltwise' eltwise_param { operation: MAX }"));
  layer.SetUp(bottoms, tops);
  layer.Forward(bottoms, tops);
  caffe_set(4, Dtype(1), top.mutable_cpu_diff());
  layer.Backward(tops, {true, true, true}, bottoms);
  const Dtype expected_top[] = {2, 5, 6, 3};
  const int winner[] = {1, 0, 1, 1};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(top.cpu_data()[i], expected_top[i]) << i;
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(bottoms[k]->cpu_diff()[i], k == winner[i] ? Dtype(1) : Dtype(0))
          << "element " << i << " bottom " << k;
    }
  }
}

TYPED_TEST(EltwiseLayerTest, ProdGradientFormulasAgreeByHand) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> a(vector<int>{2}), b(vector<int>{2}), top;
  const Dtype a_values[] = {2, -3};
  const Dtype b_values[] = {5, 4};
  caffe_copy(2, a_values, a.mutable_cpu_data());
  caffe_copy(2, b_values, b.mutable_cpu_data());
  Blobs<Dtype> bottoms{&a, &b}, tops{&top};
  for (const char* stable : {"true", "false"}) {
    EltwiseLayer<Dtype> layer(
        ParseLayerParam(std::string("name: 'e' type: 'Eltwise' eltwise_param { operation: PROD "
                                    "stable_prod_grad: ") +
                        stable + " }"));
    layer.SetUp(bottoms, tops);
    layer.Forward(bottoms, tops);
    top.mutable_cpu_diff()[0] = Dtype(1);
    top.mutable_cpu_diff()[1] = Dtype(-2);
    layer.Backward(tops, {true, true}, bottoms);
    EXPECT_NEAR(a.cpu_diff()[0], 5, 1e-6) << stable;
    EXPECT_NEAR(a.cpu_diff()[1], -8, 1e-6) << stable;
    EXPECT_NEAR(b.cpu_diff()[0], 2, 1e-6) << stable;
    EXPECT_NEAR(b.cpu_diff()[1], 6, 1e-6) << stable;
  }
}

TYPED_TEST(EltwiseLayerTest, ProdGradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* stable : {"true", "false"}) {
    EltwiseLayer<Dtype> layer(
        ParseLayerParam(std::string("name: 'e' type: 'Eltwise' eltwise_param { operation: PROD "
                                    "stable_prod_grad: ") +
                        stable + " }"));
    GradientChecker<Dtype> checker(/*stepsize=*/1e-3, /*threshold=*/1e-2);
    checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
  }
}

TYPED_TEST(EltwiseLayerTest, SumGradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  EltwiseLayer<Dtype> layer(
      ParseLayerParam("name: 'e' type: 'Eltwise' eltwise_param { coeff: 1 coeff: -0.5 coeff: 2 }"));
  GradientChecker<Dtype> checker(/*stepsize=*/1e-3, /*threshold=*/1e-2);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(EltwiseLayerTest, MaxGradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  EltwiseLayer<Dtype> layer(
      ParseLayerParam("name: 'e' type: 'Eltwise' eltwise_param { operation: MAX }"));
  GradientChecker<Dtype> checker(/*stepsize=*/1e-4, /*threshold=*/1e-2);
  checker.CheckGradientEltwise(&layer, this->bottom_vec_, this->top_vec_);
}

TYPED_TEST(EltwiseLayerTest, RejectsBadParametersAndShapes) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* param : {"eltwise_param { operation: PROD coeff: 1 coeff: 1 coeff: 1 }",
                            "eltwise_param { coeff: 1 coeff: 2 }"}) {
    EltwiseLayer<Dtype> layer(ParseLayerParam(std::string("name: 'e' type: 'Eltwise' ") + param));
    EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), caffe::Error) << param;
  }
  Blob<Dtype> other(vector<int>{2, 3, 4});
  Blobs<Dtype> mismatched{&this->a_, &other};
  EltwiseLayer<Dtype> layer(ParseLayerParam("name: 'e1' type: 'Eltwise'"));
  try {
    layer.SetUp(mismatched, this->top_vec_);
    FAIL() << "expected caffe::Error";
  } catch (const caffe::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("Eltwise layer 'e1'"), std::string::npos) << message;
    EXPECT_NE(message.find("2 3 4 (24)"), std::string::npos) << message;
  }
  Blobs<Dtype> one{&this->a_};
  EltwiseLayer<Dtype> single(ParseLayerParam("name: 'e1' type: 'Eltwise'"));
  EXPECT_THROW(single.SetUp(one, this->top_vec_), caffe::Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class EltwiseLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(EltwiseLayerGpuTest, TestDtypes);

TYPED_TEST(EltwiseLayerGpuTest, EltwiseProd) {
  const std::string layer =
      "name: 'prod' type: 'Eltwise' eltwise_param { operation: PROD } "
      "bottom: 'a' bottom: 'b' bottom: 'c' top: 'y'";
  GpuLayerCase<TypeParam> stable =
      MakeGpuCase<TypeParam>(layer, {kGpuCheckShape, kGpuCheckShape, kGpuCheckShape});
  ExpectGpuMatchesCpu(stable);
  stable.propagate_down = {false, true, true};
  ExpectGpuMatchesCpu(stable);
  GpuLayerCase<TypeParam> dividing = MakeGpuCase<TypeParam>(
      "name: 'prod' type: 'Eltwise' eltwise_param { operation: PROD stable_prod_grad: false } "
      "bottom: 'a' bottom: 'b' bottom: 'c' top: 'y'",
      {kGpuCheckLargeShape, kGpuCheckLargeShape, kGpuCheckLargeShape});
  ExpectGpuMatchesCpu(dividing);
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>("name: 'prod' type: 'Eltwise' eltwise_param { operation: PROD } "
                             "bottom: 'a' bottom: 'b' top: 'y'",
                             {kGpuCheckShape, kGpuCheckShape}));
}

TYPED_TEST(EltwiseLayerGpuTest, EltwiseSum) {
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>("name: 'sum' type: 'Eltwise' bottom: 'a' bottom: 'b' top: 'y'",
                             {kGpuCheckShape, kGpuCheckShape}));
  GpuLayerCase<TypeParam> weighted = MakeGpuCase<TypeParam>(
      "name: 'sum' type: 'Eltwise' eltwise_param { operation: SUM coeff: 1 coeff: -0.5 "
      "coeff: 2 } bottom: 'a' bottom: 'b' bottom: 'c' top: 'y'",
      {kGpuCheckLargeShape, kGpuCheckLargeShape, kGpuCheckLargeShape});
  ExpectGpuMatchesCpu(weighted);
  weighted.propagate_down = {true, false, true};
  ExpectGpuMatchesCpu(weighted);
}

TYPED_TEST(EltwiseLayerGpuTest, EltwiseMax) {
  const std::string layer =
      "name: 'max' type: 'Eltwise' eltwise_param { operation: MAX } "
      "bottom: 'a' bottom: 'b' bottom: 'c' top: 'y'";
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      layer, {kGpuCheckLargeShape, kGpuCheckLargeShape, kGpuCheckLargeShape}));
  // Small integers make many ties, which must send the gradient to the same bottom as the CPU.
  GpuLayerCase<TypeParam> ties =
      MakeGpuCase<TypeParam>(layer, {kGpuCheckShape, kGpuCheckShape, kGpuCheckShape});
  ties.fill = [](const Blobs<TypeParam>& bottoms) {
    for (size_t i = 0; i < bottoms.size(); ++i) {
      FillUniform<TypeParam>(bottoms[i], 40 + i, -2, 2);
      TypeParam* data = bottoms[i]->mutable_cpu_data();
      for (int j = 0; j < bottoms[i]->count(); ++j) data[j] = std::round(data[j]);
    }
  };
  ExpectGpuMatchesCpu(ties);
  ties.propagate_down = {true, false, true};
  ExpectGpuMatchesCpu(ties);
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>("name: 'max' type: 'Eltwise' eltwise_param { operation: MAX } "
                             "bottom: 'a' bottom: 'b' top: 'y'",
                             {kGpuCheckShape, kGpuCheckShape}));
}

}  // namespace caffe
