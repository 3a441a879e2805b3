// SliceLayer: shapes for equal splits and slice points (axis, negative axis, deprecated
// slice_dim), forward values by index, backward reassembly, pass-through of a single top,
// finite-difference gradients, and parameter errors.
// SliceLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/slice_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class SliceLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  SliceLayerTest() : bottom_(vector<int>{6, 5, 2, 3}) { FillGaussian(&bottom_, 1701); }
  Blob<Dtype> bottom_, top_0_, top_1_, top_2_;
  Blobs<Dtype> bottom_vec_{&bottom_};
  Blobs<Dtype> two_tops_{&top_0_, &top_1_};
  Blobs<Dtype> three_tops_{&top_0_, &top_1_, &top_2_};
};
TYPED_TEST_SUITE(SliceLayerTest, TestDtypesAndDevices);

TYPED_TEST(SliceLayerTest, EqualSplitShapes) {
  using Dtype = typename TypeParam::Dtype;
  SliceLayer<Dtype> num(ParseLayerParam("name: 's' type: 'Slice' slice_param { axis: 0 }"));
  num.SetUp(this->bottom_vec_, this->three_tops_);
  for (auto* top : this->three_tops_) EXPECT_EQ(top->shape(), (vector<int>{2, 5, 2, 3}));

  SliceLayer<Dtype> last(ParseLayerParam("name: 's' type: 'Slice' slice_param { axis: -1 }"));
  last.SetUp(this->bottom_vec_, this->three_tops_);
  for (auto* top : this->three_tops_) EXPECT_EQ(top->shape(), (vector<int>{6, 5, 2, 1}));

  SliceLayer<Dtype> legacy(ParseLayerParam("name: 's' type: 'Slice' slice_param { slice_dim: 2 }"));
  legacy.SetUp(this->bottom_vec_, this->two_tops_);
  for (auto* top : this->two_tops_) EXPECT_EQ(top->shape(), (vector<int>{6, 5, 1, 3}));
}

TYPED_TEST(SliceLayerTest, SlicePointShapes) {
  using Dtype = typename TypeParam::Dtype;
  SliceLayer<Dtype> layer(
      ParseLayerParam("name: 's' type: 'Slice' slice_param { slice_point: 1 slice_point: 4 }"));
  layer.SetUp(this->bottom_vec_, this->three_tops_);
  EXPECT_EQ(this->top_0_.shape(), (vector<int>{6, 1, 2, 3}));
  EXPECT_EQ(this->top_1_.shape(), (vector<int>{6, 3, 2, 3}));
  EXPECT_EQ(this->top_2_.shape(), (vector<int>{6, 1, 2, 3}));
}

TYPED_TEST(SliceLayerTest, ForwardCutsChannelsAtSlicePoints) {
  using Dtype = typename TypeParam::Dtype;
  SliceLayer<Dtype> layer(
      ParseLayerParam("name: 's' type: 'Slice' slice_param { slice_point: 1 slice_point: 4 }"));
  layer.SetUp(this->bottom_vec_, this->three_tops_);
  layer.Forward(this->bottom_vec_, this->three_tops_);
  const int starts[] = {0, 1, 4};
  for (int k = 0; k < 3; ++k) {
    Blob<Dtype>* top = this->three_tops_[k];
    for (int n = 0; n < 6; ++n) {
      for (int c = 0; c < top->shape(1); ++c) {
        for (int h = 0; h < 2; ++h) {
          for (int w = 0; w < 3; ++w) {
            ASSERT_EQ(top->data_at(n, c, h, w), this->bottom_.data_at(n, starts[k] + c, h, w));
          }
        }
      }
    }
  }
}

TYPED_TEST(SliceLayerTest, ForwardAlongLastAxisByHand) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{2, 3});
  const Dtype values[] = {1, 2, 3, 4, 5, 6};
  caffe_copy(6, values, bottom.mutable_cpu_data());
  Blobs<Dtype> bottoms{&bottom};
  SliceLayer<Dtype> layer(
      ParseLayerParam("name: 's' type: 'Slice' slice_param { axis: 1 slice_point: 2 }"));
  layer.SetUp(bottoms, this->two_tops_);
  layer.Forward(bottoms, this->two_tops_);
  ASSERT_EQ(this->top_0_.shape(), (vector<int>{2, 2}));
  ASSERT_EQ(this->top_1_.shape(), (vector<int>{2, 1}));
  const Dtype first[] = {1, 2, 4, 5};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(this->top_0_.cpu_data()[i], first[i]);
  EXPECT_EQ(this->top_1_.cpu_data()[0], Dtype(3));
  EXPECT_EQ(this->top_1_.cpu_data()[1], Dtype(6));
}

TYPED_TEST(SliceLayerTest, BackwardReassemblesTheBottomDiff) {
  using Dtype = typename TypeParam::Dtype;
  SliceLayer<Dtype> layer(ParseLayerParam("name: 's' type: 'Slice' slice_param { axis: 0 }"));
  layer.SetUp(this->bottom_vec_, this->three_tops_);
  layer.Forward(this->bottom_vec_, this->three_tops_);
  for (int k = 0; k < 3; ++k) {
    Blob<Dtype>* top = this->three_tops_[k];
    for (int i = 0; i < top->count(); ++i) top->mutable_cpu_diff()[i] = Dtype(k * 1000 + i);
  }
  layer.Backward(this->three_tops_, {true}, this->bottom_vec_);
  const int per_top = this->top_0_.count();
  for (int i = 0; i < this->bottom_.count(); ++i) {
    ASSERT_EQ(this->bottom_.cpu_diff()[i], Dtype((i / per_top) * 1000 + i % per_top)) << i;
  }
}

TYPED_TEST(SliceLayerTest, SingleTopIsPassedThrough) {
  using Dtype = typename TypeParam::Dtype;
  SliceLayer<Dtype> layer(ParseLayerParam("name: 's' type: 'Slice'"));
  Blobs<Dtype> one{&this->top_0_};
  layer.SetUp(this->bottom_vec_, one);
  layer.Forward(this->bottom_vec_, one);
  EXPECT_EQ(this->top_0_.shape(), this->bottom_.shape());
  EXPECT_EQ(this->top_0_.cpu_data(), this->bottom_.cpu_data());
  EXPECT_EQ(this->top_0_.cpu_diff(), this->bottom_.cpu_diff());
}

TYPED_TEST(SliceLayerTest, RejectsBadParameters) {
  using Dtype = typename TypeParam::Dtype;
  struct Case {
    const char* param;
    int tops;
  };
  const Case cases[] = {
      {"slice_param { axis: 1 }", 2},                        // 5 channels, 2 tops
      {"slice_param { slice_point: 2 }", 3},                 // too few points
      {"slice_param { slice_point: 3 slice_point: 2 }", 3},  // not increasing
      {"slice_param { slice_point: 0 }", 2},                 // empty first slice
      {"slice_param { slice_point: 6 }", 2},                 // beyond the axis
      {"slice_param { axis: 4 }", 2},                        // no such axis
      {"slice_param { slice_dim: 4 }", 2},                   // no such axis
      {"slice_param { axis: 0 slice_dim: 0 }", 2},           // both given
  };
  for (const Case& c : cases) {
    SliceLayer<Dtype> layer(ParseLayerParam(std::string("name: 's1' type: 'Slice' ") + c.param));
    Blobs<Dtype> tops(this->three_tops_.begin(), this->three_tops_.begin() + c.tops);
    EXPECT_THROW(layer.SetUp(this->bottom_vec_, tops), caffe::Error) << c.param;
  }
  SliceLayer<Dtype> layer(ParseLayerParam("name: 's1' type: 'Slice'"));
  try {
    layer.SetUp(this->bottom_vec_, this->two_tops_);
    FAIL() << "expected caffe::Error";
  } catch (const caffe::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("Slice layer 's1'"), std::string::npos) << message;
    EXPECT_NE(message.find("6 5 2 3"), std::string::npos) << message;
  }
}

TYPED_TEST(SliceLayerTest, GradientsMatchFiniteDifferencesAtSlicePoints) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{2, 5, 2, 2});
  FillGaussian(&bottom, 21);
  Blobs<Dtype> bottoms{&bottom};
  SliceLayer<Dtype> layer(
      ParseLayerParam("name: 's' type: 'Slice' slice_param { slice_point: 1 slice_point: 3 }"));
  GradientChecker<Dtype> checker(/*stepsize=*/1e-2, /*threshold=*/1e-2);
  checker.CheckGradientExhaustive(&layer, bottoms, this->three_tops_);
}

TYPED_TEST(SliceLayerTest, GradientsMatchFiniteDifferencesAlongNum) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{4, 3, 2});
  FillGaussian(&bottom, 22);
  Blobs<Dtype> bottoms{&bottom};
  SliceLayer<Dtype> layer(ParseLayerParam("name: 's' type: 'Slice' slice_param { axis: 0 }"));
  GradientChecker<Dtype> checker(/*stepsize=*/1e-2, /*threshold=*/1e-2);
  checker.CheckGradientExhaustive(&layer, bottoms, this->two_tops_);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class SliceLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(SliceLayerGpuTest, TestDtypes);

TYPED_TEST(SliceLayerGpuTest, SliceAlongAxis0Equally) {
  GpuLayerCase<TypeParam> c;
  c.layer =
      "name: 'slice' type: 'Slice' slice_param { axis: 0 } bottom: 'x' top: 'a' "
      "top: 'b' top: 'c'";
  c.bottom_shapes = {{6, 3, 8, 9}};
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(SliceLayerGpuTest, SliceAlongAxis1AtSlicePoints) {
  GpuLayerCase<TypeParam> c;
  c.layer =
      "name: 'slice' type: 'Slice' slice_param { slice_point: 1 slice_point: 4 } "
      "bottom: 'x' top: 'a' top: 'b' top: 'c'";
  c.bottom_shapes = {{3, 9, 8, 9}};
  ExpectGpuMatchesCpu(c);
}

}  // namespace caffe
