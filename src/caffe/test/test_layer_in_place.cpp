// In place (a top that is also a bottom, `bottom: "x" top: "x"`) for every layer type: the layer
// either refuses it at setup with an error that says so, or computes in place exactly what it
// computes with a top of its own: the top's values, every bottom's gradient, every parameter's
// gradient. BVLC Caffe checks neither, and an in-place Pooling, Convolution or Filter there (or
// a Filter on a GPU, where its threads race) gives wrong numbers without a word.
// The same per-type cases also show that a backward step that reaches nothing touches no gradient.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "caffe/layer.hpp"
#include "caffe/layer_factory.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

// How a bottom is filled: U(low, high), rounded down to whole numbers where `whole` (labels,
// indices, selectors).
struct Fill {
  std::vector<int> shape;
  double low = -1, high = 1;
  bool whole = false;
  bool propagate = true;  // whether its gradient is asked for
};

struct InPlaceCase {
  const char* name;
  std::string layer;  // LayerParameter text, without bottoms and tops
  std::vector<Fill> bottoms;
  int tops = 1;
  int in_place = 0;          // the bottom that top[0] replaces
  bool backward = true;      // false for layers without gradients
  bool fill_params = false;  // parameters U(0.5, 1.5) instead of their fillers (global stats)
};

Fill Values(std::vector<int> shape, double low = -1, double high = 1) {
  return Fill{std::move(shape), low, high, false, true};
}
// Whole numbers in [0, classes): labels and indices, no gradient.
Fill Labels(std::vector<int> shape, int classes) {
  return Fill{std::move(shape), 0, classes - 1e-3, true, false};
}

const std::vector<int> kImage = {2, 3, 5, 4};

const char kConv[] =
    "convolution_param { num_output: 3 kernel_size: 3 pad: 1 weight_filler { type: 'gaussian' } "
    "bias_filler { type: 'gaussian' } }";

std::vector<InPlaceCase> Cases() {
  const std::string uniform = "filler { type: 'uniform' min: 0.5 max: 1.5 }";
  return {
      {"AbsVal", "type: 'AbsVal'", {Values(kImage)}},
      {"Accuracy", "type: 'Accuracy'", {Values({4, 5}), Labels({4}, 5)}, 1, 0, false},
      {"ArgMax", "type: 'ArgMax'", {Values({2, 5})}, 1, 0, false},
      {"BNLL", "type: 'BNLL'", {Values(kImage, -3, 3)}},
      {"BatchNorm", "type: 'BatchNorm'", {Values(kImage)}},
      {"BatchNorm global stats",
       "type: 'BatchNorm' batch_norm_param { use_global_stats: true }",
       {Values(kImage)},
       1,
       0,
       true,
       true},
      {"BatchReindex", "type: 'BatchReindex'", {Values({4, 3, 2}), Labels({4}, 4)}},
      {"Bias", "type: 'Bias' bias_param { " + uniform + " }", {Values(kImage)}},
      {"Bias of two bottoms", "type: 'Bias'", {Values(kImage), Values({3})}},
      {"Clip", "type: 'Clip' clip_param { min: -0.5 max: 0.5 }", {Values(kImage)}},
      {"Concat", "type: 'Concat'", {Values({2, 3, 4}), Values({2, 2, 4})}},
      {"ContrastiveLoss",
       "type: 'ContrastiveLoss'",
       {Values({4, 3}), Values({4, 3}), Labels({4, 1, 1, 1}, 2)}},
      {"Convolution", std::string("type: 'Convolution' ") + kConv, {Values(kImage)}},
      {"Convolution of 16 channels",
       "type: 'Convolution' convolution_param { num_output: 16 kernel_size: 3 pad: 1 "
       "weight_filler { type: 'gaussian' std: 0.1 } }",
       {Values({1, 16, 5, 5})}},
      {"Crop",
       "type: 'Crop' crop_param { axis: 2 offset: 1 }",
       {Values(kImage), Fill{{2, 3, 3, 2}, -1, 1, false, false}}},
      {"Deconvolution", std::string("type: 'Deconvolution' ") + kConv, {Values(kImage)}},
      {"Dropout", "type: 'Dropout' dropout_param { dropout_ratio: 0.3 }", {Values(kImage)}},
      {"ELU", "type: 'ELU' elu_param { alpha: 0.5 }", {Values(kImage, -2, 2)}},
      {"Eltwise SUM",
       "type: 'Eltwise' eltwise_param { coeff: 1 coeff: -2 }",
       {Values(kImage), Values(kImage)}},
      {"Eltwise SUM on the second",
       "type: 'Eltwise' eltwise_param { coeff: 1 coeff: -2 }",
       {Values(kImage), Values(kImage)},
       1,
       1},
      {"Eltwise PROD",
       "type: 'Eltwise' eltwise_param { operation: PROD }",
       {Values(kImage, 0.5, 2), Values(kImage, 0.5, 2)}},
      {"Eltwise MAX",
       "type: 'Eltwise' eltwise_param { operation: MAX }",
       {Values(kImage), Values(kImage)}},
      {"Embed",
       "type: 'Embed' embed_param { input_dim: 5 num_output: 3 "
       "weight_filler { type: 'uniform' } }",
       {Labels({4}, 5)}},
      {"EuclideanLoss", "type: 'EuclideanLoss'", {Values({4, 3}), Values({4, 3})}},
      {"Exp", "type: 'Exp' exp_param { base: 2 scale: 0.5 shift: 0.1 }", {Values(kImage)}},
      {"Filter", "type: 'Filter'", {Values({4, 3}), Labels({4, 1}, 2)}},
      {"Flatten", "type: 'Flatten'", {Values(kImage)}},
      {"HingeLoss", "type: 'HingeLoss'", {Values({4, 5}), Labels({4}, 5)}},
      {"Im2col", "type: 'Im2col' convolution_param { kernel_size: 2 }", {Values(kImage)}},
      {"InfogainLoss",
       "type: 'InfogainLoss'",
       {Values({4, 5}, 0.1, 1), Labels({4}, 5), Fill{{1, 1, 5, 5}, 0, 1, false, false}}},
      {"InnerProduct",
       "type: 'InnerProduct' inner_product_param { num_output: 4 "
       "weight_filler { type: 'gaussian' } bias_filler { type: 'gaussian' } }",
       {Values(kImage)}},
      {"LRN", "type: 'LRN'", {Values(kImage)}},
      {"LSTM",
       "type: 'LSTM' recurrent_param { num_output: 4 "
       "weight_filler { type: 'uniform' min: -0.5 max: 0.5 } }",
       {Values({3, 2, 4}), Labels({3, 2}, 2)}},
      {"LSTMUnit",
       "type: 'LSTMUnit'",
       {Values({1, 2, 3}), Values({1, 2, 12}), Labels({1, 2}, 2)},
       2},
      {"Log", "type: 'Log' log_param { base: 2 scale: 0.5 shift: 0.1 }", {Values(kImage, 0.5, 2)}},
      {"MVN", "type: 'MVN'", {Values(kImage)}},
      {"MultinomialLogisticLoss",
       "type: 'MultinomialLogisticLoss'",
       {Values({4, 5}, 0.1, 1), Labels({4}, 5)}},
      {"PReLU",
       "type: 'PReLU' prelu_param { filler { type: 'uniform' min: -1 max: 1 } }",
       {Values(kImage)}},
      {"Pooling MAX",
       "type: 'Pooling' pooling_param { kernel_size: 3 stride: 1 pad: 1 }",
       {Values(kImage)}},
      {"Pooling AVE",
       "type: 'Pooling' pooling_param { pool: AVE kernel_size: 3 stride: 1 pad: 1 }",
       {Values(kImage)}},
      {"Pooling 2x2",
       "type: 'Pooling' pooling_param { kernel_size: 2 stride: 2 }",
       {Values(kImage)}},
      {"Power", "type: 'Power' power_param { power: 2 scale: 0.5 shift: 0.1 }", {Values(kImage)}},
      {"Power of 1", "type: 'Power' power_param { scale: 0.5 shift: 0.1 }", {Values(kImage)}},
      {"RNN",
       "type: 'RNN' recurrent_param { num_output: 4 "
       "weight_filler { type: 'uniform' min: -0.5 max: 0.5 } }",
       {Values({3, 2, 4}), Labels({3, 2}, 2)}},
      {"ReLU", "type: 'ReLU' relu_param { negative_slope: 0.1 }", {Values(kImage)}},
      {"ReLU, Caffe's engine", "type: 'ReLU' relu_param { engine: CAFFE }", {Values(kImage)}},
      {"Reduction",
       "type: 'Reduction' reduction_param { axis: 1 operation: SUMSQ }",
       {Values(kImage)}},
      {"Reshape", "type: 'Reshape' reshape_param { shape { dim: 0 dim: -1 } }", {Values(kImage)}},
      {"SPP", "type: 'SPP' spp_param { pyramid_height: 2 }", {Values(kImage)}},
      {"Scale", "type: 'Scale' scale_param { bias_term: true " + uniform + " }", {Values(kImage)}},
      {"Scale of two bottoms", "type: 'Scale'", {Values(kImage), Values({3})}},
      {"Sigmoid", "type: 'Sigmoid'", {Values(kImage, -3, 3)}},
      {"SigmoidCrossEntropyLoss",
       "type: 'SigmoidCrossEntropyLoss'",
       {Values({4, 3}), Fill{{4, 3}, 0, 1, false, false}}},
      {"Slice", "type: 'Slice' slice_param { slice_point: 2 }", {Values({2, 4, 3})}, 2},
      {"Softmax", "type: 'Softmax'", {Values(kImage)}},
      {"SoftmaxWithLoss", "type: 'SoftmaxWithLoss'", {Values({4, 5}), Labels({4}, 5)}},
      {"Split", "type: 'Split'", {Values(kImage)}, 2},
      {"Swish", "type: 'Swish' swish_param { beta: 1.5 }", {Values(kImage, -3, 3)}},
      {"TanH", "type: 'TanH'", {Values(kImage, -3, 3)}},
      {"Threshold",
       "type: 'Threshold' threshold_param { threshold: 0.2 }",
       {Values(kImage)},
       1,
       0,
       false},
      {"Tile", "type: 'Tile' tile_param { axis: 1 tiles: 2 }", {Values(kImage)}},
  };
}

// Types no case covers: those that take no bottom or make no top, so nothing can be in place, and
// Python, whose in place is what the user's code makes of it (allowed, as in BVLC).
const std::set<std::string> kWithoutInPlace = {"Data",      "DummyData", "HDF5Data",   "HDF5Output",
                                               "ImageData", "Input",     "MemoryData", "Parameter",
                                               "Python",    "Silence",   "WindowData"};

template <typename Dtype>
void FillBlob(Blob<Dtype>* blob, const Fill& fill, unsigned int seed) {
  FillUniform<Dtype>(blob, seed, Dtype(fill.low), Dtype(fill.high));
  if (!fill.whole) return;
  Dtype* data = blob->mutable_cpu_data();
  for (int i = 0; i < blob->count(); ++i) data[i] = std::floor(data[i]);
}

// What one run leaves: the tops, then every bottom's diff, then every parameter's diff.
template <typename Dtype>
struct Outcome {
  std::vector<std::vector<int>> shapes;
  std::vector<std::vector<Dtype>> values;
  std::vector<std::string> what;
  void Add(const std::string& name, const std::vector<int>& shape, const Dtype* data, int count) {
    what.push_back(name);
    shapes.push_back(shape);
    values.emplace_back(data, data + count);
  }
};

// Runs `test_case` once, with its own tops, or with top[0] the bottom test_case.in_place. Returns
// false, with the error in `refusal`, when setup or forward refuses. `params` are the first run's
// parameters, given to the second.
// A case's layer, its bottoms (filled) and its tops (of their own).
template <typename Dtype>
struct CaseBlobs {
  explicit CaseBlobs(const InPlaceCase& test_case)
      : layer(LayerRegistry<Dtype>::CreateLayer(ParseLayerParam("name: 'l' " + test_case.layer))),
        bottom_blobs(test_case.bottoms.size()),
        top_blobs(test_case.tops) {
    for (size_t i = 0; i < bottom_blobs.size(); ++i) {
      bottom_blobs[i].Reshape(test_case.bottoms[i].shape);
      FillBlob(&bottom_blobs[i], test_case.bottoms[i], 100 + static_cast<unsigned int>(i));
      bottom.push_back(&bottom_blobs[i]);
    }
    for (auto& blob : top_blobs) top.push_back(&blob);
  }
  shared_ptr<Layer<Dtype>> layer;
  std::vector<Blob<Dtype>> bottom_blobs, top_blobs;
  Blobs<Dtype> bottom, top;
};

template <typename Dtype>
bool Run(const InPlaceCase& test_case, bool in_place, vector<shared_ptr<Blob<Dtype>>>* params,
         Outcome<Dtype>* outcome, std::string* refusal) {
  CaseBlobs<Dtype> blobs(test_case);
  Layer<Dtype>* layer = blobs.layer.get();
  Blobs<Dtype>& bottom = blobs.bottom;
  Blobs<Dtype>& top = blobs.top;
  if (in_place) top[0] = bottom[test_case.in_place];
  *refusal = ErrorOf([&] { layer->SetUp(bottom, top); });
  if (!refusal->empty()) return false;
  for (size_t i = 0; i < layer->blobs().size(); ++i) {
    Blob<Dtype>& blob = *layer->blobs()[i];
    if (in_place) {
      blob.CopyFrom(*(*params)[i]);
    } else {
      if (test_case.fill_params) FillUniform<Dtype>(&blob, 300 + i, Dtype(0.5), Dtype(1.5));
      params->push_back(std::make_shared<Blob<Dtype>>(blob.shape()));
      (*params)[i]->CopyFrom(blob);
    }
    caffe_set(blob.count(), Dtype(0), blob.mutable_cpu_diff());
  }
  Caffe::set_random_seed(1701);
  *refusal = ErrorOf([&] { layer->Forward(bottom, top); });
  if (!refusal->empty()) return false;
  for (size_t j = 0; j < top.size(); ++j) {
    outcome->Add("top " + std::to_string(j), top[j]->shape(), top[j]->cpu_data(), top[j]->count());
  }
  if (!test_case.backward) return true;
  std::vector<bool> propagate;
  for (const Fill& fill : test_case.bottoms) propagate.push_back(fill.propagate);
  for (size_t j = 0; j < top.size(); ++j) {
    Blob<Dtype> diff(top[j]->shape());
    FillUniform<Dtype>(&diff, 200 + static_cast<unsigned int>(j), Dtype(-1), Dtype(1));
    caffe_copy(diff.count(), diff.cpu_data(), top[j]->mutable_cpu_diff());
  }
  layer->Backward(top, propagate, bottom);
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (!propagate[i]) continue;
    outcome->Add("bottom " + std::to_string(i) + "'s gradient", bottom[i]->shape(),
                 bottom[i]->cpu_diff(), bottom[i]->count());
  }
  for (size_t i = 0; i < layer->blobs().size(); ++i) {
    const Blob<Dtype>& blob = *layer->blobs()[i];
    outcome->Add("parameter " + std::to_string(i) + "'s gradient", blob.shape(), blob.cpu_diff(),
                 blob.count());
  }
  return true;
}

// The first difference between two outcomes, or "" when they agree within `tolerance` (relative,
// and absolute near zero).
template <typename Dtype>
std::string Difference(const Outcome<Dtype>& expected, const Outcome<Dtype>& actual,
                       double tolerance) {
  for (size_t k = 0; k < expected.values.size(); ++k) {
    if (expected.shapes[k] != actual.shapes[k]) {
      return expected.what[k] + " has another shape in place";
    }
    for (size_t i = 0; i < expected.values[k].size(); ++i) {
      const double want = expected.values[k][i], got = actual.values[k][i];
      if (std::abs(want - got) > tolerance * std::max(1.0, std::abs(want))) {
        return expected.what[k] + " [" + std::to_string(i) + "] is " + std::to_string(got) +
               " in place, " + std::to_string(want) + " with a top of its own";
      }
    }
  }
  return "";
}

}  // namespace

template <typename TypeParam>
class LayerInPlaceTest : public MultiDeviceTest<TypeParam> {};
TYPED_TEST_SUITE(LayerInPlaceTest, TestDtypesAndDevices);

TYPED_TEST(LayerInPlaceTest, InPlaceIsRefusedOrComputesWhatATopOfItsOwnGets) {
  using Dtype = typename TypeParam::Dtype;
  const double tolerance = sizeof(Dtype) == 4 ? 1e-5 : 1e-12;
  for (const InPlaceCase& test_case : Cases()) {
    SCOPED_TRACE(test_case.name);
    vector<shared_ptr<Blob<Dtype>>> params;
    Outcome<Dtype> apart, in_place;
    std::string refusal;
    ASSERT_TRUE(Run<Dtype>(test_case, false, &params, &apart, &refusal)) << refusal;
    if (!Run<Dtype>(test_case, true, &params, &in_place, &refusal)) {
      EXPECT_NE(refusal.find("cannot run in place"), std::string::npos) << refusal;
      EXPECT_NE(refusal.find("layer 'l'"), std::string::npos) << refusal;
      continue;
    }
    EXPECT_EQ(Difference(apart, in_place, tolerance), "");
  }
}

// A backward step that reaches nothing (no bottom's gradient asked for, no parameter learning),
// as every step of a net that needs no backward is under `caffe time`, leaves every gradient
// alone: none is allocated, on the host or the device, only to be ignored. (The same cases, with
// tops of their own.)
TYPED_TEST(LayerInPlaceTest, ABackwardThatReachesNothingTouchesNoGradient) {
  using Dtype = typename TypeParam::Dtype;
  for (const InPlaceCase& test_case : Cases()) {
    if (!test_case.backward) continue;
    SCOPED_TRACE(test_case.name);
    CaseBlobs<Dtype> blobs(test_case);
    Layer<Dtype>* layer = blobs.layer.get();
    const Blobs<Dtype>& bottom = blobs.bottom;
    const Blobs<Dtype>& top = blobs.top;
    layer->SetUp(bottom, top);
    for (size_t i = 0; i < layer->blobs().size(); ++i) layer->set_param_propagate_down(i, false);
    Caffe::set_random_seed(1701);
    layer->Forward(bottom, top);
    // A loss layer's top holds its loss weight in its diff from setup on: that one is in use.
    std::vector<const Blob<Dtype>*> untouched(bottom.begin(), bottom.end());
    for (const Blob<Dtype>* blob : top) {
      if (blob->diff()->head() == SyncedMemory::UNINITIALIZED) untouched.push_back(blob);
    }
    layer->Backward(top, std::vector<bool>(bottom.size(), false), bottom);
    for (size_t k = 0; k < untouched.size(); ++k) {
      EXPECT_EQ(untouched[k]->diff()->head(), SyncedMemory::UNINITIALIZED)
          << (k < bottom.size() ? "bottom " + std::to_string(k)
                                : "a top (" + std::to_string(k - bottom.size()) + "th untouched)")
          << "'s gradient was touched";
    }
  }
}

TYPED_TEST(LayerInPlaceTest, EveryLayerTypeWithBottomsAndTopsHasACase) {
  std::set<std::string> covered = kWithoutInPlace;
  for (const InPlaceCase& test_case : Cases()) {
    const std::string& text = test_case.layer;
    const size_t begin = text.find('\'') + 1;
    covered.insert(text.substr(begin, text.find('\'', begin) - begin));
  }
  for (const std::string& type : LayerRegistry<typename TypeParam::Dtype>::LayerTypeList()) {
    EXPECT_EQ(covered.count(type), 1u) << type << " has no in-place case";
  }
}

}  // namespace caffe
