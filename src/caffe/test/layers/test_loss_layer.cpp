// LossLayer: the default loss weights, the batch check, and the normalizer every loss divides by,
// checked on a minimal subclass so the base is tested apart from any one loss.
#include "caffe/layers/loss_layer.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {
// Sums bottom[0]; ignores bottom[1]. Has an optional second (non-loss) top.
template <typename Dtype>
class SumLossLayer final : public LossLayer<Dtype> {
 public:
  using LossLayer<Dtype>::LossLayer;
  const char* type() const override { return "SumLoss"; }
  int ExactNumTopBlobs() const override { return -1; }
  int MinTopBlobs() const override { return 1; }
  int MaxTopBlobs() const override { return 2; }
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {
    LossLayer<Dtype>::Reshape(bottom, top);
    if (top.size() > 1) top[1]->Reshape(vector<int>{1});
  }

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {
    Dtype sum = 0;
    for (int i = 0; i < bottom[0]->count(); ++i) sum += bottom[0]->cpu_data()[i];
    top[0]->mutable_cpu_data()[0] = sum;
    if (top.size() > 1) top[1]->mutable_cpu_data()[0] = 100;
  }
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override {}
};
}  // namespace

template <typename TypeParam>
class LossLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  LossLayerTest() : data_(vector<int>{3, 2}), labels_(vector<int>{3}) {
    caffe_set(6, Dtype(0.5), data_.mutable_cpu_data());
  }
  Blob<Dtype> data_, labels_, loss_, extra_;
  Blobs<Dtype> bottom_vec_{&data_, &labels_}, top_vec_{&loss_};
};
TYPED_TEST_SUITE(LossLayerTest, TestDtypesAndDevices);

TYPED_TEST(LossLayerTest, DefaultLossWeightIsOneOnFirstTopOnly) {
  using Dtype = typename TypeParam::Dtype;
  SumLossLayer<Dtype> layer(LayerParameter{});
  Blobs<Dtype> tops{&this->loss_, &this->extra_};
  layer.SetUp(this->bottom_vec_, tops);
  EXPECT_EQ(this->loss_.num_axes(), 0);
  EXPECT_EQ(layer.loss(0), Dtype(1));
  EXPECT_EQ(layer.loss(1), Dtype(0));
  EXPECT_EQ(layer.Forward(this->bottom_vec_, tops), Dtype(3));  // the extra top adds nothing
}

TYPED_TEST(LossLayerTest, ExplicitLossWeightIsKeptAndScalesForward) {
  using Dtype = typename TypeParam::Dtype;
  SumLossLayer<Dtype> layer(ParseLayerParam("loss_weight: 0.25"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(layer.loss(0), Dtype(0.25));
  EXPECT_EQ(this->loss_.cpu_diff()[0], Dtype(0.25));  // where Backward reads it
  EXPECT_EQ(layer.Forward(this->bottom_vec_, this->top_vec_), Dtype(0.75));
}

TYPED_TEST(LossLayerTest, DeclaresArityAndLabelGradientPolicy) {
  using Dtype = typename TypeParam::Dtype;
  SumLossLayer<Dtype> layer(LayerParameter{});
  EXPECT_EQ(layer.ExactNumBottomBlobs(), 2);
  EXPECT_TRUE(layer.AutoTopBlobs());
  EXPECT_TRUE(layer.AllowForceBackward(0));
  EXPECT_FALSE(layer.AllowForceBackward(1));
}

TYPED_TEST(LossLayerTest, RejectsBottomsWithDifferentBatchSize) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> labels(vector<int>{4});
  Blobs<Dtype> bottom{&this->data_, &labels};
  SumLossLayer<Dtype> layer(ParseLayerParam("name: 'l'"));
  try {
    layer.SetUp(bottom, this->top_vec_);
    FAIL() << "expected caffe::Error";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("SumLoss layer 'l': "), std::string::npos) << message;
    EXPECT_NE(message.find("3 vs. 4"), std::string::npos) << message;
  }
  Blob<Dtype> scalar(vector<int>{});
  Blobs<Dtype> no_batch{&this->data_, &scalar};
  EXPECT_THROW(layer.SetUp(no_batch, this->top_vec_), Error);
}

TYPED_TEST(LossLayerTest, NormalizationModeHonoursDeprecatedNormalize) {
  using Dtype = typename TypeParam::Dtype;
  LossParameter param;
  EXPECT_EQ(LossLayer<Dtype>::NormalizationMode(param), LossParameter::VALID);
  param.set_normalize(false);
  EXPECT_EQ(LossLayer<Dtype>::NormalizationMode(param), LossParameter::BATCH_SIZE);
  param.set_normalize(true);
  EXPECT_EQ(LossLayer<Dtype>::NormalizationMode(param), LossParameter::VALID);
  param.set_normalization(LossParameter::NONE);
  EXPECT_EQ(LossLayer<Dtype>::NormalizationMode(param), LossParameter::NONE);
}

TYPED_TEST(LossLayerTest, NormalizerPerModeNeverBelowOne) {
  using Dtype = typename TypeParam::Dtype;
  auto normalizer = [](LossParameter::NormalizationMode mode, int outer, int inner, int valid) {
    return LossLayer<Dtype>::GetNormalizer(mode, outer, inner, valid);
  };
  EXPECT_EQ(normalizer(LossParameter::FULL, 4, 6, 5), Dtype(24));
  EXPECT_EQ(normalizer(LossParameter::VALID, 4, 6, 5), Dtype(5));
  EXPECT_EQ(normalizer(LossParameter::VALID, 4, 6, -1), Dtype(24));  // -1: all valid
  EXPECT_EQ(normalizer(LossParameter::BATCH_SIZE, 4, 6, 5), Dtype(4));
  EXPECT_EQ(normalizer(LossParameter::NONE, 4, 6, 5), Dtype(1));
  EXPECT_EQ(normalizer(LossParameter::VALID, 4, 6, 0), Dtype(1));  // everything ignored
  EXPECT_EQ(normalizer(LossParameter::FULL, 0, 6, 0), Dtype(1));
}

}  // namespace caffe
