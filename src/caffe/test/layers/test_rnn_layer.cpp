// RNNLayer: parameter shapes and order (BVLC's), the unrolled net's layer names, forward against a
// direct RNN with sequences that restart and a state carried between passes, a static input,
// exposed hidden state, finite-difference gradients with respect to x, x_static and the
// parameters, and rejected inputs.
// Legend: T timesteps, N streams, D input values per timestep and stream, D_s static input
// values, H hidden size (num_output).
#include <cmath>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/rnn_layer.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

// A direct RNN over x (T, N, D) from the state h0 (N, H); weights in the layer's blob order
// W_xh (H, D), b_h (H), [W_xh_static (H, D_s)], W_hh (H, H), W_ho (H, H), b_o (H). Returns
// o (T, N, H) and leaves the last state in h0.
template <typename Dtype>
std::vector<double> DirectRnn(const Blob<Dtype>& x, const Blob<Dtype>& cont,
                              const Blob<Dtype>* x_static,
                              const vector<shared_ptr<Blob<Dtype>>>& blobs,
                              std::vector<double>* h0) {
  const int T = x.shape(0), N = x.shape(1), D = x.count(2);
  const int H = blobs[0]->shape(0);
  const int first_recurrent = x_static ? 3 : 2;
  const Dtype* w_xh = blobs[0]->cpu_data();
  const Dtype* b_h = blobs[1]->cpu_data();
  const Dtype* w_hh = blobs[first_recurrent]->cpu_data();
  const Dtype* w_ho = blobs[first_recurrent + 1]->cpu_data();
  const Dtype* b_o = blobs[first_recurrent + 2]->cpu_data();
  std::vector<double>& h = *h0;
  std::vector<double> out(T * N * H);
  for (int t = 0; t < T; ++t) {
    for (int n = 0; n < N; ++n) {
      const double cont_tn = cont.cpu_data()[t * N + n];
      std::vector<double> next(H);
      for (int r = 0; r < H; ++r) {
        double sum = b_h[r];
        for (int d = 0; d < D; ++d) sum += w_xh[r * D + d] * x.cpu_data()[(t * N + n) * D + d];
        for (int k = 0; k < H; ++k) sum += w_hh[r * H + k] * cont_tn * h[n * H + k];
        if (x_static) {
          const int Ds = x_static->count(1);
          for (int d = 0; d < Ds; ++d) {
            sum += blobs[2]->cpu_data()[r * Ds + d] * x_static->cpu_data()[n * Ds + d];
          }
        }
        next[r] = std::tanh(sum);
      }
      for (int r = 0; r < H; ++r) {
        h[n * H + r] = next[r];
        double sum = b_o[r];
        for (int k = 0; k < H; ++k) sum += w_ho[r * H + k] * next[k];
        out[(t * N + n) * H + r] = std::tanh(sum);
      }
    }
  }
  return out;
}

std::string RnnText(int num_output, const std::string& extra = "") {
  return "name: 'rnn' type: 'RNN' recurrent_param { num_output: " + std::to_string(num_output) +
         " weight_filler { type: 'uniform' min: -0.6 max: 0.6 } "
         "bias_filler { type: 'gaussian' std: 0.3 } " +
         extra + " }";
}

}  // namespace

template <typename TypeParam>
class RNNLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  // T = 4, N = 2, x (4, 2, 3) read as D = 3; stream 1 restarts at t = 2.
  RNNLayerTest()
      : x_(std::vector<int>{4, 2, 3}),
        cont_(std::vector<int>{4, 2}),
        x_static_(std::vector<int>{2, 2}) {
    FillGaussian(&x_, 1801);
    FillGaussian(&x_static_, 1802);
    const Dtype cont[8] = {0, 0, 1, 1, 1, 0, 1, 1};
    caffe_copy(8, cont, cont_.mutable_cpu_data());
  }

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
TYPED_TEST_SUITE(RNNLayerTest, TestDtypesAndDevices);

TYPED_TEST(RNNLayerTest, TopAndParameterShapesAreBvlcs) {
  using Dtype = typename TypeParam::Dtype;
  RNNLayer<Dtype> layer(ParseLayerParam(RnnText(5)));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_STREQ(layer.type(), "RNN");
  EXPECT_EQ(this->top_.shape(), (std::vector<int>{4, 2, 5}));
  const std::vector<std::vector<int>> shapes{{5, 3}, {5}, {5, 5}, {5, 5}, {5}};
  ASSERT_EQ(layer.blobs().size(), shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) EXPECT_EQ(layer.blobs()[i]->shape(), shapes[i]) << i;

  Blob<Dtype> top;
  Blobs<Dtype> with_static{&this->x_, &this->cont_, &this->x_static_}, tops{&top};
  RNNLayer<Dtype> static_layer(ParseLayerParam(RnnText(5)));
  static_layer.SetUp(with_static, tops);
  const std::vector<std::vector<int>> static_shapes{{5, 3}, {5}, {5, 2}, {5, 5}, {5, 5}, {5}};
  ASSERT_EQ(static_layer.blobs().size(), static_shapes.size());
  for (size_t i = 0; i < static_shapes.size(); ++i) {
    EXPECT_EQ(static_layer.blobs()[i]->shape(), static_shapes[i]) << i;
  }
}

TYPED_TEST(RNNLayerTest, UnrolledLayersAreNamedAsInBvlc) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> x(std::vector<int>{2, 1, 3}), cont(std::vector<int>{2, 1});
  Blobs<Dtype> bottoms{&x, &cont};
  RNNLayer<Dtype> layer(ParseLayerParam(RnnText(4)));
  layer.SetUp(bottoms, this->top_vec_);
  const std::vector<std::string> expected{
      "rnn_",            // Input: x, cont
      "rnn_",            // Input: h_0
      "rnn_cont_slice",  // each cont_t has one reader here (LSTM's units read it too)
      "rnn_x_transform",
      "rnn_W_xh_x_slice",
      "rnn_h_conted_0",
      "rnn_W_hh_h_0",
      "rnn_h_input_sum_1",
      "rnn_h_neuron_1",
      "h_1_rnn_h_neuron_1_0_split",
      "rnn_W_ho_h_1",
      "rnn_o_neuron_1",
      "rnn_h_conted_1",
      "rnn_W_hh_h_1",
      "rnn_h_input_sum_2",
      "rnn_h_neuron_2",
      "rnn_W_ho_h_2",
      "rnn_o_neuron_2",
      "rnn_o_concat",
      "o_pseudoloss",
  };
  EXPECT_EQ(layer.unrolled_net().layer_names(), expected);
}

TYPED_TEST(RNNLayerTest, ForwardMatchesADirectRnnAndCarriesTheStateOver) {
  using Dtype = typename TypeParam::Dtype;
  RNNLayer<Dtype> layer(ParseLayerParam(RnnText(3)));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  std::vector<double> h(2 * 3, 0.0);
  this->ExpectTop(this->top_, DirectRnn<Dtype>(this->x_, this->cont_, nullptr, layer.blobs(), &h),
                  "pass 1");
  FillGaussian(&this->x_, 77);
  const Dtype cont[8] = {1, 0, 1, 1, 1, 1, 0, 1};  // stream 0 continues from pass 1
  caffe_copy(8, cont, this->cont_.mutable_cpu_data());
  layer.Forward(this->bottom_vec_, this->top_vec_);
  this->ExpectTop(this->top_, DirectRnn<Dtype>(this->x_, this->cont_, nullptr, layer.blobs(), &h),
                  "pass 2");
}

TYPED_TEST(RNNLayerTest, StaticInputEntersEveryTimestep) {
  using Dtype = typename TypeParam::Dtype;
  Blobs<Dtype> bottoms{&this->x_, &this->cont_, &this->x_static_};
  RNNLayer<Dtype> layer(ParseLayerParam(RnnText(3)));
  layer.SetUp(bottoms, this->top_vec_);
  layer.Forward(bottoms, this->top_vec_);
  std::vector<double> h(6, 0.0);
  this->ExpectTop(this->top_,
                  DirectRnn<Dtype>(this->x_, this->cont_, &this->x_static_, layer.blobs(), &h),
                  "with x_static");
}

TYPED_TEST(RNNLayerTest, ExposedHiddenStateIsTakenAndGiven) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> h0(std::vector<int>{1, 2, 3}), h_T;
  FillGaussian(&h0, 8);
  const Dtype cont[8] = {1, 1, 1, 1, 1, 0, 1, 1};
  caffe_copy(8, cont, this->cont_.mutable_cpu_data());
  Blobs<Dtype> bottoms{&this->x_, &this->cont_, &h0}, tops{&this->top_, &h_T};
  RNNLayer<Dtype> layer(ParseLayerParam(RnnText(3, "expose_hidden: true")));
  EXPECT_EQ(layer.MinBottomBlobs(), 3);
  EXPECT_EQ(layer.ExactNumTopBlobs(), 2);
  layer.SetUp(bottoms, tops);
  for (int pass = 0; pass < 2; ++pass) {
    layer.Forward(bottoms, tops);
    std::vector<double> h(h0.cpu_data(), h0.cpu_data() + 6);
    this->ExpectTop(this->top_, DirectRnn<Dtype>(this->x_, this->cont_, nullptr, layer.blobs(), &h),
                    "o");
    for (int i = 0; i < 6; ++i) {
      EXPECT_NEAR(h_T.cpu_data()[i], h[i], 1e-5) << "h_T " << i << ", pass " << pass;
    }
  }
  // With a static input too: bottoms x, cont, x_static, h_0.
  Blob<Dtype> top;
  Blobs<Dtype> static_bottoms{&this->x_, &this->cont_, &this->x_static_, &h0};
  Blobs<Dtype> static_tops{&top, &h_T};
  RNNLayer<Dtype> static_layer(ParseLayerParam(RnnText(3, "expose_hidden: true")));
  static_layer.SetUp(static_bottoms, static_tops);
  static_layer.Forward(static_bottoms, static_tops);
  std::vector<double> h(h0.cpu_data(), h0.cpu_data() + 6);
  this->ExpectTop(
      top, DirectRnn<Dtype>(this->x_, this->cont_, &this->x_static_, static_layer.blobs(), &h),
      "o with x_static");
}

TYPED_TEST(RNNLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  RNNLayer<Dtype> layer(ParseLayerParam(RnnText(3)));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_, 0);
}

TYPED_TEST(RNNLayerTest, GradientsMatchFiniteDifferencesWithStaticInput) {
  using Dtype = typename TypeParam::Dtype;
  Blobs<Dtype> bottoms{&this->x_, &this->cont_, &this->x_static_};
  RNNLayer<Dtype> layer(ParseLayerParam(RnnText(2)));
  GradientChecker<Dtype> checker(1e-2, 1e-3);
  checker.CheckGradientExhaustive(&layer, bottoms, this->top_vec_, 2);
}

TYPED_TEST(RNNLayerTest, RejectsBadBottomsAndParameters) {
  using Dtype = typename TypeParam::Dtype;
  const struct {
    std::vector<int> x, cont;
  } cases[] = {{{4}, {4, 2}}, {{4, 2, 3}, {4, 2, 1}}, {{4, 2, 3}, {3, 2}}, {{4, 2, 3}, {4, 1}}};
  for (const auto& c : cases) {
    Blob<Dtype> x(c.x), cont(c.cont), top;
    Blobs<Dtype> bottoms{&x, &cont}, tops{&top};
    RNNLayer<Dtype> layer(ParseLayerParam(RnnText(3)));
    try {
      layer.SetUp(bottoms, tops);
      ADD_FAILURE() << "accepted x " << x.shape_string() << ", cont " << cont.shape_string();
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("RNN layer 'rnn': ", 0), 0u) << e.what();
    }
  }
  RNNLayer<Dtype> no_output(ParseLayerParam("name: 'rnn' type: 'RNN'"));
  EXPECT_THROW(no_output.SetUp(this->bottom_vec_, this->top_vec_), Error);
  Blob<Dtype> h0(std::vector<int>{1, 3, 3}), h_T;  // 3 streams, x has 2
  Blobs<Dtype> bottoms{&this->x_, &this->cont_, &h0}, tops{&this->top_, &h_T};
  RNNLayer<Dtype> hidden(ParseLayerParam(RnnText(3, "expose_hidden: true")));
  EXPECT_THROW(hidden.SetUp(bottoms, tops), Error);
}

}  // namespace caffe
