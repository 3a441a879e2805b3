// LSTMLayer: parameter shapes and order (BVLC's), forward against a direct LSTM with sequences
// that restart, the hidden state carried from one pass to the next (so that running a sequence
// one timestep at a time gives the same outputs), a static input, exposed hidden state,
// finite-difference gradients with respect to x, x_static and the parameters, rejected inputs,
// and BVLC's own numbers: the layerzoo fixture's LSTM (forward, backward, parameter diffs), its
// weights loaded from BVLC's .caffemodel, and its unrolled net against BVLC's setup log.
// Legend: T timesteps, N streams, D input values per timestep and stream, D_s static input
// values, H hidden size (num_output); gates in the order i, f, o, g.
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/io/hdf5.hpp"
#include "caffe/layers/lstm_layer.hpp"
#include "caffe/net.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

double Sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// A direct LSTM over x (T, N, D) from the states h0, c0 (N, H); weights in the layer's blob
// order W_xc (4H, D), b_c (4H), [W_xc_static (4H, D_s)], W_hc (4H, H). Returns h (T, N, H) and
// leaves the last states in h0, c0.
template <typename Dtype>
std::vector<double> DirectLstm(const Blob<Dtype>& x, const Blob<Dtype>& cont,
                               const Blob<Dtype>* x_static,
                               const vector<shared_ptr<Blob<Dtype>>>& blobs,
                               std::vector<double>* h0, std::vector<double>* c0) {
  const int T = x.shape(0), N = x.shape(1), D = x.count(2);
  const Blob<Dtype>& w_hc = *blobs.back();
  const int H = w_hc.shape(1);
  const Dtype* w_xc = blobs[0]->cpu_data();
  const Dtype* b_c = blobs[1]->cpu_data();
  std::vector<double>& h = *h0;
  std::vector<double>& c = *c0;
  std::vector<double> out(T * N * H);
  for (int t = 0; t < T; ++t) {
    for (int n = 0; n < N; ++n) {
      const double cont_tn = cont.cpu_data()[t * N + n];
      std::vector<double> gate(4 * H);
      for (int r = 0; r < 4 * H; ++r) {
        double sum = b_c[r];
        for (int d = 0; d < D; ++d) sum += w_xc[r * D + d] * x.cpu_data()[(t * N + n) * D + d];
        for (int k = 0; k < H; ++k) sum += w_hc.cpu_data()[r * H + k] * cont_tn * h[n * H + k];
        if (x_static) {
          const int Ds = x_static->count(1);
          for (int d = 0; d < Ds; ++d) {
            sum += blobs[2]->cpu_data()[r * Ds + d] * x_static->cpu_data()[n * Ds + d];
          }
        }
        gate[r] = sum;
      }
      for (int k = 0; k < H; ++k) {
        const double i = Sigmoid(gate[k]), f = cont_tn * Sigmoid(gate[H + k]);
        const double o = Sigmoid(gate[2 * H + k]), g = std::tanh(gate[3 * H + k]);
        c[n * H + k] = f * c[n * H + k] + i * g;
        h[n * H + k] = o * std::tanh(c[n * H + k]);
        out[(t * N + n) * H + k] = h[n * H + k];
      }
    }
  }
  return out;
}

std::string LstmText(int num_output, const std::string& extra = "") {
  return "name: 'lstm' type: 'LSTM' recurrent_param { num_output: " + std::to_string(num_output) +
         " weight_filler { type: 'uniform' min: -0.6 max: 0.6 } "
         "bias_filler { type: 'gaussian' std: 0.3 } " +
         extra + " }";
}

}  // namespace

template <typename TypeParam>
class LSTMLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  // T = 4, N = 2, D = 3, H = 3; stream 0 restarts at t = 2, stream 1 runs on.
  LSTMLayerTest()
      : x_(std::vector<int>{4, 2, 3}),
        cont_(std::vector<int>{4, 2}),
        x_static_(std::vector<int>{2, 2}) {
    FillGaussian(&x_, 1701);
    FillGaussian(&x_static_, 1702);
    const Dtype cont[8] = {0, 0, 1, 1, 0, 1, 1, 1};
    caffe_copy(8, cont, cont_.mutable_cpu_data());
  }

  // Expects the top to equal `expected` (T, N, H).
  void ExpectTop(const Blob<Dtype>& top, const std::vector<double>& expected,
                 const std::string& what) {
    ASSERT_EQ(top.count(), static_cast<int>(expected.size())) << what;
    const double tolerance = sizeof(Dtype) == 4 ? 1e-5 : 1e-12;
    for (int i = 0; i < top.count(); ++i) {
      EXPECT_NEAR(top.cpu_data()[i], expected[i], tolerance) << what << " at " << i;
    }
  }

  Blob<Dtype> x_, cont_, x_static_, top_;
  Blobs<Dtype> bottom_vec_{&x_, &cont_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(LSTMLayerTest, TestDtypesAndDevices);

TYPED_TEST(LSTMLayerTest, TopAndParameterShapesAreBvlcs) {
  using Dtype = typename TypeParam::Dtype;
  LSTMLayer<Dtype> layer(ParseLayerParam(LstmText(5)));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_STREQ(layer.type(), "LSTM");
  EXPECT_EQ(this->top_.shape(), (std::vector<int>{4, 2, 5}));
  ASSERT_EQ(layer.blobs().size(), 3u);
  EXPECT_EQ(layer.blobs()[0]->shape(), (std::vector<int>{20, 3}));  // W_xc
  EXPECT_EQ(layer.blobs()[1]->shape(), (std::vector<int>{20}));     // b_c
  EXPECT_EQ(layer.blobs()[2]->shape(), (std::vector<int>{20, 5}));  // W_hc

  Blob<Dtype> top;
  Blobs<Dtype> with_static{&this->x_, &this->cont_, &this->x_static_}, tops{&top};
  LSTMLayer<Dtype> static_layer(ParseLayerParam(LstmText(5)));
  static_layer.SetUp(with_static, tops);
  ASSERT_EQ(static_layer.blobs().size(), 4u);
  EXPECT_EQ(static_layer.blobs()[2]->shape(), (std::vector<int>{20, 2}));  // W_xc_static
  EXPECT_EQ(static_layer.blobs()[3]->shape(), (std::vector<int>{20, 5}));  // W_hc
}

TYPED_TEST(LSTMLayerTest, ForwardMatchesADirectLstmAndCarriesTheStateOver) {
  using Dtype = typename TypeParam::Dtype;
  LSTMLayer<Dtype> layer(ParseLayerParam(LstmText(3)));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  std::vector<double> h(2 * 3, 0.0), c(2 * 3, 0.0);
  this->ExpectTop(this->top_,
                  DirectLstm<Dtype>(this->x_, this->cont_, nullptr, layer.blobs(), &h, &c),
                  "pass 1");
  // Second pass: stream 1 continues from the first pass's last state, stream 0 restarts.
  FillGaussian(&this->x_, 99);
  const Dtype cont[8] = {0, 1, 1, 1, 1, 0, 1, 1};
  caffe_copy(8, cont, this->cont_.mutable_cpu_data());
  layer.Forward(this->bottom_vec_, this->top_vec_);
  this->ExpectTop(this->top_,
                  DirectLstm<Dtype>(this->x_, this->cont_, nullptr, layer.blobs(), &h, &c),
                  "pass 2");
}

TYPED_TEST(LSTMLayerTest, OneTimestepAtATimeGivesTheSameOutputs) {
  using Dtype = typename TypeParam::Dtype;
  const Dtype cont[8] = {0, 0, 1, 1, 0, 1, 1, 1};
  caffe_copy(8, cont, this->cont_.mutable_cpu_data());
  LSTMLayer<Dtype> whole(ParseLayerParam(LstmText(3)));
  whole.SetUp(this->bottom_vec_, this->top_vec_);
  whole.Forward(this->bottom_vec_, this->top_vec_);

  Blob<Dtype> x_t(std::vector<int>{1, 2, 3}), cont_t(std::vector<int>{1, 2}), top_t;
  Blobs<Dtype> bottoms{&x_t, &cont_t}, tops{&top_t};
  LayerParameter param = ParseLayerParam(LstmText(3));
  for (const auto& blob : whole.blobs()) blob->ToProto(param.add_blobs());
  LSTMLayer<Dtype> step(param);  // the same weights, given with the layer parameter
  step.SetUp(bottoms, tops);
  const double tolerance = sizeof(Dtype) == 4 ? 1e-5 : 1e-12;
  for (int t = 0; t < 4; ++t) {
    caffe_copy(6, this->x_.cpu_data() + t * 6, x_t.mutable_cpu_data());
    caffe_copy(2, this->cont_.cpu_data() + t * 2, cont_t.mutable_cpu_data());
    step.Forward(bottoms, tops);
    for (int i = 0; i < 6; ++i) {
      EXPECT_NEAR(top_t.cpu_data()[i], this->top_.cpu_data()[t * 6 + i], tolerance)
          << "timestep " << t << ", value " << i;
    }
  }
}

TYPED_TEST(LSTMLayerTest, StaticInputEntersEveryTimestep) {
  using Dtype = typename TypeParam::Dtype;
  Blobs<Dtype> bottoms{&this->x_, &this->cont_, &this->x_static_};
  LSTMLayer<Dtype> layer(ParseLayerParam(LstmText(3)));
  layer.SetUp(bottoms, this->top_vec_);
  layer.Forward(bottoms, this->top_vec_);
  std::vector<double> h(6, 0.0), c(6, 0.0);
  this->ExpectTop(this->top_,
                  DirectLstm<Dtype>(this->x_, this->cont_, &this->x_static_, layer.blobs(), &h, &c),
                  "with x_static");
}

TYPED_TEST(LSTMLayerTest, ExposedHiddenStateIsTakenAndGivenInsteadOfCarried) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> h0(std::vector<int>{1, 2, 3}), c0(std::vector<int>{1, 2, 3}), h_T, c_T;
  FillGaussian(&h0, 5);
  FillGaussian(&c0, 6);
  const Dtype cont[8] = {1, 0, 1, 1, 0, 1, 1, 1};  // stream 0 starts from h0, c0
  caffe_copy(8, cont, this->cont_.mutable_cpu_data());
  Blobs<Dtype> bottoms{&this->x_, &this->cont_, &h0, &c0}, tops{&this->top_, &h_T, &c_T};
  LSTMLayer<Dtype> layer(ParseLayerParam(LstmText(3, "expose_hidden: true")));
  EXPECT_EQ(layer.MinBottomBlobs(), 4);
  EXPECT_EQ(layer.MaxBottomBlobs(), 5);
  EXPECT_EQ(layer.ExactNumTopBlobs(), 3);
  layer.SetUp(bottoms, tops);
  EXPECT_EQ(h_T.shape(), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(c_T.shape(), (std::vector<int>{1, 2, 3}));
  for (int pass = 0; pass < 2; ++pass) {  // nothing is carried: both passes start from h0, c0
    layer.Forward(bottoms, tops);
    std::vector<double> h(h0.cpu_data(), h0.cpu_data() + 6), c(c0.cpu_data(), c0.cpu_data() + 6);
    this->ExpectTop(this->top_,
                    DirectLstm<Dtype>(this->x_, this->cont_, nullptr, layer.blobs(), &h, &c), "h");
    for (int i = 0; i < 6; ++i) {
      EXPECT_NEAR(h_T.cpu_data()[i], h[i], 1e-5) << "h_T " << i << ", pass " << pass;
      EXPECT_NEAR(c_T.cpu_data()[i], c[i], 1e-5) << "c_T " << i << ", pass " << pass;
    }
  }
}

TYPED_TEST(LSTMLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  // Every stream starts a sequence at t = 0, so passes do not depend on each other.
  LSTMLayer<Dtype> layer(ParseLayerParam(LstmText(3)));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_, 0);
}

TYPED_TEST(LSTMLayerTest, GradientsMatchFiniteDifferencesWithStaticInput) {
  using Dtype = typename TypeParam::Dtype;
  Blobs<Dtype> bottoms{&this->x_, &this->cont_, &this->x_static_};
  LSTMLayer<Dtype> layer(ParseLayerParam(LstmText(2)));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradientExhaustive(&layer, bottoms, this->top_vec_, 2);
}

TYPED_TEST(LSTMLayerTest, GradientsMatchFiniteDifferencesWithExposedHiddenState) {
  using Dtype = typename TypeParam::Dtype;
  // As in BVLC, the exposed states take and give no gradient: the sequence output's gradient
  // with respect to x and the parameters is checked, starting from given h0, c0.
  Blob<Dtype> h0(std::vector<int>{1, 2, 2}), c0(std::vector<int>{1, 2, 2}), h_T, c_T;
  FillGaussian(&h0, 5);
  FillGaussian(&c0, 6);
  const Dtype cont[8] = {1, 1, 1, 0, 1, 1, 1, 1};
  caffe_copy(8, cont, this->cont_.mutable_cpu_data());
  Blobs<Dtype> bottoms{&this->x_, &this->cont_, &h0, &c0}, tops{&this->top_, &h_T, &c_T};
  LSTMLayer<Dtype> layer(ParseLayerParam(LstmText(2, "expose_hidden: true")));
  layer.SetUp(bottoms, tops);
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  for (int i = 0; i < this->top_.count(); ++i) {
    checker.CheckGradientSingle(&layer, bottoms, tops, 0, 0, i);
  }
}

TYPED_TEST(LSTMLayerTest, WritesTheGradientOfXEvenWhenNotAsked) {
  using Dtype = typename TypeParam::Dtype;
  // BVLC's unrolled net always backpropagates to x (its golden fixtures show a diff in the
  // Input blob feeding an LSTM); the parameters need it anyway.
  LSTMLayer<Dtype> layer(ParseLayerParam(LstmText(3)));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  caffe_set(this->top_.count(), Dtype(1), this->top_.mutable_cpu_diff());
  caffe_set(this->x_.count(), Dtype(0), this->x_.mutable_cpu_diff());
  layer.Backward(this->top_vec_, {false, false}, this->bottom_vec_);
  EXPECT_GT(this->x_.asum_diff(), 0);
  EXPECT_GT(layer.blobs()[2]->asum_diff(), 0);
}

TYPED_TEST(LSTMLayerTest, RejectsBadBottomsAndParameters) {
  using Dtype = typename TypeParam::Dtype;
  const struct {
    std::vector<int> x, cont;
    const char* extra;
    const char* says;
  } cases[] = {
      {{4}, {4, 2}, "", "bottom[0] (x) 4 (4) must have at least 2 axes"},
      {{4, 2, 3}, {4, 2, 1}, "", "bottom[1] (cont) 4 2 1 (8) must have exactly 2 axes"},
      {{4, 2, 3}, {3, 2}, "", "must have as many timesteps as bottom[0] (x) 4 2 3 (24)"},
      {{4, 2, 3}, {4, 3}, "", "must have as many streams as bottom[0] (x) 4 2 3 (24)"},
      // The input transform reads the values along axis 2.
      {{4, 2}, {4, 2}, "", "cannot unroll over bottom[0] (x) 4 2 (8): "},
  };
  for (const auto& c : cases) {
    Blob<Dtype> x(c.x), cont(c.cont), top;
    Blobs<Dtype> bottoms{&x, &cont}, tops{&top};
    LSTMLayer<Dtype> layer(ParseLayerParam(LstmText(3, c.extra)));
    try {
      layer.SetUp(bottoms, tops);
      ADD_FAILURE() << "accepted x " << x.shape_string() << ", cont " << cont.shape_string();
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind("LSTM layer 'lstm': ", 0), 0u) << message;
      EXPECT_NE(message.find(c.says), std::string::npos) << message;
    }
  }
  LSTMLayer<Dtype> no_output(ParseLayerParam("name: 'lstm' type: 'LSTM'"));
  try {
    no_output.SetUp(this->bottom_vec_, this->top_vec_);
    ADD_FAILURE() << "accepted num_output 0";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("LSTM layer 'lstm': recurrent_param.num_output is 0"),
              std::string::npos)
        << e.what();
  }
  // x_static with the wrong number of streams.
  Blob<Dtype> x_static(std::vector<int>{3, 2});
  Blobs<Dtype> with_static{&this->x_, &this->cont_, &x_static};
  LSTMLayer<Dtype> static_layer(ParseLayerParam(LstmText(3)));
  EXPECT_THROW(static_layer.SetUp(with_static, this->top_vec_), Error);
  // Exposed hidden state of the wrong shape.
  Blob<Dtype> h0(std::vector<int>{1, 2, 4}), c0(std::vector<int>{1, 2, 3}), h_T, c_T;
  Blobs<Dtype> hidden_bottoms{&this->x_, &this->cont_, &h0, &c0};
  Blobs<Dtype> hidden_tops{&this->top_, &h_T, &c_T};
  LSTMLayer<Dtype> hidden_layer(ParseLayerParam(LstmText(3, "expose_hidden: true")));
  EXPECT_THROW(hidden_layer.SetUp(hidden_bottoms, hidden_tops), Error);
  // Given weights of the wrong shape.
  LayerParameter param = ParseLayerParam(LstmText(3));
  Blob<Dtype>(std::vector<int>{12, 4}).ToProto(param.add_blobs());
  Blob<Dtype>(std::vector<int>{12}).ToProto(param.add_blobs());
  Blob<Dtype>(std::vector<int>{12, 3}).ToProto(param.add_blobs());
  LSTMLayer<Dtype> wrong_weights(param);
  EXPECT_THROW(wrong_weights.SetUp(this->bottom_vec_, this->top_vec_), Error);
  // A changed number of timesteps, and a gradient asked for cont.
  LSTMLayer<Dtype> layer(ParseLayerParam(LstmText(3)));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_THROW(layer.Backward(this->top_vec_, {true, true}, this->bottom_vec_), Error);
  this->x_.Reshape({5, 2, 3});
  this->cont_.Reshape({5, 2});
  EXPECT_THROW(layer.Reshape(this->bottom_vec_, this->top_vec_), Error);
}

// The layerzoo fixture's LSTM (T = 3, N = 2, D = 4, H = 5; stream 1 restarts at t = 2):
// BVLC's weights, inputs and top diff in; BVLC's top, x diff and parameter diffs out.
TYPED_TEST(LSTMLayerTest, MatchesBvlcOnTheLayerzooFixture) {
  using Dtype = typename TypeParam::Dtype;
  CAFFE_REQUIRE_SHARED_DIR();
  Hdf5File file(SharedDir() + "/fixtures/golden/layerzoo/blobs.h5", H5F_ACC_RDONLY);
  auto load = [&](const std::string& path, Blob<Dtype>* blob) {
    hdf5_load_nd_dataset<Dtype>(file.id(), path.c_str(), 0, kMaxBlobAxes, blob, true);
  };
  Blob<Dtype> seq, cont, expected_top, top_diff, expected_seq_diff;
  load("input/seq", &seq);
  load("input/cont", &cont);
  load("forward/lstm", &expected_top);
  load("backward/lstm", &top_diff);
  load("backward/seq", &expected_seq_diff);
  LayerParameter param =
      ParseLayerParam("name: 'lstm' type: 'LSTM' recurrent_param { num_output: 5 }");
  for (int i = 0; i < 3; ++i) {
    Blob<Dtype> weights;
    load("param/lstm/" + std::to_string(i), &weights);
    weights.ToProto(param.add_blobs());
  }
  LSTMLayer<Dtype> layer(param);
  Blobs<Dtype> bottoms{&seq, &cont};
  layer.SetUp(bottoms, this->top_vec_);
  layer.Forward(bottoms, this->top_vec_);
  caffe_copy(top_diff.count(), top_diff.cpu_data(), this->top_.mutable_cpu_diff());
  layer.Backward(this->top_vec_, {false, false}, bottoms);

  // max |ours - BVLC| <= 1e-4 max |BVLC|, the golden nets' bar.
  auto expect_close = [](const Dtype* ours, const Blob<Dtype>& bvlc, const std::string& what) {
    double max_diff = 0, max_ref = 0;
    for (int i = 0; i < bvlc.count(); ++i) {
      max_diff = std::max(max_diff, std::abs(double(ours[i]) - bvlc.cpu_data()[i]));
      max_ref = std::max(max_ref, std::abs(double(bvlc.cpu_data()[i])));
    }
    EXPECT_GT(max_ref, 0) << what;
    EXPECT_LE(max_diff, 1e-4 * max_ref)
        << what << ": max |ours - BVLC| = " << max_diff << ", max |BVLC| = " << max_ref;
  };
  ASSERT_EQ(this->top_.shape(), expected_top.shape());
  expect_close(this->top_.cpu_data(), expected_top, "forward/lstm");
  expect_close(seq.cpu_diff(), expected_seq_diff, "backward/seq");
  for (int i = 0; i < 3; ++i) {
    Blob<Dtype> expected_diff;
    load("param_diff/lstm/" + std::to_string(i), &expected_diff);
    expect_close(layer.blobs()[i]->cpu_diff(), expected_diff,
                 "param_diff/lstm/" + std::to_string(i));
  }
}

// BVLC's .caffemodel holds the LSTM's three blobs under the layer's name; a net with an LSTM of
// that name loads them (ignoring the fixture's other layers) and gives BVLC's output.
TYPED_TEST(LSTMLayerTest, LoadsBvlcCaffemodelWeights) {
  using Dtype = typename TypeParam::Dtype;
  CAFFE_REQUIRE_SHARED_DIR();
  const std::string folder = SharedDir() + "/fixtures/golden/layerzoo";
  NetParameter net_param;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "name: 'lstm_only' "
      "layer { name: 'input' type: 'Input' top: 'seq' top: 'cont' "
      "  input_param { shape { dim: 3 dim: 2 dim: 4 } shape { dim: 3 dim: 2 } } } "
      "layer { name: 'lstm' type: 'LSTM' bottom: 'seq' bottom: 'cont' top: 'lstm' "
      "  recurrent_param { num_output: 5 } }",
      &net_param));
  Net<Dtype> net(net_param);
  net.CopyTrainedLayersFrom(folder + "/weights.caffemodel");
  Hdf5File file(folder + "/blobs.h5", H5F_ACC_RDONLY);
  auto load = [&](const std::string& path, Blob<Dtype>* blob) {
    hdf5_load_nd_dataset<Dtype>(file.id(), path.c_str(), 0, kMaxBlobAxes, blob, true);
  };
  const auto& blobs = net.layer_by_name("lstm")->blobs();
  ASSERT_EQ(blobs.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    Blob<Dtype> expected;
    load("param/lstm/" + std::to_string(i), &expected);
    ASSERT_EQ(blobs[i]->shape(), expected.shape()) << "blob " << i;
    for (int k = 0; k < expected.count(); ++k) {
      ASSERT_EQ(blobs[i]->cpu_data()[k], expected.cpu_data()[k]) << "blob " << i << " at " << k;
    }
  }
  Blob<Dtype> seq, cont, expected_top;
  load("input/seq", &seq);
  load("input/cont", &cont);
  load("forward/lstm", &expected_top);
  net.blob_by_name("seq")->CopyFrom(seq);
  net.blob_by_name("cont")->CopyFrom(cont);
  net.Forward();
  const Blob<Dtype>& top = *net.blob_by_name("lstm");
  ASSERT_EQ(top.shape(), expected_top.shape());
  for (int i = 0; i < top.count(); ++i) {
    EXPECT_NEAR(top.cpu_data()[i], expected_top.cpu_data()[i], 1e-5) << i;
  }
}

// BVLC's setup log of layerzoo shows the LSTM's unrolled net: every layer's name, its top
// shapes, and whether it runs backward. Ours must be the same net.
TYPED_TEST(LSTMLayerTest, UnrolledNetIsBvlcsLayerForLayer) {
  using Dtype = typename TypeParam::Dtype;
  CAFFE_REQUIRE_SHARED_DIR();
  std::ifstream log(SharedDir() + "/fixtures/setup_logs/golden_layerzoo.log");
  ASSERT_TRUE(log.good());
  struct LoggedLayer {
    std::string name;
    std::vector<std::string> top_shapes;
  };
  std::vector<LoggedLayer> logged;
  std::vector<std::string> backward_lines;  // in BVLC's (reverse) order
  std::string line;
  bool inside = false;
  auto after = [&](const std::string& marker) {
    const size_t at = line.find(marker);
    return at == std::string::npos ? std::string() : line.substr(at + marker.size());
  };
  while (std::getline(log, line)) {
    if (line.find("Initializing recurrent layer") != std::string::npos) inside = true;
    if (!inside) continue;
    if (line.find("Network initialization done.") != std::string::npos) break;
    if (line.find("] Creating Layer ") != std::string::npos) {
      logged.push_back({after("] Creating Layer "), {}});
    } else if (line.find("] Top shape: ") != std::string::npos) {
      logged.back().top_shapes.push_back(after("] Top shape: "));
    } else if (line.find("backward computation.") != std::string::npos) {
      backward_lines.push_back(after("] "));
    }
  }
  ASSERT_GT(logged.size(), 20u) << "the unrolled net's setup was not found in the log";

  Blob<Dtype> seq(std::vector<int>{3, 2, 4}), cont(std::vector<int>{3, 2});
  Blobs<Dtype> bottoms{&seq, &cont};
  LSTMLayer<Dtype> layer(
      ParseLayerParam("name: 'lstm' type: 'LSTM' recurrent_param { num_output: 5 }"));
  layer.SetUp(bottoms, this->top_vec_);
  const Net<Dtype>& net = layer.unrolled_net();
  ASSERT_EQ(net.layers().size(), logged.size());
  for (size_t i = 0; i < logged.size(); ++i) {
    EXPECT_EQ(net.layer_names()[i], logged[i].name) << "layer " << i;
    std::vector<std::string> shapes;
    for (const Blob<Dtype>* top : net.top_vecs()[i]) shapes.push_back(top->shape_string());
    EXPECT_EQ(shapes, logged[i].top_shapes) << "tops of layer " << i << " " << logged[i].name;
  }
  ASSERT_EQ(backward_lines.size(), logged.size());
  for (size_t i = 0; i < logged.size(); ++i) {
    const size_t layer_id = logged.size() - 1 - i;
    EXPECT_EQ(backward_lines[i],
              net.layer_names()[layer_id] + (net.layer_need_backward()[layer_id]
                                                 ? " needs backward computation."
                                                 : " does not need backward computation."));
  }
  // W_hc is one blob for all timesteps, owned by the first transform.
  int shared = 0;
  for (size_t i = 0; i < net.params().size(); ++i) {
    if (net.param_owners()[i] < 0) continue;
    ++shared;
    EXPECT_EQ(net.param_display_names()[i], "W_hc");
    EXPECT_EQ(net.params()[i]->cpu_data(), net.params()[net.param_owners()[i]]->cpu_data());
  }
  EXPECT_EQ(shared, 2);
}

}  // namespace caffe
