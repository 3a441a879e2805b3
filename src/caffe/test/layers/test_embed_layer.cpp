// EmbedLayer: shapes of top and params, hand-computed lookup with and without bias, gradient
// accumulation for repeated indices, finite differences for the params, and index/parameter
// errors.
// EmbedLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
#include <functional>
#include <string>
#include <vector>

#include "caffe/layers/embed_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class EmbedLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  EmbedLayerTest() : bottom_(vector<int>{2, 3}) {
    const Dtype indices[] = {0, 4, 2, 2, 1, 4};
    caffe_copy(6, indices, bottom_.mutable_cpu_data());
  }
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_}, top_vec_{&top_};
};
TYPED_TEST_SUITE(EmbedLayerTest, TestDtypesAndDevices);

constexpr const char* kEmbedParam =
    "name: 'e' embed_param { num_output: 3 input_dim: 5 "
    "weight_filler { type: 'gaussian' } bias_filler { type: 'gaussian' } }";

TYPED_TEST(EmbedLayerTest, IsRegisteredAsEmbed) {
  using Dtype = typename TypeParam::Dtype;
  auto layer = LayerRegistry<Dtype>::CreateLayer(
      ParseLayerParam("name: 'e' type: 'Embed' embed_param { num_output: 3 input_dim: 5 }"));
  EXPECT_STREQ(layer->type(), "Embed");
}

TYPED_TEST(EmbedLayerTest, TopAppendsNumOutputAndParamsHaveTableShapes) {
  using Dtype = typename TypeParam::Dtype;
  EmbedLayer<Dtype> layer(ParseLayerParam(kEmbedParam));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{2, 3, 3}));
  ASSERT_EQ(layer.blobs().size(), 2u);
  EXPECT_EQ(layer.blobs()[0]->shape(), (vector<int>{5, 3}));
  EXPECT_EQ(layer.blobs()[1]->shape(), (vector<int>{3}));
  EmbedLayer<Dtype> no_bias(
      ParseLayerParam("embed_param { num_output: 3 input_dim: 5 bias_term: false }"));
  no_bias.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(no_bias.blobs().size(), 1u);
}

TYPED_TEST(EmbedLayerTest, ForwardLooksUpRowsAndAddsTheBias) {
  using Dtype = typename TypeParam::Dtype;
  EmbedLayer<Dtype> layer(ParseLayerParam(kEmbedParam));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  Dtype* weight = layer.blobs()[0]->mutable_cpu_data();
  for (int i = 0; i < 15; ++i) weight[i] = Dtype(i);  // row k = {3k, 3k+1, 3k+2}
  Dtype* bias = layer.blobs()[1]->mutable_cpu_data();
  bias[0] = Dtype(0.5);
  bias[1] = -1;
  bias[2] = 10;
  layer.Forward(this->bottom_vec_, this->top_vec_);
  const int indices[] = {0, 4, 2, 2, 1, 4};
  for (int m = 0; m < 6; ++m) {
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(this->top_.cpu_data()[m * 3 + d], Dtype(3 * indices[m] + d) + bias[d]) << m;
    }
  }
}

TYPED_TEST(EmbedLayerTest, BackwardAccumulatesRepeatedIndices) {
  using Dtype = typename TypeParam::Dtype;
  EmbedLayer<Dtype> layer(ParseLayerParam(kEmbedParam));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < 18; ++i) this->top_.mutable_cpu_diff()[i] = Dtype(i / 3 + 1);  // m + 1
  layer.Backward(this->top_vec_, {false}, this->bottom_vec_);
  // Index 0 <- m 0; 1 <- m 4; 2 <- m 2, 3; 3 <- none; 4 <- m 1, 5.
  const Dtype expected_row[] = {1, 5, 3 + 4, 0, 2 + 6};
  for (int k = 0; k < 5; ++k) {
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(layer.blobs()[0]->cpu_diff()[k * 3 + d], expected_row[k]) << k;
    }
  }
  for (int d = 0; d < 3; ++d) EXPECT_EQ(layer.blobs()[1]->cpu_diff()[d], Dtype(21)) << d;
}

TYPED_TEST(EmbedLayerTest, GradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  EmbedLayer<Dtype> layer(ParseLayerParam(kEmbedParam));
  GradientChecker<Dtype> checker(Dtype(1e-2), Dtype(1e-3));
  // -2: the params only; the indices have no gradient.
  checker.CheckGradientExhaustive(&layer, this->bottom_vec_, this->top_vec_, -2);
}

TYPED_TEST(EmbedLayerTest, RejectsInvalidIndices) {
  using Dtype = typename TypeParam::Dtype;
  for (Dtype bad : {Dtype(5), Dtype(-1), Dtype(1.5)}) {
    SCOPED_TRACE(bad);
    EmbedLayer<Dtype> layer(ParseLayerParam(kEmbedParam));
    layer.SetUp(this->bottom_vec_, this->top_vec_);
    this->bottom_.mutable_cpu_data()[3] = bad;
    EXPECT_THROW(layer.Forward(this->bottom_vec_, this->top_vec_), Error);
  }
}

TYPED_TEST(EmbedLayerTest, RejectsGradientToTheIndices) {
  using Dtype = typename TypeParam::Dtype;
  EmbedLayer<Dtype> layer(ParseLayerParam(kEmbedParam));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_THROW(layer.Backward(this->top_vec_, {true}, this->bottom_vec_), Error);
}

TYPED_TEST(EmbedLayerTest, RejectsMissingSizes) {
  using Dtype = typename TypeParam::Dtype;
  for (const char* text : {"embed_param { input_dim: 5 }", "embed_param { num_output: 3 }"}) {
    SCOPED_TRACE(text);
    EmbedLayer<Dtype> layer(ParseLayerParam(text));
    EXPECT_THROW(layer.SetUp(this->bottom_vec_, this->top_vec_), Error);
  }
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

namespace {

// Integer indices in [0, input_dim), with repeats (several indices update one table row).
template <typename Dtype>
std::function<void(const Blobs<Dtype>&)> IndexFill(int input_dim) {
  return [input_dim](const Blobs<Dtype>& bottoms) {
    Dtype* data = bottoms[0]->mutable_cpu_data();
    for (int i = 0; i < bottoms[0]->count(); ++i) {
      data[i] = static_cast<Dtype>((i * 7 + 3) % input_dim);
    }
  };
}

std::string EmbedText(const std::string& params) {
  return "name: 'embed' type: 'Embed' bottom: 'x' top: 'y' embed_param { " + params +
         " weight_filler { type: 'gaussian' } }";
}

}  // namespace

template <typename Dtype>
class EmbedLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(EmbedLayerGpuTest, TestDtypes);

TYPED_TEST(EmbedLayerGpuTest, Embed) {
  // 28 indices into 10 rows of 37: 1036 top values.
  GpuLayerCase<TypeParam> test_case = MakeGpuCase<TypeParam>(
      EmbedText("num_output: 37 input_dim: 10 bias_filler { type: 'gaussian' }"), {{4, 7}},
      GpuDefaultTolerance<TypeParam>());
  test_case.fill = IndexFill<TypeParam>(10);
  test_case.propagate_down = {false};
  ExpectGpuMatchesCpu(test_case);
}

TYPED_TEST(EmbedLayerGpuTest, EmbedWithoutBiasManyRepeats) {
  // 600 indices into 3 rows: about 200 atomic additions per weight diff value.
  GpuLayerCase<TypeParam> test_case =
      MakeGpuCase<TypeParam>(EmbedText("num_output: 5 input_dim: 3 bias_term: false"), {{600}},
                             GpuLongSumTolerance<TypeParam>());
  test_case.fill = IndexFill<TypeParam>(3);
  test_case.propagate_down = {false};
  ExpectGpuMatchesCpu(test_case);
}

TYPED_TEST(EmbedLayerGpuTest, EmbedRejectsBadIndices) {
  using Dtype = TypeParam;
  for (const Dtype bad : {Dtype(-1), Dtype(10), Dtype(2.5)}) {
    Blob<Dtype> bottom(std::vector<int>{3, 4}), top;
    Dtype* data = bottom.mutable_cpu_data();
    for (int i = 0; i < bottom.count(); ++i) data[i] = static_cast<Dtype>(i % 10);
    data[5] = bad;
    Blobs<Dtype> bottoms{&bottom}, tops{&top};
    Caffe::set_mode(Caffe::GPU);
    auto layer = LayerRegistry<Dtype>::CreateLayer(
        ParseLayerParam(EmbedText("num_output: 4 input_dim: 10")));
    layer->SetUp(bottoms, tops);
    try {
      layer->Forward(bottoms, tops);
      ADD_FAILURE() << "index " << bad << " was accepted";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("at position 5"), std::string::npos) << error.what();
    }
    Caffe::set_mode(Caffe::CPU);
  }
}

}  // namespace caffe
