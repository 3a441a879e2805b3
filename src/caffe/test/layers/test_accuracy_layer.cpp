#include <string>
#include <vector>

#include "caffe/layers/accuracy_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class AccuracyLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  // Five items, four classes, scores chosen so the true class ranks 1st, 2nd, 3rd, 4th and 1st.
  AccuracyLayerTest() : scores_(vector<int>{5, 4}), labels_(vector<int>{5}) {
    const Dtype scores[] = {5, 1, 2, 3,   // label 0: rank 1
                            1, 4, 5, 0,   // label 1: rank 2
                            3, 2, 1, 4,   // label 1: rank 3
                            0, 1, 2, 3,   // label 0: rank 4
                            1, 2, 3, 9};  // label 3: rank 1
    caffe_copy(20, scores, scores_.mutable_cpu_data());
    const Dtype labels[] = {0, 1, 1, 0, 3};
    caffe_copy(5, labels, labels_.mutable_cpu_data());
  }

  Dtype Accuracy(const std::string& text) {
    AccuracyLayer<Dtype> layer(ParseLayerParam(text));
    layer.SetUp(bottom_vec_, top_vec_);
    layer.Forward(bottom_vec_, top_vec_);
    return accuracy_.cpu_data()[0];
  }

  Blob<Dtype> scores_, labels_, accuracy_;
  Blobs<Dtype> bottom_vec_{&scores_, &labels_}, top_vec_{&accuracy_};
};
TYPED_TEST_SUITE(AccuracyLayerTest, TestDtypesAndDevices);

TYPED_TEST(AccuracyLayerTest, TopsAreScalarAndPerClassVector) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> per_class;
  Blobs<Dtype> tops{&this->accuracy_, &per_class};
  AccuracyLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, tops);
  EXPECT_EQ(this->accuracy_.num_axes(), 0);
  EXPECT_EQ(per_class.shape(), vector<int>{4});
  EXPECT_EQ(layer.loss(0), Dtype(0));  // a metric, not a loss
}

TYPED_TEST(AccuracyLayerTest, TopKCountsRanksUpToK) {
  using Dtype = typename TypeParam::Dtype;
  EXPECT_NEAR(this->Accuracy(""), Dtype(2) / 5, 1e-7);
  EXPECT_NEAR(this->Accuracy("accuracy_param { top_k: 2 }"), Dtype(3) / 5, 1e-7);
  EXPECT_NEAR(this->Accuracy("accuracy_param { top_k: 3 }"), Dtype(4) / 5, 1e-7);
  EXPECT_NEAR(this->Accuracy("accuracy_param { top_k: 4 }"), Dtype(1), 1e-7);
}

TYPED_TEST(AccuracyLayerTest, TieWithTrueClassCountsAgainstIt) {
  using Dtype = typename TypeParam::Dtype;
  // BVLC counts every class scoring >= the true class as ranking above it.
  Blob<Dtype> scores(vector<int>{1, 3}), labels(vector<int>{1}), accuracy;
  const Dtype x[] = {2, 2, 1};
  caffe_copy(3, x, scores.mutable_cpu_data());
  Blobs<Dtype> bottom{&scores, &labels}, top{&accuracy};
  for (int label : {0, 1}) {
    labels.mutable_cpu_data()[0] = label;
    AccuracyLayer<Dtype> top1(LayerParameter{});
    top1.SetUp(bottom, top);
    top1.Forward(bottom, top);
    EXPECT_EQ(accuracy.cpu_data()[0], Dtype(0)) << "label " << label;
    AccuracyLayer<Dtype> top2(ParseLayerParam("accuracy_param { top_k: 2 }"));
    top2.SetUp(bottom, top);
    top2.Forward(bottom, top);
    EXPECT_EQ(accuracy.cpu_data()[0], Dtype(1)) << "label " << label;
  }
}

TYPED_TEST(AccuracyLayerTest, IgnoreLabelSkipsPositions) {
  using Dtype = typename TypeParam::Dtype;
  // Dropping the two items labelled 1 (ranks 2 and 3) leaves 2 of 3 correct at top 1.
  EXPECT_NEAR(this->Accuracy("accuracy_param { ignore_label: 1 }"), Dtype(2) / 3, 1e-7);
  caffe_set(5, Dtype(-1), this->labels_.mutable_cpu_data());
  EXPECT_EQ(this->Accuracy("accuracy_param { ignore_label: -1 }"), Dtype(0));  // nothing counted
}

TYPED_TEST(AccuracyLayerTest, PerClassAccuracyIsCorrectOverCountAndZeroWithoutSamples) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> per_class;
  Blobs<Dtype> tops{&this->accuracy_, &per_class};
  AccuracyLayer<Dtype> layer(ParseLayerParam("accuracy_param { top_k: 2 }"));
  layer.SetUp(this->bottom_vec_, tops);
  layer.Forward(this->bottom_vec_, tops);
  EXPECT_NEAR(this->accuracy_.cpu_data()[0], Dtype(3) / 5, 1e-7);
  // class 0: ranks 1, 4 -> 1/2; class 1: ranks 2, 3 -> 1/2; class 2: no samples; class 3: 1/1.
  EXPECT_NEAR(per_class.cpu_data()[0], Dtype(0.5), 1e-7);
  EXPECT_NEAR(per_class.cpu_data()[1], Dtype(0.5), 1e-7);
  EXPECT_EQ(per_class.cpu_data()[2], Dtype(0));
  EXPECT_NEAR(per_class.cpu_data()[3], Dtype(1), 1e-7);
  // A second forward starts from zero rather than accumulating.
  layer.Forward(this->bottom_vec_, tops);
  EXPECT_NEAR(per_class.cpu_data()[0], Dtype(0.5), 1e-7);
}

TYPED_TEST(AccuracyLayerTest, SpatialLabelsOnClassAxis) {
  using Dtype = typename TypeParam::Dtype;
  // (N=2, C=3, H=1, W=2): labels (N, H, W) = 4 positions.
  Blob<Dtype> scores(vector<int>{2, 3, 1, 2}), labels(vector<int>{2, 1, 2}), accuracy;
  const Dtype x[] = {// n = 0: channel-major, two positions each
                     1, 0, 2, 0, 3, 5,
                     // n = 1
                     0, 1, 0, 9, 4, 2};
  caffe_copy(12, x, scores.mutable_cpu_data());
  // argmax per position: n0: (2, 2); n1: (2, 1)
  const Dtype y[] = {2, 0, 2, 1};
  caffe_copy(4, y, labels.mutable_cpu_data());
  Blobs<Dtype> bottom{&scores, &labels}, top{&accuracy};
  AccuracyLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(bottom, top);
  layer.Forward(bottom, top);
  EXPECT_NEAR(accuracy.cpu_data()[0], Dtype(3) / 4, 1e-7);
}

TYPED_TEST(AccuracyLayerTest, BackwardRefusesGradientRequests) {
  using Dtype = typename TypeParam::Dtype;
  AccuracyLayer<Dtype> layer(LayerParameter{});
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_NO_THROW(layer.Backward(this->top_vec_, {false, false}, this->bottom_vec_));
  EXPECT_THROW(layer.Backward(this->top_vec_, {true, false}, this->bottom_vec_), Error);
}

TYPED_TEST(AccuracyLayerTest, RejectsBadParametersAndInputs) {
  using Dtype = typename TypeParam::Dtype;
  AccuracyLayer<Dtype> too_many(ParseLayerParam("accuracy_param { top_k: 5 }"));
  EXPECT_THROW(too_many.SetUp(this->bottom_vec_, this->top_vec_), Error);
  AccuracyLayer<Dtype> zero(ParseLayerParam("accuracy_param { top_k: 0 }"));
  EXPECT_THROW(zero.SetUp(this->bottom_vec_, this->top_vec_), Error);
  AccuracyLayer<Dtype> bad_axis(ParseLayerParam("accuracy_param { axis: 2 }"));
  EXPECT_THROW(bad_axis.SetUp(this->bottom_vec_, this->top_vec_), Error);

  Blob<Dtype> few_labels(vector<int>{4});
  Blobs<Dtype> mismatched{&this->scores_, &few_labels};
  AccuracyLayer<Dtype> count(LayerParameter{});
  EXPECT_THROW(count.SetUp(mismatched, this->top_vec_), Error);

  this->labels_.mutable_cpu_data()[2] = 4;
  AccuracyLayer<Dtype> range(ParseLayerParam("name: 'acc'"));
  range.SetUp(this->bottom_vec_, this->top_vec_);
  try {
    range.Forward(this->bottom_vec_, this->top_vec_);
    FAIL() << "expected caffe::Error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("Accuracy layer 'acc': label 4"), std::string::npos) << message;
  }
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

template <typename Dtype>
class AccuracyLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(AccuracyLayerGpuTest, TestDtypes);

TYPED_TEST(AccuracyLayerGpuTest, AccuracyTop1) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'acc' type: 'Accuracy' bottom: 'score' bottom: 'label' top: 'acc'";
  c.bottom_shapes = {{600, 10}, {600}};
  c.fill = [](const Blobs<TypeParam>& bottom) {
    FillGaussian(bottom[0], 17);
    FillLabels(bottom[1], 10);
  };
  c.backward = false;
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(AccuracyLayerGpuTest, AccuracyTopKWithPerClassTop) {
  GpuLayerCase<TypeParam> c;
  c.layer =
      "name: 'acc' type: 'Accuracy' accuracy_param { top_k: 3 } bottom: 'score' "
      "bottom: 'label' top: 'acc' top: 'per_class'";
  c.bottom_shapes = {{700, 11}, {700}};
  c.fill = [](const Blobs<TypeParam>& bottom) {
    FillGaussian(bottom[0], 18);
    FillLabels(bottom[1], 11);
  };
  c.backward = false;
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(AccuracyLayerGpuTest, AccuracySpatialWithIgnoreLabel) {
  GpuLayerCase<TypeParam> c;
  c.layer =
      "name: 'acc' type: 'Accuracy' accuracy_param { top_k: 2 ignore_label: 2 } "
      "bottom: 'score' bottom: 'label' top: 'acc' top: 'per_class'";
  c.bottom_shapes = {{4, 6, 15, 11}, {4, 1, 15, 11}};  // 660 positions of 6 classes
  c.fill = [](const Blobs<TypeParam>& bottom) {
    FillGaussian(bottom[0], 19);
    FillLabels(bottom[1], 6, 7, 2);
  };
  c.backward = false;
  ExpectGpuMatchesCpu(c);
}

}  // namespace caffe
