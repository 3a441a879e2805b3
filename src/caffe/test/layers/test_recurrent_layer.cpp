// RecurrentLayer, the unrolling machinery of RNN and LSTM, through a minimal recurrence defined
// here (h_t = W (cont_t h_{t-1}) + V x_t, output the h_t): arity with and without exposed hidden
// state, the unrolled net's names and pseudo-loss, parameters collected once however many
// timesteps share them, the state carried between passes and Reset, a batch size that may change
// while the number of timesteps may not, weights shared from another net (as a solver's test net
// does) reaching every timestep, and finite-difference gradients.
// Legend: T timesteps, N streams, H values per timestep and stream (= num_output here).
#include <google/protobuf/text_format.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/recurrent_layer.hpp"
#include "caffe/net.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

// h_t = W h_conted_{t-1} + V x_t with h_conted_{t-1} = cont_t h_{t-1}; V (H, H) is applied to
// all timesteps of x (T, N, H) at once, W (H, H) is shared by all timesteps; the output y is
// (T, N, H). As in BVLC's recurrences, x reaches the parameters through a layer with
// propagate_down: true (an Input blob gets no gradient otherwise).
template <typename Dtype>
class LinearRecurrenceLayer : public RecurrentLayer<Dtype> {
 public:
  using RecurrentLayer<Dtype>::RecurrentLayer;
  const char* type() const override { return "LinearRecurrence"; }

 protected:
  void RecurrentInputBlobNames(vector<string>* names) const override { *names = {"h_0"}; }
  void RecurrentOutputBlobNames(vector<string>* names) const override {
    *names = {"h_" + std::to_string(this->num_timesteps_)};
  }
  void RecurrentInputShapes(vector<BlobShape>* shapes) const override {
    shapes->assign(1, BlobShape());
    (*shapes)[0].add_dim(1);
    (*shapes)[0].add_dim(this->num_streams_);
    (*shapes)[0].add_dim(static_cast<int>(this->layer_param_.recurrent_param().num_output()));
  }
  void OutputBlobNames(vector<string>* names) const override { *names = {"y"}; }
  void FillUnrolledNet(NetParameter* net_param) const override {
    const int H = static_cast<int>(this->layer_param_.recurrent_param().num_output());
    const int T = this->num_timesteps_;
    std::string text = "layer { type: 'Input' top: 'h_0' input_param { shape { dim: 1 dim: " +
                       std::to_string(this->num_streams_) + " dim: " + std::to_string(H) +
                       " } } } "
                       "layer { name: 'cont_slice' type: 'Slice' bottom: 'cont' "
                       "slice_param { axis: 0 }";
    for (int t = 1; t <= T; ++t) text += " top: 'cont_" + std::to_string(t) + "'";
    text +=
        " } layer { name: 'x_transform' type: 'InnerProduct' bottom: 'x' top: 'V_x' "
        "propagate_down: true param { name: 'V' } inner_product_param { num_output: " +
        std::to_string(H) +
        " bias_term: false axis: 2 weight_filler { type: 'gaussian' std: 0.5 } } }"
        " layer { name: 'x_slice' type: 'Slice' bottom: 'V_x' slice_param { axis: 0 }";
    for (int t = 1; t <= T; ++t) text += " top: 'x_" + std::to_string(t) + "'";
    text += " }";
    for (int t = 1; t <= T; ++t) {
      const std::string ts = std::to_string(t), tm1s = std::to_string(t - 1);
      text += " layer { name: 'h_conted_" + tm1s + "' type: 'Scale' bottom: 'h_" + tm1s +
              "' bottom: 'cont_" + ts + "' top: 'h_conted_" + tm1s + "' scale_param { axis: 0 } }";
      text += " layer { name: 'W_h_" + tm1s + "' type: 'InnerProduct' bottom: 'h_conted_" + tm1s +
              "' top: 'W_h_" + tm1s +
              "' param { name: 'W' } inner_product_param { num_output: " + std::to_string(H) +
              " bias_term: false axis: 2 weight_filler { type: 'gaussian' std: 0.5 } } }";
      text += " layer { name: 'sum_" + ts + "' type: 'Eltwise' bottom: 'W_h_" + tm1s +
              "' bottom: 'x_" + ts + "' top: 'h_" + ts + "' }";
    }
    text += " layer { name: 'y_concat' type: 'Concat' concat_param { axis: 0 } top: 'y'";
    for (int t = 1; t <= T; ++t) text += " bottom: 'h_" + std::to_string(t) + "'";
    text += " }";
    NetParameter layers;
    CHECK(google::protobuf::TextFormat::ParseFromString(text, &layers)) << text;
    net_param->MergeFrom(layers);
  }
};

// The recurrence directly, from the state h (N, H), which is left at the last timestep; blobs
// are the layer's: V, W.
template <typename Dtype>
std::vector<double> DirectRecurrence(const Blob<Dtype>& x, const Blob<Dtype>& cont,
                                     const vector<shared_ptr<Blob<Dtype>>>& blobs,
                                     std::vector<double>* h) {
  const Dtype* v = blobs[0]->cpu_data();
  const Dtype* w = blobs[1]->cpu_data();
  const int T = x.shape(0), N = x.shape(1), H = x.shape(2);
  std::vector<double> y(T * N * H);
  for (int t = 0; t < T; ++t) {
    for (int n = 0; n < N; ++n) {
      std::vector<double> next(H);
      for (int r = 0; r < H; ++r) {
        double sum = 0;
        for (int k = 0; k < H; ++k) {
          sum += v[r * H + k] * x.cpu_data()[(t * N + n) * H + k] +
                 w[r * H + k] * cont.cpu_data()[t * N + n] * (*h)[n * H + k];
        }
        next[r] = sum;
      }
      for (int r = 0; r < H; ++r) y[(t * N + n) * H + r] = (*h)[n * H + r] = next[r];
    }
  }
  return y;
}

std::string RecurrenceText(const std::string& extra = "") {
  return "name: 'rec' recurrent_param { num_output: 2 " + extra + " }";
}

}  // namespace

template <typename TypeParam>
class RecurrentLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  // T = 3, N = 2, H = 2; stream 0 restarts at t = 2.
  RecurrentLayerTest() : x_(std::vector<int>{3, 2, 2}), cont_(std::vector<int>{3, 2}) {
    FillGaussian(&x_, 1901);
    const Dtype cont[6] = {0, 0, 1, 1, 0, 1};
    caffe_copy(6, cont, cont_.mutable_cpu_data());
  }

  void ExpectTop(const std::vector<double>& expected, const std::string& what) {
    ASSERT_EQ(top_.count(), static_cast<int>(expected.size())) << what;
    for (int i = 0; i < top_.count(); ++i) {
      EXPECT_NEAR(top_.cpu_data()[i], expected[i], 1e-5 * (1 + std::abs(expected[i])))
          << what << " at " << i;
    }
  }

  Blob<Dtype> x_, cont_, top_;
  Blobs<Dtype> bottom_vec_{&x_, &cont_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(RecurrentLayerTest, TestDtypesAndDevices);

TYPED_TEST(RecurrentLayerTest, ArityFollowsExposeHidden) {
  using Dtype = typename TypeParam::Dtype;
  LinearRecurrenceLayer<Dtype> plain(ParseLayerParam(RecurrenceText()));
  EXPECT_EQ(plain.MinBottomBlobs(), 2);  // x, cont
  EXPECT_EQ(plain.MaxBottomBlobs(), 3);  // and x_static
  EXPECT_EQ(plain.ExactNumTopBlobs(), 1);
  LinearRecurrenceLayer<Dtype> exposed(ParseLayerParam(RecurrenceText("expose_hidden: true")));
  EXPECT_EQ(exposed.MinBottomBlobs(), 3);  // x, cont, h_0
  EXPECT_EQ(exposed.MaxBottomBlobs(), 4);
  EXPECT_EQ(exposed.ExactNumTopBlobs(), 2);  // y, h_T
  EXPECT_TRUE(plain.AllowForceBackward(0));
  EXPECT_FALSE(plain.AllowForceBackward(1));
  EXPECT_TRUE(plain.AllowForceBackward(2));
}

TYPED_TEST(RecurrentLayerTest, UnrolledLayersArePrefixedAndEndInAPseudoLoss) {
  using Dtype = typename TypeParam::Dtype;
  LinearRecurrenceLayer<Dtype> layer(ParseLayerParam(RecurrenceText()));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  const Net<Dtype>& net = layer.unrolled_net();
  const std::vector<std::string>& names = net.layer_names();
  ASSERT_GE(names.size(), 4u);
  EXPECT_EQ(names[0], "rec_");  // the unnamed Input of x and cont
  EXPECT_EQ(names[1], "rec_");  // the subclass's unnamed Input of h_0
  EXPECT_EQ(names[2], "rec_cont_slice");
  EXPECT_EQ(names[names.size() - 2], "rec_y_concat");
  EXPECT_EQ(names.back(), "y_pseudoloss");
  EXPECT_EQ(net.layers().back()->type(), std::string("Reduction"));
  EXPECT_EQ(net.layers().back()->loss(0), 1);
  EXPECT_EQ(net.num_inputs(), 3);  // x, cont, h_0
}

TYPED_TEST(RecurrentLayerTest, ParametersAreTheOwnedBlobsOfTheUnrolledNet) {
  using Dtype = typename TypeParam::Dtype;
  LinearRecurrenceLayer<Dtype> layer(ParseLayerParam(RecurrenceText()));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  // V once, then W, used at 3 timesteps but one parameter: the owners, in the net's order.
  const Net<Dtype>& net = layer.unrolled_net();
  ASSERT_EQ(net.params().size(), 4u);
  ASSERT_EQ(layer.blobs().size(), 2u);
  EXPECT_EQ(layer.blobs()[0], net.params()[0]);
  EXPECT_EQ(layer.blobs()[1], net.params()[1]);
  EXPECT_EQ(layer.blobs()[1]->shape(), (std::vector<int>{2, 2}));
  for (int i = 2; i < 4; ++i) {
    EXPECT_EQ(net.param_owners()[i], 1) << i;
    EXPECT_EQ(net.params()[i]->cpu_data(), layer.blobs()[1]->cpu_data()) << i;
  }
}

TYPED_TEST(RecurrentLayerTest, ForwardCarriesTheLastStateOverUntilReset) {
  using Dtype = typename TypeParam::Dtype;
  LinearRecurrenceLayer<Dtype> layer(ParseLayerParam(RecurrenceText()));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  const auto& weights = layer.blobs();
  std::vector<double> h(4, 0.0);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  this->ExpectTop(DirectRecurrence(this->x_, this->cont_, weights, &h), "pass 1");
  // Both streams continue: the second pass starts from the first one's last state.
  caffe_set(6, Dtype(1), this->cont_.mutable_cpu_data());
  layer.Forward(this->bottom_vec_, this->top_vec_);
  this->ExpectTop(DirectRecurrence(this->x_, this->cont_, weights, &h), "pass 2");
  // Reset: the third pass starts from zero although cont says "continue".
  layer.Reset();
  std::vector<double> zero(4, 0.0);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  this->ExpectTop(DirectRecurrence(this->x_, this->cont_, weights, &zero), "after Reset");
}

TYPED_TEST(RecurrentLayerTest, BatchSizeMayChangeButNotTheNumberOfTimesteps) {
  using Dtype = typename TypeParam::Dtype;
  LinearRecurrenceLayer<Dtype> layer(ParseLayerParam(RecurrenceText()));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  this->x_.Reshape({3, 5, 2});
  this->cont_.Reshape({3, 5});
  FillGaussian(&this->x_, 5);
  caffe_set(15, Dtype(0), this->cont_.mutable_cpu_data());
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (std::vector<int>{3, 5, 2}));
  std::vector<double> h(10, 0.0);
  this->ExpectTop(DirectRecurrence(this->x_, this->cont_, layer.blobs(), &h), "N = 5");

  this->x_.Reshape({4, 5, 2});
  this->cont_.Reshape({4, 5});
  try {
    layer.Reshape(this->bottom_vec_, this->top_vec_);
    FAIL() << "accepted a changed number of timesteps";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("changed its number of timesteps since setup"),
              std::string::npos)
        << e.what();
  }
}

TYPED_TEST(RecurrentLayerTest, WeightsGivenWithTheLayerParameterAreLoaded) {
  using Dtype = typename TypeParam::Dtype;
  LayerParameter param = ParseLayerParam(RecurrenceText());
  vector<shared_ptr<Blob<Dtype>>> weights;
  const Dtype w[8] = {0.5, -1, 2, 0.25, -0.75, 1.5, 0.125, 1};
  for (int i = 0; i < 2; ++i) {
    weights.push_back(std::make_shared<Blob<Dtype>>(std::vector<int>{2, 2}));
    caffe_copy(4, w + 4 * i, weights[i]->mutable_cpu_data());
    weights[i]->ToProto(param.add_blobs());
  }
  LinearRecurrenceLayer<Dtype> layer(param);
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(layer.blobs().size(), 2u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(layer.blobs()[i / 4]->cpu_data()[i % 4], w[i]) << i;
  layer.Forward(this->bottom_vec_, this->top_vec_);
  std::vector<double> h(4, 0.0);
  this->ExpectTop(DirectRecurrence(this->x_, this->cont_, weights, &h), "given weights");
  // The wrong number of blobs is an error naming both counts.
  param.mutable_blobs()->RemoveLast();
  LinearRecurrenceLayer<Dtype> short_of_blobs(param);
  try {
    short_of_blobs.SetUp(this->bottom_vec_, this->top_vec_);
    FAIL() << "accepted 1 weight blob for 2";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the layer parameter gives 1 weight blobs; this "
                                         "LinearRecurrence layer has 2"),
              std::string::npos)
        << e.what();
  }
}

TYPED_TEST(RecurrentLayerTest, EveryTimestepFollowsWeightsSharedFromAnotherNet) {
  using Dtype = typename TypeParam::Dtype;
  // A solver's test net shares the training net's weights by pointing the layers' blobs at the
  // training net's memory; the unrolled timesteps must all see them.
  NetParameter param;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "layer { name: 'input' type: 'Input' top: 'x' top: 'cont' "
      "  input_param { shape { dim: 3 dim: 2 dim: 4 } shape { dim: 3 dim: 2 } } } "
      "layer { name: 'rnn' type: 'RNN' bottom: 'x' bottom: 'cont' top: 'o' "
      "  recurrent_param { num_output: 3 weight_filler { type: 'gaussian' std: 0.5 } "
      "  bias_filler { type: 'gaussian' std: 0.5 } } }",
      &param));
  Caffe::set_random_seed(1);
  Net<Dtype> train_net(param);
  Caffe::set_random_seed(2);
  Net<Dtype> test_net(param);
  test_net.ShareTrainedLayersWith(&train_net);
  for (Net<Dtype>* net : {&train_net, &test_net}) {
    FillGaussian(net->blob_by_name("x").get(), 3);
    const Dtype cont[6] = {0, 0, 1, 1, 1, 0};
    caffe_copy(6, cont, net->blob_by_name("cont")->mutable_cpu_data());
    net->Forward();
  }
  const Blob<Dtype>& train_o = *train_net.blob_by_name("o");
  const Blob<Dtype>& test_o = *test_net.blob_by_name("o");
  for (int i = 0; i < train_o.count(); ++i) {
    EXPECT_EQ(train_o.cpu_data()[i], test_o.cpu_data()[i]) << i;
  }
}

TYPED_TEST(RecurrentLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  LinearRecurrenceLayer<Dtype> layer(ParseLayerParam(RecurrenceText()));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_, 0);
}

TYPED_TEST(RecurrentLayerTest, ExposedHiddenStateIsNotCarried) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> h0(std::vector<int>{1, 2, 2}), h_T;
  FillGaussian(&h0, 4);
  caffe_set(6, Dtype(1), this->cont_.mutable_cpu_data());
  Blobs<Dtype> bottoms{&this->x_, &this->cont_, &h0}, tops{&this->top_, &h_T};
  LinearRecurrenceLayer<Dtype> layer(ParseLayerParam(RecurrenceText("expose_hidden: true")));
  layer.SetUp(bottoms, tops);
  for (int pass = 0; pass < 2; ++pass) {
    layer.Forward(bottoms, tops);
    std::vector<double> h(h0.cpu_data(), h0.cpu_data() + 4);
    this->ExpectTop(DirectRecurrence(this->x_, this->cont_, layer.blobs(), &h),
                    "pass " + std::to_string(pass));
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(h_T.cpu_data()[i], h[i], 1e-5) << i;
  }
  // Changing the given state changes the output.
  caffe_set(4, Dtype(0), h0.mutable_cpu_data());
  layer.Forward(bottoms, tops);
  std::vector<double> zero(4, 0.0);
  this->ExpectTop(DirectRecurrence(this->x_, this->cont_, layer.blobs(), &zero), "h0 = 0");
}

}  // namespace caffe
