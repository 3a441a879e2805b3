// The Layer base class through a small test layer: the arity checks SetUp makes (with errors that
// name the layer), the order of the setup steps, loss weights stored in the tops' diffs and summed
// by Forward, learned blobs taken from the param, and ToProto.
#include <string>
#include <vector>

#include "caffe/layer.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

// Arity as a layer declares it; -1: no constraint.
struct Arity {
  int exact_bottom = -1, min_bottom = -1, max_bottom = -1;
  int exact_top = -1, min_top = -1, max_top = -1;
  bool equal = false;
};

// top[i] = 2 * bottom[i] (or, without bottoms, a (3) blob of ones); records the setup steps.
template <typename Dtype>
class ProbeLayer : public Layer<Dtype> {
 public:
  ProbeLayer(const LayerParameter& param, const Arity& arity)
      : Layer<Dtype>(param), arity_(arity) {}
  const char* type() const override { return "Probe"; }
  int ExactNumBottomBlobs() const override { return arity_.exact_bottom; }
  int MinBottomBlobs() const override { return arity_.min_bottom; }
  int MaxBottomBlobs() const override { return arity_.max_bottom; }
  int ExactNumTopBlobs() const override { return arity_.exact_top; }
  int MinTopBlobs() const override { return arity_.min_top; }
  int MaxTopBlobs() const override { return arity_.max_top; }
  bool EqualNumBottomTopBlobs() const override { return arity_.equal; }

  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {
    steps_ += "setup;";
  }
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {
    steps_ += "reshape;";
    for (size_t i = 0; i < top.size(); ++i) {
      if (i < bottom.size()) {
        top[i]->ReshapeLike(*bottom[i]);
      } else {
        top[i]->Reshape({3});
      }
    }
  }

  std::string steps_;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {
    steps_ += "forward_cpu;";
    for (size_t i = 0; i < top.size(); ++i) {
      Dtype* out = top[i]->mutable_cpu_data();
      for (int j = 0; j < top[i]->count(); ++j) {
        out[j] = i < bottom.size() ? 2 * bottom[i]->cpu_data()[j] : Dtype(1);
      }
    }
  }
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override {
    steps_ += "backward_cpu;";
  }

 private:
  Arity arity_;
};

}  // namespace

template <typename Dtype>
class LayerTest : public ::testing::Test {
 protected:
  LayerTest() : a_(std::vector<int>{2, 3}), b_(std::vector<int>{4}) {
    Caffe::set_mode(Caffe::CPU);
    FillGaussian(&a_, 1);
    FillGaussian(&b_, 2);
  }
  // SetUp with `num_bottoms` bottoms and `num_tops` tops; returns the error message, or "".
  std::string SetUpError(const Arity& arity, int num_bottoms, int num_tops) {
    ProbeLayer<Dtype> layer(ParseLayerParam("name: 'probe' type: 'Probe'"), arity);
    std::vector<Blob<Dtype>> bottoms(num_bottoms), tops(num_tops);
    Blobs<Dtype> bottom_vec, top_vec;
    for (auto& blob : bottoms) {
      blob.Reshape({2});
      bottom_vec.push_back(&blob);
    }
    for (auto& blob : tops) top_vec.push_back(&blob);
    try {
      layer.SetUp(bottom_vec, top_vec);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  Blob<Dtype> a_, b_, top0_, top1_;
};
TYPED_TEST_SUITE(LayerTest, TestDtypes);

TYPED_TEST(LayerTest, ExactArityAcceptsOnlyThatCount) {
  Arity arity;
  arity.exact_bottom = 1;
  arity.exact_top = 2;
  EXPECT_EQ(this->SetUpError(arity, 1, 2), "");
  const std::string too_many = this->SetUpError(arity, 2, 2);
  EXPECT_EQ(too_many.rfind("Probe layer 'probe': ", 0), 0u) << too_many;
  EXPECT_NE(too_many.find("takes 1 bottom blob(s) as input, got 2"), std::string::npos) << too_many;
  const std::string too_few_tops = this->SetUpError(arity, 1, 1);
  EXPECT_NE(too_few_tops.find("produces 2 top blob(s) as output, got 1"), std::string::npos)
      << too_few_tops;
  EXPECT_NE(this->SetUpError(arity, 0, 2), "");
}

TYPED_TEST(LayerTest, MinAndMaxArityBoundTheCount) {
  Arity arity;
  arity.min_bottom = 1;
  arity.max_bottom = 3;
  arity.min_top = 1;
  arity.max_top = 2;
  for (int bottoms = 1; bottoms <= 3; ++bottoms) EXPECT_EQ(this->SetUpError(arity, bottoms, 1), "");
  EXPECT_EQ(this->SetUpError(arity, 1, 2), "");
  EXPECT_NE(this->SetUpError(arity, 0, 1).find("takes at least 1 bottom blob(s), got 0"),
            std::string::npos);
  EXPECT_NE(this->SetUpError(arity, 4, 1).find("takes at most 3 bottom blob(s), got 4"),
            std::string::npos);
  EXPECT_NE(this->SetUpError(arity, 1, 0).find("produces at least 1 top blob(s), got 0"),
            std::string::npos);
  EXPECT_NE(this->SetUpError(arity, 1, 3).find("produces at most 2 top blob(s), got 3"),
            std::string::npos);
}

TYPED_TEST(LayerTest, EqualNumBottomTopRequiresAPairForEachBottom) {
  Arity arity;
  arity.equal = true;
  EXPECT_EQ(this->SetUpError(arity, 2, 2), "");
  EXPECT_EQ(this->SetUpError(arity, 0, 0), "");
  const std::string message = this->SetUpError(arity, 2, 1);
  EXPECT_NE(message.find("got 2 bottoms and 1 tops"), std::string::npos) << message;
}

TYPED_TEST(LayerTest, NoDeclaredArityAcceptsAnyCount) {
  EXPECT_EQ(this->SetUpError(Arity(), 0, 0), "");
  EXPECT_EQ(this->SetUpError(Arity(), 5, 1), "");
}

TYPED_TEST(LayerTest, SetUpRunsLayerSetUpThenReshapeAndForwardReshapesFirst) {
  using Dtype = TypeParam;
  ProbeLayer<Dtype> layer(ParseLayerParam("name: 'p'"), Arity());
  Blobs<Dtype> bottom{&this->a_}, top{&this->top0_};
  layer.SetUp(bottom, top);
  EXPECT_EQ(layer.steps_, "setup;reshape;");
  EXPECT_EQ(this->top0_.shape(), this->a_.shape());
  this->a_.Reshape({5});
  layer.steps_.clear();
  layer.Forward(bottom, top);
  EXPECT_EQ(layer.steps_, "reshape;forward_cpu;");
  EXPECT_EQ(this->top0_.shape(), std::vector<int>{5});
  layer.Backward(top, {true}, bottom);
  EXPECT_EQ(layer.steps_, "reshape;forward_cpu;backward_cpu;");
}

TYPED_TEST(LayerTest, GpuModeRunsTheCpuCodeWhenTheLayerHasNoGpuCode) {
  using Dtype = TypeParam;
  ProbeLayer<Dtype> layer(ParseLayerParam("name: 'p'"), Arity());
  Blobs<Dtype> bottom{&this->a_}, top{&this->top0_};
  layer.SetUp(bottom, top);
  layer.steps_.clear();
  Caffe::set_mode(Caffe::GPU);
  layer.Forward(bottom, top);
  layer.Backward(top, {true}, bottom);
  Caffe::set_mode(Caffe::CPU);
  EXPECT_EQ(layer.steps_, "reshape;forward_cpu;backward_cpu;");
}

TYPED_TEST(LayerTest, LossWeightsAreStoredInTheTopDiffsAndWeightForward) {
  using Dtype = TypeParam;
  ProbeLayer<Dtype> layer(ParseLayerParam("name: 'p' loss_weight: 0.5 loss_weight: 0"), Arity());
  Blobs<Dtype> bottom{&this->a_, &this->b_}, top{&this->top0_, &this->top1_};
  layer.SetUp(bottom, top);
  EXPECT_EQ(layer.loss(0), Dtype(0.5));
  EXPECT_EQ(layer.loss(1), 0);
  EXPECT_EQ(layer.loss(7), 0);  // beyond the tops: not a loss
  for (int i = 0; i < this->top0_.count(); ++i) EXPECT_EQ(this->top0_.cpu_diff()[i], Dtype(0.5));
  // Forward returns the weighted sum of the loss tops only: 0.5 * sum(2 a).
  double expected = 0;
  for (int i = 0; i < this->a_.count(); ++i) expected += 0.5 * 2 * this->a_.cpu_data()[i];
  EXPECT_NEAR(layer.Forward(bottom, top), expected, 1e-5);
}

TYPED_TEST(LayerTest, WithoutLossWeightsForwardReturnsZeroAndDiffsAreUntouched) {
  using Dtype = TypeParam;
  ProbeLayer<Dtype> layer(ParseLayerParam("name: 'p'"), Arity());
  Blobs<Dtype> bottom{&this->a_}, top{&this->top0_};
  this->top0_.Reshape({2, 3});
  caffe_set(6, Dtype(7), this->top0_.mutable_cpu_diff());
  layer.SetUp(bottom, top);
  EXPECT_EQ(this->top0_.cpu_diff()[0], 7);
  EXPECT_EQ(layer.Forward(bottom, top), 0);
}

TYPED_TEST(LayerTest, LossWeightCountMustMatchTheTops) {
  using Dtype = TypeParam;
  ProbeLayer<Dtype> layer(ParseLayerParam("name: 'p' loss_weight: 1"), Arity());
  Blobs<Dtype> bottom{&this->a_, &this->b_}, top{&this->top0_, &this->top1_};
  try {
    layer.SetUp(bottom, top);
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("loss_weight"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'p'"), std::string::npos) << e.what();
  }
}

TYPED_TEST(LayerTest, SetLossGrowsTheListAndParamPropagateDownDefaultsToFalseBeyondIt) {
  using Dtype = TypeParam;
  ProbeLayer<Dtype> layer(ParseLayerParam("name: 'p'"), Arity());
  layer.set_loss(2, Dtype(3));
  EXPECT_EQ(layer.loss(0), 0);
  EXPECT_EQ(layer.loss(2), 3);
  EXPECT_FALSE(layer.param_propagate_down(0));
  layer.set_param_propagate_down(2, false);
  EXPECT_TRUE(layer.param_propagate_down(0));  // filled in as true
  EXPECT_TRUE(layer.param_propagate_down(1));
  EXPECT_FALSE(layer.param_propagate_down(2));
  EXPECT_FALSE(layer.param_propagate_down(3));
}

TYPED_TEST(LayerTest, BlobsInTheParamBecomeTheLearnedBlobs) {
  using Dtype = TypeParam;
  LayerParameter param = ParseLayerParam("name: 'p'");
  this->a_.ToProto(param.add_blobs());
  this->b_.ToProto(param.add_blobs());
  ProbeLayer<Dtype> layer(param, Arity());
  ASSERT_EQ(layer.blobs().size(), 2u);
  EXPECT_EQ(layer.blobs()[0]->shape(), this->a_.shape());
  EXPECT_EQ(layer.blobs()[1]->shape(), this->b_.shape());
  for (int i = 0; i < this->a_.count(); ++i) {
    EXPECT_EQ(layer.blobs()[0]->cpu_data()[i], this->a_.cpu_data()[i]);
  }
}

TYPED_TEST(LayerTest, ToProtoWritesTheParamAndTheCurrentBlobs) {
  using Dtype = TypeParam;
  LayerParameter param = ParseLayerParam(
      "name: 'p' type: 'Probe' bottom: 'x' top: 'y' loss_weight: 2 param { lr_mult: 3 }");
  this->a_.ToProto(param.add_blobs());
  ProbeLayer<Dtype> layer(param, Arity());
  // The blob changes after construction; ToProto writes its current values, not the param's.
  layer.blobs()[0]->mutable_cpu_data()[0] = 99;
  caffe_set(6, Dtype(0.25), layer.blobs()[0]->mutable_cpu_diff());
  LayerParameter written;
  written.set_name("stale");
  written.add_top("stale");
  layer.ToProto(&written);
  EXPECT_EQ(written.name(), "p");
  EXPECT_EQ(written.type(), "Probe");
  ASSERT_EQ(written.top_size(), 1);  // cleared first, not appended to
  EXPECT_EQ(written.top(0), "y");
  EXPECT_EQ(written.loss_weight(0), 2);
  EXPECT_EQ(written.param(0).lr_mult(), 3);
  ASSERT_EQ(written.blobs_size(), 1);
  Blob<Dtype> read;
  read.FromProto(written.blobs(0));
  EXPECT_EQ(read.shape(), this->a_.shape());
  EXPECT_EQ(read.cpu_data()[0], 99);
  EXPECT_EQ(read.cpu_data()[1], this->a_.cpu_data()[1]);
  EXPECT_EQ(written.blobs(0).diff_size() + written.blobs(0).double_diff_size(), 0);
  layer.ToProto(&written, /*write_diff=*/true);
  ASSERT_EQ(written.blobs_size(), 1);
  read.FromProto(written.blobs(0));
  EXPECT_EQ(read.cpu_diff()[5], Dtype(0.25));
}

TYPED_TEST(LayerTest, ErrorPrefixNamesTypeAndLayer) {
  ProbeLayer<TypeParam> layer(ParseLayerParam("name: 'conv1/3x3'"), Arity());
  EXPECT_EQ(layer.error_prefix(), "Probe layer 'conv1/3x3': ");
}

}  // namespace caffe
