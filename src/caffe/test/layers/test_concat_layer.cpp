// ConcatLayer: shapes along each axis (axis, negative axis, deprecated concat_dim), forward values
// by index, backward routing with partial propagate_down, pass-through of a single bottom,
// finite-difference gradients, and shape/parameter errors. (A backward that reaches no bottom,
// every layer's: test_layer_in_place.cpp.)
// ConcatLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/concat_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class ConcatLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  // bottom_0 and bottom_1 differ on axis 0, bottom_0 and bottom_2 on axis 1.
  ConcatLayerTest()
      : bottom_0_(vector<int>{2, 3, 4, 5}),
        bottom_1_(vector<int>{5, 3, 4, 5}),
        bottom_2_(vector<int>{2, 2, 4, 5}) {
    FillGaussian(&bottom_0_, 1701);
    FillGaussian(&bottom_1_, 1702);
    FillGaussian(&bottom_2_, 1703);
  }
  Blob<Dtype> bottom_0_, bottom_1_, bottom_2_, top_;
  Blobs<Dtype> top_vec_{&top_};
  Blobs<Dtype> along_num_{&bottom_0_, &bottom_1_};
  Blobs<Dtype> along_channels_{&bottom_0_, &bottom_2_};
};
TYPED_TEST_SUITE(ConcatLayerTest, TestDtypesAndDevices);

TYPED_TEST(ConcatLayerTest, TopShapeAddsUpTheAxis) {
  using Dtype = typename TypeParam::Dtype;
  ConcatLayer<Dtype> channels(ParseLayerParam("name: 'c' type: 'Concat'"));
  channels.SetUp(this->along_channels_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{2, 5, 4, 5}));

  ConcatLayer<Dtype> num(ParseLayerParam("name: 'c' type: 'Concat' concat_param { axis: 0 }"));
  num.SetUp(this->along_num_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{7, 3, 4, 5}));

  ConcatLayer<Dtype> negative(
      ParseLayerParam("name: 'c' type: 'Concat' concat_param { axis: -3 }"));
  negative.SetUp(this->along_channels_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{2, 5, 4, 5}));

  ConcatLayer<Dtype> legacy(
      ParseLayerParam("name: 'c' type: 'Concat' concat_param { concat_dim: 0 }"));
  legacy.SetUp(this->along_num_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{7, 3, 4, 5}));
}

TYPED_TEST(ConcatLayerTest, ForwardPlacesEachBottomAlongChannels) {
  using Dtype = typename TypeParam::Dtype;
  ConcatLayer<Dtype> layer(ParseLayerParam("name: 'c' type: 'Concat'"));
  layer.SetUp(this->along_channels_, this->top_vec_);
  layer.Forward(this->along_channels_, this->top_vec_);
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 5; ++c) {
      for (int h = 0; h < 4; ++h) {
        for (int w = 0; w < 5; ++w) {
          const Dtype expected =
              c < 3 ? this->bottom_0_.data_at(n, c, h, w) : this->bottom_2_.data_at(n, c - 3, h, w);
          ASSERT_EQ(this->top_.data_at(n, c, h, w), expected) << n << c << h << w;
        }
      }
    }
  }
}

TYPED_TEST(ConcatLayerTest, ForwardStacksAlongNum) {
  using Dtype = typename TypeParam::Dtype;
  ConcatLayer<Dtype> layer(ParseLayerParam("name: 'c' type: 'Concat' concat_param { axis: 0 }"));
  layer.SetUp(this->along_num_, this->top_vec_);
  layer.Forward(this->along_num_, this->top_vec_);
  const int first = this->bottom_0_.count();
  for (int i = 0; i < first; ++i)
    ASSERT_EQ(this->top_.cpu_data()[i], this->bottom_0_.cpu_data()[i]);
  for (int i = 0; i < this->bottom_1_.count(); ++i) {
    ASSERT_EQ(this->top_.cpu_data()[first + i], this->bottom_1_.cpu_data()[i]);
  }
}

TYPED_TEST(ConcatLayerTest, ForwardAlongLastAxisWithThreeBottoms) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> a(vector<int>{2, 1}), b(vector<int>{2, 3}), c(vector<int>{2, 2});
  const Dtype a_values[] = {1, 2};
  const Dtype b_values[] = {3, 4, 5, 6, 7, 8};
  const Dtype c_values[] = {9, 10, 11, 12};
  caffe_copy(2, a_values, a.mutable_cpu_data());
  caffe_copy(6, b_values, b.mutable_cpu_data());
  caffe_copy(4, c_values, c.mutable_cpu_data());
  Blobs<Dtype> bottoms{&a, &b, &c};
  ConcatLayer<Dtype> layer(ParseLayerParam("name: 'c' type: 'Concat' concat_param { axis: -1 }"));
  layer.SetUp(bottoms, this->top_vec_);
  layer.Forward(bottoms, this->top_vec_);
  ASSERT_EQ(this->top_.shape(), (vector<int>{2, 6}));
  const Dtype expected[] = {1, 3, 4, 5, 9, 10, 2, 6, 7, 8, 11, 12};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(this->top_.cpu_data()[i], expected[i]) << i;
}

TYPED_TEST(ConcatLayerTest, BackwardRoutesDiffsOnlyWherePropagateDown) {
  using Dtype = typename TypeParam::Dtype;
  ConcatLayer<Dtype> layer(ParseLayerParam("name: 'c' type: 'Concat'"));
  layer.SetUp(this->along_channels_, this->top_vec_);
  layer.Forward(this->along_channels_, this->top_vec_);
  for (int i = 0; i < this->top_.count(); ++i) this->top_.mutable_cpu_diff()[i] = Dtype(i);
  caffe_set(this->bottom_0_.count(), Dtype(-1), this->bottom_0_.mutable_cpu_diff());
  layer.Backward(this->top_vec_, {false, true}, this->along_channels_);
  for (int i = 0; i < this->bottom_0_.count(); ++i) {
    ASSERT_EQ(this->bottom_0_.cpu_diff()[i], Dtype(-1));
  }
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 2; ++c) {
      for (int h = 0; h < 4; ++h) {
        for (int w = 0; w < 5; ++w) {
          ASSERT_EQ(this->bottom_2_.diff_at(n, c, h, w), this->top_.diff_at(n, c + 3, h, w));
        }
      }
    }
  }
}

TYPED_TEST(ConcatLayerTest, SingleBottomIsPassedThrough) {
  using Dtype = typename TypeParam::Dtype;
  ConcatLayer<Dtype> layer(ParseLayerParam("name: 'c' type: 'Concat'"));
  Blobs<Dtype> one{&this->bottom_0_};
  layer.SetUp(one, this->top_vec_);
  layer.Forward(one, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), this->bottom_0_.shape());
  EXPECT_EQ(this->top_.cpu_data(), this->bottom_0_.cpu_data());
  EXPECT_EQ(this->top_.cpu_diff(), this->bottom_0_.cpu_diff());
}

TYPED_TEST(ConcatLayerTest, RejectsMismatchedShapes) {
  using Dtype = typename TypeParam::Dtype;
  ConcatLayer<Dtype> layer(ParseLayerParam("name: 'c1' type: 'Concat'"));
  try {
    layer.SetUp(this->along_num_, this->top_vec_);  // differ on axis 0, not 1
    FAIL() << "expected caffe::Error";
  } catch (const caffe::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("Concat layer 'c1'"), std::string::npos) << message;
    EXPECT_NE(message.find("5 3 4 5"), std::string::npos) << message;
  }
  Blob<Dtype> three_axes(vector<int>{2, 3, 4});
  Blobs<Dtype> bottoms{&this->bottom_0_, &three_axes};
  ConcatLayer<Dtype> other(ParseLayerParam("name: 'c1' type: 'Concat'"));
  EXPECT_THROW(other.SetUp(bottoms, this->top_vec_), caffe::Error);
}

TYPED_TEST(ConcatLayerTest, RejectsBadAxisParameters) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* param :
       {"concat_param { axis: 4 }", "concat_param { axis: -5 }", "concat_param { concat_dim: 4 }",
        "concat_param { axis: 1 concat_dim: 1 }"}) {
    ConcatLayer<Dtype> layer(ParseLayerParam(std::string("name: 'c' type: 'Concat' ") + param));
    EXPECT_THROW(layer.SetUp(this->along_channels_, this->top_vec_), caffe::Error) << param;
  }
}

TYPED_TEST(ConcatLayerTest, GradientsMatchFiniteDifferencesAlongChannels) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> a(vector<int>{2, 2, 2, 3}), b(vector<int>{2, 1, 2, 3});
  FillGaussian(&a, 11);
  FillGaussian(&b, 12);
  Blobs<Dtype> bottoms{&a, &b};
  ConcatLayer<Dtype> layer(ParseLayerParam("name: 'c' type: 'Concat'"));
  GradientChecker<Dtype> checker(/*stepsize=*/1e-2, /*threshold=*/1e-2);
  checker.CheckGradientExhaustive(&layer, bottoms, this->top_vec_);
}

TYPED_TEST(ConcatLayerTest, GradientsMatchFiniteDifferencesAlongNum) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> a(vector<int>{1, 2, 3}), b(vector<int>{2, 2, 3});
  FillGaussian(&a, 13);
  FillGaussian(&b, 14);
  Blobs<Dtype> bottoms{&a, &b};
  ConcatLayer<Dtype> layer(ParseLayerParam("name: 'c' type: 'Concat' concat_param { axis: 0 }"));
  GradientChecker<Dtype> checker(/*stepsize=*/1e-2, /*threshold=*/1e-2);
  checker.CheckGradientExhaustive(&layer, bottoms, this->top_vec_);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class ConcatLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(ConcatLayerGpuTest, TestDtypes);

TYPED_TEST(ConcatLayerGpuTest, ConcatAlongAxis0) {
  GpuLayerCase<TypeParam> c;
  c.layer =
      "name: 'cat' type: 'Concat' concat_param { axis: 0 } bottom: 'a' bottom: 'b' "
      "top: 'y'";
  c.bottom_shapes = {{2, 3, 8, 9}, {3, 3, 8, 9}};
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(ConcatLayerGpuTest, ConcatAlongAxis1) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'cat' type: 'Concat' bottom: 'a' bottom: 'b' bottom: 'c' top: 'y'";
  c.bottom_shapes = {{3, 3, 8, 9}, {3, 5, 8, 9}, {3, 1, 8, 9}};
  ExpectGpuMatchesCpu(c);
  c.propagate_down = {true, false, true};
  ExpectGpuMatchesCpu(c);
}

}  // namespace caffe
