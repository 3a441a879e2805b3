// CropLayer: top shapes for the default axis, a negative axis and per-axis offsets, cropped
// values against indexing, backward (zeros outside the crop), finite differences, and errors.
// CropLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <vector>

#include "caffe/layers/crop_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class CropLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  CropLayerTest() : data_(vector<int>{2, 4, 5, 6}), reference_(vector<int>{2, 2, 2, 3}) {
    FillGaussian<Dtype>(&data_, 1701);
  }
  Blob<Dtype> data_, reference_, top_;
  Blobs<Dtype> bottom_vec_{&data_, &reference_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(CropLayerTest, TestDtypesAndDevices);

TYPED_TEST(CropLayerTest, IsRegisteredAsCrop) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("name: 'c' type: 'Crop'"));
  EXPECT_STREQ(layer->type(), "Crop");
}

TYPED_TEST(CropLayerTest, TopTakesTheReferenceSizeFromAxisOn) {
  using Dtype = typename TypeParam::Dtype;
  CropLayer<Dtype> spatial(LayerParameter{});
  spatial.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{2, 4, 2, 3}));
  CropLayer<Dtype> negative(ParseLayerParam("crop_param { axis: -3 }"));
  negative.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{2, 2, 2, 3}));
  CropLayer<Dtype> all(ParseLayerParam("crop_param { axis: 0 }"));
  all.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{2, 2, 2, 3}));
}

TYPED_TEST(CropLayerTest, OneOffsetAppliesToEveryCroppedAxis) {
  using Dtype = typename TypeParam::Dtype;
  CropLayer<Dtype> layer(ParseLayerParam("crop_param { offset: 2 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 4; ++c) {
      for (int h = 0; h < 2; ++h) {
        for (int w = 0; w < 3; ++w) {
          EXPECT_EQ(this->top_.data_at(n, c, h, w), this->data_.data_at(n, c, h + 2, w + 2));
        }
      }
    }
  }
}

TYPED_TEST(CropLayerTest, OffsetsPerAxis) {
  using Dtype = typename TypeParam::Dtype;
  CropLayer<Dtype> layer(ParseLayerParam("crop_param { axis: 1 offset: 1 offset: 3 offset: 2 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(this->top_.shape(), (vector<int>{2, 2, 2, 3}));
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 2; ++c) {
      for (int h = 0; h < 2; ++h) {
        for (int w = 0; w < 3; ++w) {
          EXPECT_EQ(this->top_.data_at(n, c, h, w), this->data_.data_at(n, c + 1, h + 3, w + 2));
        }
      }
    }
  }
}

TYPED_TEST(CropLayerTest, CropsAOneAxisBlob) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> data(vector<int>{6}), reference(vector<int>{3}), top;
  for (int i = 0; i < 6; ++i) data.mutable_cpu_data()[i] = Dtype(i);
  Blobs<Dtype> bottom_vec{&data, &reference}, top_vec{&top};
  CropLayer<Dtype> layer(ParseLayerParam("crop_param { axis: 0 offset: 2 }"));
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  ASSERT_EQ(top.shape(), vector<int>{3});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(top.cpu_data()[i], Dtype(i + 2));
}

TYPED_TEST(CropLayerTest, BackwardPlacesTheDiffAndZerosTheRest) {
  using Dtype = typename TypeParam::Dtype;
  CropLayer<Dtype> layer(ParseLayerParam("crop_param { offset: 1 offset: 2 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < this->top_.count(); ++i) this->top_.mutable_cpu_diff()[i] = Dtype(i + 1);
  caffe_set(this->data_.count(), Dtype(5), this->data_.mutable_cpu_diff());
  caffe_set(this->reference_.count(), Dtype(5), this->reference_.mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true, true}, this->bottom_vec_);
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 4; ++c) {
      for (int h = 0; h < 5; ++h) {
        for (int w = 0; w < 6; ++w) {
          const bool inside = h >= 1 && h < 3 && w >= 2 && w < 5;
          const Dtype expected = inside ? this->top_.diff_at(n, c, h - 1, w - 2) : Dtype(0);
          EXPECT_EQ(this->data_.diff_at(n, c, h, w), expected) << n << c << h << w;
        }
      }
    }
  }
  // The reference only lends its shape.
  for (int i = 0; i < this->reference_.count(); ++i) {
    EXPECT_EQ(this->reference_.cpu_diff()[i], Dtype(0));
  }
}

TYPED_TEST(CropLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> data(vector<int>{2, 2, 4, 4}), reference(vector<int>{2, 1, 2, 3});
  FillGaussian<Dtype>(&data, 1702);
  Blobs<Dtype> bottom_vec{&data, &reference};
  CropLayer<Dtype> layer(ParseLayerParam("crop_param { axis: 1 offset: 1 offset: 2 offset: 1 }"));
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3));
  checker.CheckGradientExhaustive(&layer, bottom_vec, this->top_vec_, 0);
}

TYPED_TEST(CropLayerTest, RejectsCropOutsideTheData) {
  using Dtype = typename TypeParam::Dtype;
  CropLayer<Dtype> layer(ParseLayerParam("name: 'c' crop_param { offset: 4 }"));  // 4 + 2 > 5
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), Error);
}

TYPED_TEST(CropLayerTest, RejectsWrongNumberOfOffsets) {
  using Dtype = typename TypeParam::Dtype;
  CropLayer<Dtype> layer(ParseLayerParam("name: 'c' crop_param { axis: 1 offset: 0 offset: 0 }"));
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), Error);
}

TYPED_TEST(CropLayerTest, RejectsReferenceWithAnotherNumberOfAxes) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> reference(vector<int>{2, 2, 2});
  Blobs<Dtype> bottom_vec{&this->data_, &reference};
  CropLayer<Dtype> layer(ParseLayerParam("name: 'c'"));
  EXPECT_THROW(layer.SetUp(bottom_vec, this->top_vec_), Error);
}

TYPED_TEST(CropLayerTest, RejectsAxisOutOfRange) {
  using Dtype = typename TypeParam::Dtype;
  CropLayer<Dtype> layer(ParseLayerParam("name: 'c' crop_param { axis: 4 }"));
  EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class CropLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(CropLayerGpuTest, TestDtypes);

TYPED_TEST(CropLayerGpuTest, CropSpatialAxesWithTwoOffsets) {
  GpuLayerCase<TypeParam> c;
  c.layer =
      "name: 'crop' type: 'Crop' crop_param { axis: 2 offset: 3 offset: 5 } "
      "bottom: 'x' bottom: 'ref' top: 'y'";
  c.bottom_shapes = {{2, 4, 13, 17}, {2, 4, 7, 9}};
  c.propagate_down = {true, false};
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(CropLayerGpuTest, CropFromAxis1WithOneOffsetAndReferenceDiff) {
  GpuLayerCase<TypeParam> c;
  c.layer =
      "name: 'crop' type: 'Crop' crop_param { axis: 1 offset: 1 } "
      "bottom: 'x' bottom: 'ref' top: 'y'";
  c.bottom_shapes = {{3, 6, 10, 12}, {3, 4, 7, 8}};
  ExpectGpuMatchesCpu(c);  // bottom[1] asks for a gradient too: it must come back zero
}

}  // namespace caffe
