// Im2colLayer: top shapes, every column entry against direct indexing (2-D with pad, stride and
// dilation per axis; forced N-D; 3 spatial axes; batch axes before `axis`), finite differences
// (col2im), and parameter errors.
// Im2colLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <string>
#include <vector>

#include "caffe/layers/im2col_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

// The im2col value at top index `col` (over the axes from the channel axis on) of one image:
// image (C, d...) read at output position o, kernel offset k: o * stride - pad + k * dilation.
template <typename Dtype>
Dtype Expected(const Dtype* image, const vector<int>& image_shape, const vector<int>& top_shape,
               const vector<int>& kernel, const vector<int>& stride, const vector<int>& pad,
               const vector<int>& dilation, int col) {
  const int axes = static_cast<int>(kernel.size());
  // Split col into (row, output position...) and row into (c, kernel offset...).
  vector<int> out(axes), offset(axes);
  int rest = col;
  for (int a = axes - 1; a >= 0; --a) {
    out[a] = rest % top_shape[a + 1];
    rest /= top_shape[a + 1];
  }
  for (int a = axes - 1; a >= 0; --a) {
    offset[a] = rest % kernel[a];
    rest /= kernel[a];
  }
  const int c = rest;
  int index = c;
  for (int a = 0; a < axes; ++a) {
    const int position = out[a] * stride[a] - pad[a] + offset[a] * dilation[a];
    if (position < 0 || position >= image_shape[a + 1]) return 0;
    index = index * image_shape[a + 1] + position;
  }
  return image[index];
}

}  // namespace

template <typename TypeParam>
class Im2colLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  Im2colLayerTest() : bottom_(vector<int>{2, 3, 6, 5}) { FillGaussian<Dtype>(&bottom_, 1701); }
  // Runs the layer on `bottom` and compares every top value with Expected.
  void CheckForward(const std::string& text, Blob<Dtype>* bottom, int channel_axis,
                    const vector<int>& kernel, const vector<int>& stride, const vector<int>& pad,
                    const vector<int>& dilation, const vector<int>& expected_top_shape) {
    SCOPED_TRACE(text);
    Blob<Dtype> top;
    Blobs<Dtype> bottom_vec{bottom}, top_vec{&top};
    Im2colLayer<Dtype> layer(ParseLayerParam(text));
    layer.SetUp(bottom_vec, top_vec);
    ASSERT_EQ(top.shape(), expected_top_shape);
    layer.Forward(bottom_vec, top_vec);
    const vector<int> image_shape(bottom->shape().begin() + channel_axis, bottom->shape().end());
    const vector<int> col_shape(top.shape().begin() + channel_axis, top.shape().end());
    const int images = bottom->count(0, channel_axis);
    const int image_size = bottom->count(channel_axis);
    const int col_size = top.count(channel_axis);
    for (int n = 0; n < images; ++n) {
      for (int i = 0; i < col_size; ++i) {
        ASSERT_EQ(top.cpu_data()[n * col_size + i],
                  Expected(bottom->cpu_data() + n * image_size, image_shape, col_shape, kernel,
                           stride, pad, dilation, i))
            << "image " << n << " column entry " << i;
      }
    }
  }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(Im2colLayerTest, TestDtypesAndDevices);

TYPED_TEST(Im2colLayerTest, IsRegisteredAsIm2col) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(
      ParseLayerParam("name: 'i' type: 'Im2col' convolution_param { kernel_size: 3 }"));
  EXPECT_STREQ(layer->type(), "Im2col");
}

TYPED_TEST(Im2colLayerTest, PlainKernelMatchesIndexing) {
  this->CheckForward("convolution_param { kernel_size: 3 stride: 2 }", &this->bottom_, 1, {3, 3},
                     {2, 2}, {0, 0}, {1, 1}, {2, 27, 2, 2});
}

TYPED_TEST(Im2colLayerTest, PadStrideDilationPerAxisMatchIndexing) {
  // out_h = (6 + 2 - 3) / 1 + 1 = 6; out_w = (5 + 0 - 5) / 2 + 1 = 1.
  this->CheckForward(
      "convolution_param { kernel_h: 2 kernel_w: 3 stride_h: 1 stride_w: 2 pad_h: 1 pad_w: 0 "
      "dilation: 2 dilation: 2 }",
      &this->bottom_, 1, {2, 3}, {1, 2}, {1, 0}, {2, 2}, {2, 18, 6, 1});
}

TYPED_TEST(Im2colLayerTest, ForcedNdMatchesIndexing) {
  this->CheckForward(
      "convolution_param { kernel_size: 3 kernel_size: 2 stride: 2 pad: 1 force_nd_im2col: true }",
      &this->bottom_, 1, {3, 2}, {2, 2}, {1, 1}, {1, 1}, {2, 18, 3, 3});
}

TYPED_TEST(Im2colLayerTest, ThreeSpatialAxesMatchIndexing) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{2, 2, 3, 4, 5});
  FillGaussian<Dtype>(&bottom, 1702);
  this->CheckForward("convolution_param { kernel_size: 2 stride: 1 stride: 2 stride: 2 pad: 1 }",
                     &bottom, 1, {2, 2, 2}, {1, 2, 2}, {1, 1, 1}, {1, 1, 1}, {2, 16, 4, 3, 3});
}

TYPED_TEST(Im2colLayerTest, AxesBeforeTheChannelAxisAreImages) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{2, 3, 2, 4, 4});
  FillGaussian<Dtype>(&bottom, 1703);
  this->CheckForward("convolution_param { axis: 2 kernel_size: 3 }", &bottom, 2, {3, 3}, {1, 1},
                     {0, 0}, {1, 1}, {2, 3, 18, 2, 2});
}

TYPED_TEST(Im2colLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{1, 2, 4, 3});
  FillGaussian<Dtype>(&bottom, 1704);
  Blobs<Dtype> bottom_vec{&bottom};
  for (const char* text : {"convolution_param { kernel_size: 3 stride: 2 pad: 1 }",
                           "convolution_param { kernel_size: 2 dilation: 2 pad: 1 "
                           "force_nd_im2col: true }"}) {
    SCOPED_TRACE(text);
    Im2colLayer<Dtype> layer(ParseLayerParam(text));
    GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3));
    checker.CheckGradientExhaustive(&layer, bottom_vec, this->top_vec_);
  }
}

TYPED_TEST(Im2colLayerTest, RejectsBadParameters) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* text :
       {"name: 'i'",                                                 // no kernel
        "name: 'i' convolution_param { kernel_size: 7 }",            // 7 > 6 + 0
        "name: 'i' convolution_param { kernel_size: 3 stride: 0 }",  // zero stride
        "name: 'i' convolution_param { kernel_size: 3 kernel_size: 3 kernel_size: 3 }",
        "name: 'i' convolution_param { kernel_size: 3 kernel_h: 3 kernel_w: 3 }",
        "name: 'i' convolution_param { kernel_size: 3 axis: 3 }"}) {  // no spatial axis
    SCOPED_TRACE(text);
    Im2colLayer<Dtype> layer(ParseLayerParam(text));
    EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), Error);
  }
}

TYPED_TEST(Im2colLayerTest, RejectsHeightWidthFormForThreeSpatialAxes) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{1, 2, 3, 4, 5});
  Blobs<Dtype> bottom_vec{&bottom};
  Im2colLayer<Dtype> layer(ParseLayerParam("convolution_param { kernel_h: 2 kernel_w: 2 }"));
  EXPECT_THROW(layer.SetUp(bottom_vec, this->top_vec_), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class Im2colLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(Im2colLayerGpuTest, TestDtypes);

TYPED_TEST(Im2colLayerGpuTest, Im2colStridePadDilation) {
  // Columns overlap (kernel > stride), so backward sums several entries per input.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'im2col' type: 'Im2col' bottom: 'x' top: 'y' convolution_param { kernel_size: 3 "
      "kernel_size: 4 stride: 2 stride: 1 pad: 1 pad: 2 dilation: 2 dilation: 1 }",
      {{2, 3, 13, 11}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(Im2colLayerGpuTest, Im2colForceNd) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'im2col' type: 'Im2col' bottom: 'x' top: 'y' convolution_param { kernel_size: 3 "
      "stride: 2 pad: 1 dilation: 2 force_nd_im2col: true }",
      {{2, 3, 13, 11}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(Im2colLayerGpuTest, Im2col3d) {
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'im2col' type: 'Im2col' bottom: 'x' top: 'y' convolution_param { kernel_size: 2 "
      "kernel_size: 3 kernel_size: 2 stride: 1 stride: 2 stride: 2 pad: 1 pad: 0 pad: 1 "
      "dilation: 2 dilation: 1 dilation: 1 }",
      {{2, 2, 6, 7, 5}}, GpuDefaultTolerance<TypeParam>()));
}

TYPED_TEST(Im2colLayerGpuTest, Im2col1dAxis2) {
  // Leading axes before `axis` are images.
  ExpectGpuMatchesCpu(MakeGpuCase<TypeParam>(
      "name: 'im2col' type: 'Im2col' bottom: 'x' top: 'y' convolution_param { axis: 2 "
      "kernel_size: 5 stride: 2 pad: 2 }",
      {{2, 3, 4, 37}}, GpuDefaultTolerance<TypeParam>()));
}

}  // namespace caffe
