#include <cmath>
#include <string>
#include <vector>

#include "caffe/layers/softmax_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class SoftmaxLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  SoftmaxLayerTest() : bottom_(vector<int>{2, 10, 2, 3}) { FillGaussian<Dtype>(&bottom_, 1701); }

  // Checks top against a direct double-precision softmax of bottom over `axis`.
  void ExpectSoftmaxOver(int axis, double tolerance = 1e-6) {
    const int outer = bottom_.count(0, axis);
    const int channels = bottom_.shape(axis);
    const int inner = bottom_.count(axis + 1);
    for (int o = 0; o < outer; ++o) {
      for (int i = 0; i < inner; ++i) {
        double sum = 0;
        for (int c = 0; c < channels; ++c) {
          sum += std::exp(static_cast<double>(bottom_.cpu_data()[(o * channels + c) * inner + i]));
        }
        for (int c = 0; c < channels; ++c) {
          const int index = (o * channels + c) * inner + i;
          const double expected = std::exp(static_cast<double>(bottom_.cpu_data()[index])) / sum;
          EXPECT_NEAR(top_.cpu_data()[index], expected, tolerance) << "o=" << o << " c=" << c;
        }
      }
    }
  }

  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(SoftmaxLayerTest, TestDtypesAndDevices);

TYPED_TEST(SoftmaxLayerTest, TopHasBottomShape) {
  using Dtype = typename TypeParam::Dtype;
  SoftmaxLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
}

TYPED_TEST(SoftmaxLayerTest, ForwardMatchesHandComputedValues) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{2, 3}), top;
  // The second row would overflow exp without subtracting the maximum first.
  const Dtype x[] = {1, 2, 3, 1000, 1001, 1000};
  caffe_copy(6, x, bottom.mutable_cpu_data());
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  SoftmaxLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(bottom_vec, top_vec);
  layer.Forward(bottom_vec, top_vec);
  const double expected[] = {0.0900305732, 0.2447284711, 0.6652409558,
                             0.2119415576, 0.5761168847, 0.2119415576};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(top.cpu_data()[i], expected[i], 1e-6) << i;
}

TYPED_TEST(SoftmaxLayerTest, ForwardOverChannelsOfSpatialBlob) {
  using Dtype = typename TypeParam::Dtype;
  SoftmaxLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  this->ExpectSoftmaxOver(1);
}

TYPED_TEST(SoftmaxLayerTest, ForwardOverOtherAxes) {
  using Dtype = typename TypeParam::Dtype;
  SoftmaxLayer<Dtype> last(ParseLayerParam("softmax_param { axis: -1 }"));
  last.SetUp(this->bottom_vec_, this->top_vec_);
  last.Forward(this->bottom_vec_, this->top_vec_);
  this->ExpectSoftmaxOver(3);
  SoftmaxLayer<Dtype> first(ParseLayerParam("softmax_param { axis: 0 }"));
  first.SetUp(this->bottom_vec_, this->top_vec_);
  first.Forward(this->bottom_vec_, this->top_vec_);
  this->ExpectSoftmaxOver(0);
}

// Blobs large enough that the exp runs on oneDNN's vector kernels in a build with them
// (kernels/vector_math.hpp) and the passes around it on several threads, spatial (with a last run
// of positions shorter than the others) and classifier-shaped; backward against its formula.
TYPED_TEST(SoftmaxLayerTest, ForwardAndBackwardOnLargeBlobs) {
  using Dtype = typename TypeParam::Dtype;
  for (const vector<int>& shape : {vector<int>{3, 5, 61, 67}, vector<int>{40, 1000}}) {
    this->bottom_.Reshape(shape);
    FillGaussian<Dtype>(&this->bottom_, 1702);
    caffe_scal(this->bottom_.count(), Dtype(4), this->bottom_.mutable_cpu_data());
    SoftmaxLayer<Dtype> layer(LayerParameter{});
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    layer.Forward(this->bottom_vec_, this->top_vec_);
    // In float the sum over 1,000 classes carries a few 1e-6 of rounding (as in BVLC's loop).
    this->ExpectSoftmaxOver(1, 1e-5);

    Blob<Dtype> gradient(shape);
    FillGaussian<Dtype>(&gradient, 1703);
    caffe_copy(gradient.count(), gradient.cpu_data(), this->top_.mutable_cpu_diff());
    layer.Backward(this->top_vec_, {true}, this->bottom_vec_);
    const int outer = shape[0], channels = shape[1], inner = this->bottom_.count(2);
    const Dtype* y = this->top_.cpu_data();
    const Dtype* dy = this->top_.cpu_diff();
    for (int o = 0; o < outer; ++o) {
      for (int i = 0; i < inner; ++i) {
        double dot = 0;
        for (int c = 0; c < channels; ++c) {
          const int index = (o * channels + c) * inner + i;
          dot += static_cast<double>(dy[index]) * y[index];
        }
        for (int c = 0; c < channels; ++c) {
          const int index = (o * channels + c) * inner + i;
          ASSERT_NEAR(this->bottom_.cpu_diff()[index], (dy[index] - dot) * y[index], 1e-5)
              << "o=" << o << " c=" << c << " i=" << i;
        }
      }
    }
  }
}

TYPED_TEST(SoftmaxLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  SoftmaxLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  Blob<Dtype> top_diff(this->top_.shape());
  FillGaussian<Dtype>(&top_diff, 9);
  caffe_copy(top_diff.count(), top_diff.cpu_data(), this->top_.mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true}, this->bottom_vec_);

  Blob<Dtype> blob;
  blob.CopyFrom(this->bottom_, false, true);
  Blobs<Dtype> in_place{&blob};
  SoftmaxLayer<Dtype> in_place_layer(LayerParameter{});
  in_place_layer.SetUp(in_place, in_place);
  in_place_layer.Forward(in_place, in_place);
  caffe_copy(top_diff.count(), top_diff.cpu_data(), blob.mutable_cpu_diff());
  in_place_layer.Backward(in_place, {true}, in_place);
  for (int i = 0; i < blob.count(); ++i) {
    EXPECT_EQ(blob.cpu_data()[i], this->top_.cpu_data()[i]) << i;
    EXPECT_EQ(blob.cpu_diff()[i], this->bottom_.cpu_diff()[i]) << i;
  }
}

TYPED_TEST(SoftmaxLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{2, 4, 2, 3}), top;
  FillGaussian<Dtype>(&bottom, 5);
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  SoftmaxLayer<Dtype> layer(LayerParameter{});
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3));
  checker.CheckGradientExhaustive(&layer, bottom_vec, top_vec);
}

TYPED_TEST(SoftmaxLayerTest, ClassifierShapeGradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{3, 7}), top;  // inner == 1: the row-wise path
  FillGaussian<Dtype>(&bottom, 6);
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  SoftmaxLayer<Dtype> layer(LayerParameter{});
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3));
  checker.CheckGradientExhaustive(&layer, bottom_vec, top_vec);
}

TYPED_TEST(SoftmaxLayerTest, RejectsAxisOutOfRange) {
  using Dtype = typename TypeParam::Dtype;
  SoftmaxLayer<Dtype> layer(ParseLayerParam("name: 'prob' softmax_param { axis: 4 }"));
  try {
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    FAIL() << "expected caffe::Error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("Softmax layer 'prob'"), std::string::npos) << message;
    EXPECT_NE(message.find("axis is 4"), std::string::npos) << message;
  }
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----
// These cases test Caffe's own softmax kernels: in cuDNN builds the DEFAULT engine is cuDNN's
// (tested with the cuDNN layers). SoftmaxWithLoss passes the engine to its inner Softmax layer.

namespace {

const std::string kCaffeSoftmax = "softmax_param { engine: CAFFE }";

}  // namespace

template <typename Dtype>
class SoftmaxLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(SoftmaxLayerGpuTest, TestDtypes);

TYPED_TEST(SoftmaxLayerGpuTest, SoftmaxOverContiguousRowsOfManyClasses) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'prob' type: 'Softmax' " + kCaffeSoftmax + " bottom: 'x' top: 'y'";
  c.bottom_shapes = {{37, 1003}};  // inner == 1: one block per row, several values per thread
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(SoftmaxLayerGpuTest, SoftmaxOverChannelsOfSpatialBlob) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'prob' type: 'Softmax' " + kCaffeSoftmax + " bottom: 'x' top: 'y'";
  c.bottom_shapes = {{3, 7, 13, 17}};  // 663 positions of 7 classes, 221 apart
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(SoftmaxLayerGpuTest, SoftmaxOverLastAxis) {
  GpuLayerCase<TypeParam> c;
  c.layer =
      "name: 'prob' type: 'Softmax' softmax_param { engine: CAFFE axis: -1 } "
      "bottom: 'x' top: 'y'";
  c.bottom_shapes = {{5, 11, 13}};
  ExpectGpuMatchesCpu(c);
}

}  // namespace caffe
