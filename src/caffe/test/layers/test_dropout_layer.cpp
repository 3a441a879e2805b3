#include <cmath>
#include <string>
#include <vector>

#include "caffe/layers/dropout_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class DropoutLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  // Values kept away from 0 so a dropped element (0) is never mistaken for a kept one.
  DropoutLayerTest() : bottom_(vector<int>{10, 10, 10, 10}) {
    FillUniform<Dtype>(&bottom_, 1701, 1, 2);
  }

  // Runs a TRAIN-phase forward and checks every element is either dropped or scaled; returns the
  // fraction dropped.
  double ForwardTrainAndCountDropped(float ratio) {
    LayerParameter param = ParseLayerParam("phase: TRAIN");
    param.mutable_dropout_param()->set_dropout_ratio(ratio);
    DropoutLayer<Dtype> layer(param);
    layer.SetUp(bottom_vec_, top_vec_);
    layer.Forward(bottom_vec_, top_vec_);
    const double scale = 1. / (1. - static_cast<Dtype>(ratio));
    int dropped = 0;
    for (int i = 0; i < bottom_.count(); ++i) {
      const Dtype y = top_.cpu_data()[i];
      if (y == 0) {
        ++dropped;
      } else {
        EXPECT_NEAR(y, bottom_.cpu_data()[i] * scale, 1e-6 * y) << i;
      }
    }
    return static_cast<double>(dropped) / bottom_.count();
  }

  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(DropoutLayerTest, TestDtypesAndDevices);

TYPED_TEST(DropoutLayerTest, TopHasBottomShape) {
  using Dtype = typename TypeParam::Dtype;
  DropoutLayer<Dtype> layer(ParseLayerParam("phase: TRAIN"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
}

TYPED_TEST(DropoutLayerTest, TrainDropsAboutRatioAndScalesTheRest) {
  // 10000 draws: the standard deviation of the dropped fraction is <= 0.005.
  EXPECT_NEAR(this->ForwardTrainAndCountDropped(0.5f), 0.5, 0.03);
  EXPECT_NEAR(this->ForwardTrainAndCountDropped(0.3f), 0.3, 0.03);
  EXPECT_NEAR(this->ForwardTrainAndCountDropped(0.9f), 0.9, 0.03);
}

TYPED_TEST(DropoutLayerTest, ZeroRatioKeepsEverything) {
  EXPECT_EQ(this->ForwardTrainAndCountDropped(0.f), 0.0);
}

TYPED_TEST(DropoutLayerTest, TrainBackwardUsesTheForwardMask) {
  using Dtype = typename TypeParam::Dtype;
  DropoutLayer<Dtype> layer(ParseLayerParam("phase: TRAIN dropout_param { dropout_ratio: 0.4 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  caffe_set(this->top_.count(), Dtype(3), this->top_.mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true}, this->bottom_vec_);
  const Dtype scale = Dtype(1. / (1. - Dtype(0.4f)));
  for (int i = 0; i < this->bottom_.count(); ++i) {
    const bool kept = this->top_.cpu_data()[i] != 0;
    EXPECT_EQ(this->bottom_.cpu_diff()[i], kept ? Dtype(3) * scale : Dtype(0)) << i;
  }
}

TYPED_TEST(DropoutLayerTest, SameSeedDrawsSameMask) {
  using Dtype = typename TypeParam::Dtype;
  DropoutLayer<Dtype> layer(ParseLayerParam("phase: TRAIN"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  Caffe::set_random_seed(42);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  vector<Dtype> first(this->top_.cpu_data(), this->top_.cpu_data() + this->top_.count());
  layer.Forward(this->bottom_vec_, this->top_vec_);
  bool differs = false;
  for (int i = 0; i < this->top_.count(); ++i) differs |= this->top_.cpu_data()[i] != first[i];
  EXPECT_TRUE(differs) << "consecutive forwards must draw fresh masks";
  Caffe::set_random_seed(42);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < this->top_.count(); ++i) EXPECT_EQ(this->top_.cpu_data()[i], first[i]);
}

TYPED_TEST(DropoutLayerTest, TestPhaseIsIdentityBothWays) {
  using Dtype = typename TypeParam::Dtype;
  DropoutLayer<Dtype> layer(ParseLayerParam("phase: TEST dropout_param { dropout_ratio: 0.3 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  FillGaussian<Dtype>(&this->top_, 5);  // stale values: the next forward must overwrite them
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < this->bottom_.count(); ++i) {
    EXPECT_EQ(this->top_.cpu_data()[i], this->bottom_.cpu_data()[i]) << i;
  }
  for (int i = 0; i < this->top_.count(); ++i) this->top_.mutable_cpu_diff()[i] = Dtype(i % 7);
  layer.Backward(this->top_vec_, {true}, this->bottom_vec_);
  for (int i = 0; i < this->bottom_.count(); ++i) {
    EXPECT_EQ(this->bottom_.cpu_diff()[i], Dtype(i % 7)) << i;
  }
}

TYPED_TEST(DropoutLayerTest, InPlaceTrainMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  const char* text = "phase: TRAIN dropout_param { dropout_ratio: 0.5 }";
  DropoutLayer<Dtype> layer(ParseLayerParam(text));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  Caffe::set_random_seed(3);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  caffe_set(this->top_.count(), Dtype(1), this->top_.mutable_cpu_diff());
  layer.Backward(this->top_vec_, {true}, this->bottom_vec_);

  Blob<Dtype> blob;
  blob.CopyFrom(this->bottom_, false, true);
  Blobs<Dtype> in_place{&blob};
  DropoutLayer<Dtype> in_place_layer(ParseLayerParam(text));
  in_place_layer.SetUp(in_place, in_place);
  Caffe::set_random_seed(3);
  in_place_layer.Forward(in_place, in_place);
  caffe_set(blob.count(), Dtype(1), blob.mutable_cpu_diff());
  in_place_layer.Backward(in_place, {true}, in_place);
  for (int i = 0; i < blob.count(); ++i) {
    EXPECT_EQ(blob.cpu_data()[i], this->top_.cpu_data()[i]) << i;
    EXPECT_EQ(blob.cpu_diff()[i], this->bottom_.cpu_diff()[i]) << i;
  }
}

TYPED_TEST(DropoutLayerTest, TrainGradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{2, 3, 4}), top;
  FillGaussian<Dtype>(&bottom, 11);
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  DropoutLayer<Dtype> layer(ParseLayerParam("phase: TRAIN"));
  // The checker reseeds before every forward, so all differences see the same mask.
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3), 1701);
  checker.CheckGradientEltwise(&layer, bottom_vec, top_vec);
}

TYPED_TEST(DropoutLayerTest, RejectsRatioOutsideZeroToOne) {
  using Dtype = typename TypeParam::Dtype;
  DropoutLayer<Dtype> one(ParseLayerParam("dropout_param { dropout_ratio: 1 }"));
  EXPECT_THROW(one.SetUp(this->bottom_vec_, this->top_vec_), Error);
  DropoutLayer<Dtype> negative(ParseLayerParam("dropout_param { dropout_ratio: -0.1 }"));
  EXPECT_THROW(negative.SetUp(this->bottom_vec_, this->top_vec_), Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----
// TRAIN draws another mask on the GPU (another generator): it is checked for its statistics and
// for using one mask both ways.

template <typename Dtype>
class DropoutLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(DropoutLayerGpuTest, TestDtypes);

TYPED_TEST(DropoutLayerGpuTest, DropoutTestPhaseIsTheIdentity) {
  const char* const kLayer =
      "name: 'drop' type: 'Dropout' phase: TEST dropout_param { dropout_ratio: 0.3 } ";
  ExpectGpuMatchesCpu(
      MakeGpuCase<TypeParam>(std::string(kLayer) + "bottom: 'x' top: 'y'", {kGpuCheckLargeShape}));
  ExpectInPlaceGpuMatchesCpu(
      MakeGpuCase<TypeParam>(std::string(kLayer) + "bottom: 'x' top: 'x'", {kGpuCheckShape}));
}

// TRAIN on the GPU: about dropout_ratio of the values are zeroed, the others scaled by
// 1 / (1 - ratio) exactly as the CPU path computes it, and backward applies the same mask.
TYPED_TEST(DropoutLayerGpuTest, DropoutTrainDropsAboutRatioAndBackwardUsesTheMask) {
  using Dtype = TypeParam;
  Caffe::set_mode(Caffe::GPU);
  // Inputs in [1, 2), so a zero in the top always means "dropped".
  Blob<Dtype> bottom(std::vector<int>{100, 10, 101}), top;
  FillUniform<Dtype>(&bottom, 7, 1, 2);
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  for (const float ratio : {0.f, 0.3f, 0.5f, 0.9f}) {
    SCOPED_TRACE(ratio);
    LayerParameter param = ParseLayerParam("type: 'Dropout' phase: TRAIN");
    param.mutable_dropout_param()->set_dropout_ratio(ratio);
    DropoutLayer<Dtype> layer(param);
    layer.SetUp(bottom_vec, top_vec);
    layer.Forward(bottom_vec, top_vec);
    Blob<Dtype> top_gradient(top.shape());
    FillGaussian(&top_gradient, 8);
    caffe_copy(top.count(), top_gradient.cpu_data(), top.mutable_cpu_diff());
    layer.Backward(top_vec, {true}, bottom_vec);

    const Dtype scale = static_cast<Dtype>(1. / (1. - static_cast<double>(Dtype(ratio))));
    const Dtype* x = bottom.cpu_data();
    const Dtype* y = top.cpu_data();
    const Dtype* dy = top.cpu_diff();
    const Dtype* dx = bottom.cpu_diff();
    int dropped = 0, mismatches = 0;
    for (int i = 0; i < bottom.count() && mismatches < 5; ++i) {
      const bool kept = y[i] != 0;
      dropped += !kept;
      const Dtype expected_y = kept ? x[i] * Dtype(1) * scale : Dtype(0);
      const Dtype expected_dx = kept ? dy[i] * Dtype(1) * scale : Dtype(0);
      if (y[i] != expected_y || dx[i] != expected_dx) {
        ++mismatches;
        ADD_FAILURE() << "element " << i << ": x " << x[i] << ", y " << y[i] << " (expected "
                      << expected_y << "), dy " << dy[i] << ", dx " << dx[i] << " (expected "
                      << expected_dx << ")";
      }
    }
    // 101000 draws: the dropped fraction's standard deviation is below 0.0016.
    const double dropped_fraction = static_cast<double>(dropped) / bottom.count();
    if (ratio == 0.f) {
      EXPECT_EQ(dropped, 0);
    } else {
      EXPECT_NEAR(dropped_fraction, ratio, 0.01);
    }
  }
}

// The GPU mask follows Caffe's seed, and in place gives what out of place gives.
TYPED_TEST(DropoutLayerGpuTest, DropoutTrainSeededAndInPlace) {
  using Dtype = TypeParam;
  Caffe::set_mode(Caffe::GPU);
  const std::vector<int> shape = {3, 7, 129};
  Blob<Dtype> input(shape);
  FillUniform<Dtype>(&input, 9, 1, 2);
  Blob<Dtype> top_gradient(shape);
  FillGaussian(&top_gradient, 10);
  const char* const kLayer = "type: 'Dropout' phase: TRAIN dropout_param { dropout_ratio: 0.4 }";

  // Out of place, twice from the same seed, and once more without reseeding.
  Blob<Dtype> bottom(shape), top;
  bottom.CopyFrom(input);
  Blobs<Dtype> bottom_vec{&bottom}, top_vec{&top};
  DropoutLayer<Dtype> layer(ParseLayerParam(kLayer));
  layer.SetUp(bottom_vec, top_vec);
  Caffe::set_random_seed(1234);
  layer.Forward(bottom_vec, top_vec);
  caffe_copy(top.count(), top_gradient.cpu_data(), top.mutable_cpu_diff());
  layer.Backward(top_vec, {true}, bottom_vec);
  const std::vector<Dtype> first_top(top.cpu_data(), top.cpu_data() + top.count());
  const std::vector<Dtype> first_dx(bottom.cpu_diff(), bottom.cpu_diff() + bottom.count());
  layer.Forward(bottom_vec, top_vec);
  bool differs = false;
  for (int i = 0; i < top.count(); ++i) differs |= top.cpu_data()[i] != first_top[i];
  EXPECT_TRUE(differs) << "consecutive forwards must draw fresh masks";
  Caffe::set_random_seed(1234);
  layer.Forward(bottom_vec, top_vec);
  for (int i = 0; i < top.count(); ++i) ASSERT_EQ(top.cpu_data()[i], first_top[i]) << i;

  // In place from the same seed: the same output and gradient.
  Blob<Dtype> blob(shape);
  blob.CopyFrom(input);
  Blobs<Dtype> in_place{&blob};
  DropoutLayer<Dtype> in_place_layer(ParseLayerParam(kLayer));
  in_place_layer.SetUp(in_place, in_place);
  Caffe::set_random_seed(1234);
  in_place_layer.Forward(in_place, in_place);
  caffe_copy(blob.count(), top_gradient.cpu_data(), blob.mutable_cpu_diff());
  in_place_layer.Backward(in_place, {true}, in_place);
  for (int i = 0; i < blob.count(); ++i) {
    ASSERT_EQ(blob.cpu_data()[i], first_top[i]) << i;
    ASSERT_EQ(blob.cpu_diff()[i], first_dx[i]) << i;
  }
}

}  // namespace caffe
