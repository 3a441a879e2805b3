#include <cmath>

#include "caffe/layers/dropout_layer.hpp"
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

}  // namespace caffe
