// SplitLayer: the tops share the bottom's data, backward sums the tops' diffs, in place rejected.
// SplitLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/split_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class SplitLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  SplitLayerTest() : bottom_(vector<int>{2, 3, 2, 2}) { FillGaussian(&bottom_, /*seed=*/1701); }
  Blob<Dtype> bottom_, top_a_, top_b_, top_c_;
  Blobs<Dtype> bottom_vec_{&bottom_};
  Blobs<Dtype> top_vec_{&top_a_, &top_b_, &top_c_};
};
TYPED_TEST_SUITE(SplitLayerTest, TestDtypesAndDevices);

TYPED_TEST(SplitLayerTest, TopsHaveBottomShapeAndShareItsData) {
  using Dtype = typename TypeParam::Dtype;
  SplitLayer<Dtype> layer(ParseLayerParam("name: 's' type: 'Split'"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (auto* top : this->top_vec_) {
    EXPECT_EQ(top->shape(), this->bottom_.shape());
    EXPECT_EQ(top->cpu_data(), this->bottom_.cpu_data());  // shared, not copied
  }
  // A later change to the bottom is visible through every top.
  this->bottom_.mutable_cpu_data()[5] = Dtype(42);
  EXPECT_EQ(this->top_c_.cpu_data()[5], Dtype(42));
}

TYPED_TEST(SplitLayerTest, BackwardSumsTheTopDiffs) {
  using Dtype = typename TypeParam::Dtype;
  SplitLayer<Dtype> layer(ParseLayerParam("name: 's' type: 'Split'"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  const int count = this->bottom_.count();
  for (int i = 0; i < count; ++i) {
    this->top_a_.mutable_cpu_diff()[i] = Dtype(i);
    this->top_b_.mutable_cpu_diff()[i] = Dtype(10);
    this->top_c_.mutable_cpu_diff()[i] = Dtype(-2 * i);
  }
  layer.Backward(this->top_vec_, {true}, this->bottom_vec_);
  for (int i = 0; i < count; ++i) EXPECT_EQ(this->bottom_.cpu_diff()[i], Dtype(10 - i)) << i;
}

TYPED_TEST(SplitLayerTest, SingleTopCopiesItsDiff) {
  using Dtype = typename TypeParam::Dtype;
  SplitLayer<Dtype> layer(ParseLayerParam("name: 's' type: 'Split'"));
  Blobs<Dtype> one_top{&this->top_a_};
  layer.SetUp(this->bottom_vec_, one_top);
  layer.Forward(this->bottom_vec_, one_top);
  for (int i = 0; i < this->top_a_.count(); ++i) this->top_a_.mutable_cpu_diff()[i] = Dtype(i);
  layer.Backward(one_top, {true}, this->bottom_vec_);
  for (int i = 0; i < this->bottom_.count(); ++i) EXPECT_EQ(this->bottom_.cpu_diff()[i], Dtype(i));
}

TYPED_TEST(SplitLayerTest, BackwardLeavesBottomAloneWithoutPropagateDown) {
  using Dtype = typename TypeParam::Dtype;
  SplitLayer<Dtype> layer(ParseLayerParam("name: 's' type: 'Split'"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  caffe_set(this->bottom_.count(), Dtype(7), this->bottom_.mutable_cpu_diff());
  for (auto* top : this->top_vec_) caffe_set(top->count(), Dtype(1), top->mutable_cpu_diff());
  layer.Backward(this->top_vec_, {false}, this->bottom_vec_);
  for (int i = 0; i < this->bottom_.count(); ++i) EXPECT_EQ(this->bottom_.cpu_diff()[i], Dtype(7));
}

TYPED_TEST(SplitLayerTest, RejectsInPlace) {
  using Dtype = typename TypeParam::Dtype;
  SplitLayer<Dtype> layer(ParseLayerParam("name: 's' type: 'Split'"));
  Blobs<Dtype> tops{&this->top_a_, &this->bottom_};
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, tops), caffe::Error);
}

TYPED_TEST(SplitLayerTest, RejectsNoTops) {
  using Dtype = typename TypeParam::Dtype;
  SplitLayer<Dtype> layer(ParseLayerParam("name: 's' type: 'Split'"));
  Blobs<Dtype> no_tops;
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, no_tops), caffe::Error);
}

TYPED_TEST(SplitLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  SplitLayer<Dtype> layer(ParseLayerParam("name: 's' type: 'Split'"));
  GradientChecker<Dtype> checker(/*stepsize=*/1e-2, /*threshold=*/1e-2);
  checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class SplitLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(SplitLayerGpuTest, TestDtypes);

TYPED_TEST(SplitLayerGpuTest, SplitSumsThreeTopDiffs) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'split' type: 'Split' bottom: 'x' top: 'a' top: 'b' top: 'c'";
  c.bottom_shapes = {{5, 7, 11, 3}};
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(SplitLayerGpuTest, SplitOneTop) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'split' type: 'Split' bottom: 'x' top: 'a'";
  c.bottom_shapes = {{5, 7, 11, 3}};
  ExpectGpuMatchesCpu(c);
}

}  // namespace caffe
