// ReductionLayer: top shapes per axis (0-axis scalar for axis 0), hand-computed forward and
// backward for SUM, ASUM, SUMSQ and MEAN with coeff, finite differences, and axis errors.
// ReductionLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <string>
#include <vector>

#include "caffe/layers/reduction_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class ReductionLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  ReductionLayerTest() : bottom_(vector<int>{2, 3, 2}), rows_(vector<int>{2, 3}) {
    FillGaussian<Dtype>(&bottom_, 1701);
    const Dtype x[] = {1, -2, 3, 0, 4, -1};
    caffe_copy(6, x, rows_.mutable_cpu_data());
  }
  // Reduces the rows of `rows_` ((2, 3), axis 1) and backpropagates dy = {1, 2}.
  void Check(const std::string& text, const vector<double>& y, const vector<double>& dx) {
    SCOPED_TRACE(text);
    Blob<Dtype> top;
    Blobs<Dtype> bottom_vec{&rows_}, top_vec{&top};
    ReductionLayer<Dtype> layer(ParseLayerParam(text));
    layer.SetUp(bottom_vec, top_vec);
    layer.Forward(bottom_vec, top_vec);
    ASSERT_EQ(top.shape(), vector<int>{2});
    for (int i = 0; i < 2; ++i) EXPECT_NEAR(top.cpu_data()[i], y[i], 1e-5) << i;
    top.mutable_cpu_diff()[0] = 1;
    top.mutable_cpu_diff()[1] = 2;
    layer.Backward(top_vec, {true}, bottom_vec);
    for (int i = 0; i < 6; ++i) EXPECT_NEAR(rows_.cpu_diff()[i], dx[i], 1e-5) << i;
  }
  Blob<Dtype> bottom_, rows_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(ReductionLayerTest, TestDtypesAndDevices);

TYPED_TEST(ReductionLayerTest, IsRegisteredAsReduction) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("name: 'r' type: 'Reduction'"));
  EXPECT_STREQ(layer->type(), "Reduction");
}

TYPED_TEST(ReductionLayerTest, TopKeepsTheAxesBeforeAxis) {
  using Dtype = typename TypeParam::Dtype;
  ReductionLayer<Dtype> all(LayerParameter{});
  all.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.num_axes(), 0);  // axis 0: a scalar
  EXPECT_EQ(this->top_.count(), 1);
  ReductionLayer<Dtype> one(ParseLayerParam("reduction_param { axis: 1 }"));
  one.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{2}));
  ReductionLayer<Dtype> last(ParseLayerParam("reduction_param { axis: -1 }"));
  last.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{2, 3}));
}

TYPED_TEST(ReductionLayerTest, SumOverEverything) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> top;
  Blobs<Dtype> bottom_vec{&this->rows_}, top_vec{&top};
  ReductionLayer<Dtype> layer(ParseLayerParam("reduction_param { coeff: 2 }"));
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  EXPECT_EQ(top.cpu_data()[0], Dtype(10));
  top.mutable_cpu_diff()[0] = 3;
  layer.Backward(top_vec, {true}, bottom_vec);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(this->rows_.cpu_diff()[i], Dtype(6)) << i;
}

TYPED_TEST(ReductionLayerTest, SumMatchesHandComputedValues) {
  this->Check("reduction_param { operation: SUM axis: 1 }", {2, 3}, {1, 1, 1, 2, 2, 2});
}

TYPED_TEST(ReductionLayerTest, AsumMatchesHandComputedValues) {
  this->Check("reduction_param { operation: ASUM axis: 1 coeff: 2 }", {12, 10},
              {2, -2, 2, 0, 4, -4});  // sign(0) = 0
}

TYPED_TEST(ReductionLayerTest, SumsqMatchesHandComputedValues) {
  this->Check("reduction_param { operation: SUMSQ axis: 1 coeff: 0.5 }", {7, 8.5},
              {1, -2, 3, 0, 8, -2});  // 2 * coeff * dy * x
}

TYPED_TEST(ReductionLayerTest, MeanMatchesHandComputedValues) {
  this->Check("reduction_param { operation: MEAN axis: -1 coeff: 3 }", {2, 3},
              {1, 1, 1, 2, 2, 2});  // coeff / 3 * dy
}

TYPED_TEST(ReductionLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* op : {"SUM", "ASUM", "SUMSQ", "MEAN"}) {
    for (int axis : {0, 1, 2}) {
      const std::string text = std::string("reduction_param { operation: ") + op +
                               " axis: " + std::to_string(axis) + " coeff: 1.5 }";
      SCOPED_TRACE(text);
      ReductionLayer<Dtype> layer(ParseLayerParam(text));
      GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3), 1701, /*kink=*/0,
                                     /*kink_range=*/0.02);
      checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_);
    }
  }
}

TYPED_TEST(ReductionLayerTest, RejectsAxisOutOfRange) {
  using Dtype = typename TypeParam::Dtype;
  ReductionLayer<Dtype> layer(ParseLayerParam("name: 'r' reduction_param { axis: 3 }"));
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class ReductionLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(ReductionLayerGpuTest, TestDtypes);

TYPED_TEST(ReductionLayerGpuTest, ReductionSumOverEverything) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'sum' type: 'Reduction' bottom: 'x' top: 'y'";
  c.bottom_shapes = {{5, 7, 33}};
  c.tolerance = GpuSumTolerance<TypeParam>();
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(ReductionLayerGpuTest, ReductionEachOperationAndAxis) {
  const char* cases[] = {
      "operation: ASUM axis: 1",
      "operation: SUMSQ axis: 2",
      "operation: MEAN axis: 1 coeff: 2.5",
      "operation: SUM axis: -1 coeff: -0.5",
  };
  for (const char* param : cases) {
    SCOPED_TRACE(param);
    GpuLayerCase<TypeParam> c;
    c.layer = std::string("name: 'reduce' type: 'Reduction' reduction_param { ") + param +
              " } bottom: 'x' top: 'y'";
    c.bottom_shapes = {{11, 7, 3, 13}};
    c.tolerance = GpuSumTolerance<TypeParam>();
    ExpectGpuMatchesCpu(c);
  }
}

}  // namespace caffe
