// Activation gradients sharing memory (net/diff_sharing.hpp): which blobs may share, the plan of
// buffers, and a shared net that trains exactly as one with a diff per blob.
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "caffe/io/io.hpp"
#include "caffe/net/diff_sharing.hpp"
#include "caffe/test/scoped_env.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

DiffSpan Span(size_t bytes, int first, int last, bool shareable = true) {
  DiffSpan span;
  span.bytes = bytes;
  span.first = first;
  span.last = last;
  span.shareable = shareable;
  return span;
}

// Two residual blocks of one shape on oneDNN's convolutions (BatchNorm, Scale and ReLU between),
// global pooling, a classifier with its loss and accuracy: many blobs of one size whose
// gradients live at different times, in-place chains, fused groups, Split layers, and blobs
// whose gradients nobody writes (the data, the label, the accuracy's input).
const char kResidualNet[] = R"(
  name: "Residual"
  state { phase: TRAIN }
  layer { name: "data" type: "Input" top: "data" top: "label"
    input_param { shape { dim: 4 dim: 16 dim: 6 dim: 6 } shape { dim: 4 } } }
  layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
    convolution_param { num_output: 16 kernel_size: 3 pad: 1 bias_term: false engine: MKLDNN
                        weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1" }
  layer { name: "scale1" type: "Scale" bottom: "conv1" top: "conv1" scale_param { bias_term: true } }
  layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
  layer { name: "conv2" type: "Convolution" bottom: "conv1" top: "conv2"
    convolution_param { num_output: 16 kernel_size: 3 pad: 1 bias_term: false engine: MKLDNN
                        weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "bn2" type: "BatchNorm" bottom: "conv2" top: "conv2" }
  layer { name: "scale2" type: "Scale" bottom: "conv2" top: "conv2" scale_param { bias_term: true } }
  layer { name: "sum1" type: "Eltwise" bottom: "conv2" bottom: "data" top: "sum1" }
  layer { name: "relu_sum1" type: "ReLU" bottom: "sum1" top: "sum1" }
  layer { name: "conv3" type: "Convolution" bottom: "sum1" top: "conv3"
    convolution_param { num_output: 16 kernel_size: 3 pad: 1 bias_term: false engine: MKLDNN
                        weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "bn3" type: "BatchNorm" bottom: "conv3" top: "conv3" }
  layer { name: "scale3" type: "Scale" bottom: "conv3" top: "conv3" scale_param { bias_term: true } }
  layer { name: "relu3" type: "ReLU" bottom: "conv3" top: "conv3" }
  layer { name: "conv4" type: "Convolution" bottom: "conv3" top: "conv4"
    convolution_param { num_output: 16 kernel_size: 1 bias_term: false
                        weight_filler { type: "gaussian" std: 0.1 } } }
  layer { name: "bn4" type: "BatchNorm" bottom: "conv4" top: "conv4" }
  layer { name: "scale4" type: "Scale" bottom: "conv4" top: "conv4" scale_param { bias_term: true } }
  layer { name: "sum2" type: "Eltwise" bottom: "conv4" bottom: "sum1" top: "sum2" }
  layer { name: "relu_sum2" type: "ReLU" bottom: "sum2" top: "sum2" }
  layer { name: "pool" type: "Pooling" bottom: "sum2" top: "pool"
    pooling_param { pool: AVE global_pooling: true } }
  layer { name: "fc" type: "InnerProduct" bottom: "pool" top: "fc"
    inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.3 } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "fc" bottom: "label" top: "loss" }
  layer { name: "accuracy" type: "Accuracy" bottom: "fc" bottom: "label" top: "accuracy" }
)";

// `engine`: the convolutions' engine where the net names oneDNN's.
std::unique_ptr<Net<float>> MakeNet(const char* fusion, const std::string& engine = "MKLDNN") {
  ScopedEnv fusion_env("CAFFE_FUSION", fusion);
  std::string text = kResidualNet;
  for (size_t at = text.find("MKLDNN"); at != std::string::npos; at = text.find("MKLDNN", at)) {
    text.replace(at, 6, engine);
    at += engine.size();
  }
  NetParameter param;
  ParseProtoFromText(text, "diff sharing test net", &param);
  Caffe::set_random_seed(1701);  // the same weights in every net
  return std::make_unique<Net<float>>(param);
}

void FeedBatch(Net<float>* net, int iteration) {
  FillGaussian(net->blob_by_name("data").get(), 100 + iteration, 1.5f);
  float* label = net->blob_by_name("label")->mutable_cpu_data();
  for (int n = 0; n < 4; ++n) label[n] = static_cast<float>((n + iteration) % 5);
}

// The distinct diff buffers of the net's activations.
size_t DiffBuffers(const Net<float>& net) {
  std::set<const SyncedMemory*> buffers;
  for (const auto& blob : net.blobs()) buffers.insert(blob->diff().get());
  return buffers.size();
}

// Three training steps with shared gradients give the weights, parameter gradients and losses of
// the same net with a diff per blob, to the bit; the blobs that keep their own diff show the
// same gradient too.
void ExpectSharedNetTrainsAsOneWithADiffPerBlob(const char* fusion, const std::string& engine) {
  std::unique_ptr<Net<float>> own = MakeNet(fusion, engine);
  std::unique_ptr<Net<float>> shared = MakeNet(fusion, engine);
  const size_t buffers_before = DiffBuffers(*shared);
  const DiffSharing sharing = ShareActivationDiffs(shared.get());
  EXPECT_LT(DiffBuffers(*shared), buffers_before);
  EXPECT_LT(sharing.bytes_after, sharing.bytes_before);
  std::vector<bool> owns_diff(shared->blobs().size());
  for (size_t b = 0; b < owns_diff.size(); ++b) {
    owns_diff[b] = true;
    for (size_t other = 0; other < owns_diff.size(); ++other) {
      if (other != b && shared->blobs()[other]->diff() == shared->blobs()[b]->diff()) {
        owns_diff[b] = false;
      }
    }
  }
  for (int iteration = 0; iteration < 3; ++iteration) {
    FeedBatch(own.get(), iteration);
    FeedBatch(shared.get(), iteration);
    own->ClearParamDiffs();
    shared->ClearParamDiffs();
    float own_loss = 0, shared_loss = 0;
    own->Forward(&own_loss);
    own->Backward();
    shared->Forward(&shared_loss);
    shared->Backward();
    EXPECT_EQ(own_loss, shared_loss) << "iteration " << iteration;
    for (size_t l = 0; l < own->layers().size(); ++l) {
      const auto& want = own->layers()[l]->blobs();
      const auto& got = shared->layers()[l]->blobs();
      for (size_t p = 0; p < want.size(); ++p) {
        for (int i = 0; i < want[p]->count(); ++i) {
          ASSERT_EQ(want[p]->cpu_diff()[i], got[p]->cpu_diff()[i])
              << own->layer_names()[l] << " blob " << p << " diff at " << i << ", iteration "
              << iteration;
        }
      }
    }
    for (size_t b = 0; b < owns_diff.size(); ++b) {
      if (!owns_diff[b]) continue;
      const Blob<float>& want = *own->blobs()[b];
      const Blob<float>& got = *shared->blobs()[b];
      for (int i = 0; i < want.count(); ++i) {
        ASSERT_EQ(want.cpu_diff()[i], got.cpu_diff()[i])
            << own->blob_names()[b] << " diff at " << i << ", iteration " << iteration;
      }
    }
    own->Update();
    shared->Update();
  }
}

}  // namespace

TEST(PlanDiffSharingTest, SpansApartOfOneSizeShareTheLatestOnesBuffer) {
  const std::vector<int> owner = PlanDiffSharing({Span(64, 0, 2), Span(64, 3, 5)});
  EXPECT_EQ(std::vector<int>({1, 1}), owner);
}

TEST(PlanDiffSharingTest, SpansMeetingInOneLayerDoNotShare) {
  // Layer 2's backward reads the later blob's gradient while it writes the earlier one's.
  EXPECT_EQ(std::vector<int>({0, 1}), PlanDiffSharing({Span(64, 0, 2), Span(64, 2, 5)}));
}

TEST(PlanDiffSharingTest, SpansOfOtherSizesDoNotShare) {
  EXPECT_EQ(std::vector<int>({0, 1}), PlanDiffSharing({Span(64, 0, 2), Span(128, 3, 5)}));
}

TEST(PlanDiffSharingTest, SpansThatMayNotShareKeepTheirOwnAndLendNone) {
  EXPECT_EQ(std::vector<int>({0, 1, 2}),
            PlanDiffSharing({Span(64, 0, 1), Span(64, 2, 3, false), Span(64, 4, 5, false)}));
}

TEST(PlanDiffSharingTest, AChainNeedsTwoBuffers) {
  // Blob i is made by layer i and read by layer i + 1: neighbours overlap, the rest alternate.
  std::vector<DiffSpan> spans;
  for (int i = 0; i < 6; ++i) spans.push_back(Span(64, i, i + 1));
  const std::vector<int> owner = PlanDiffSharing(spans);
  EXPECT_EQ(std::vector<int>({4, 5, 4, 5, 4, 5}), owner);
}

TEST(DiffSpansTest, GradientsNobodyWritesInEveryBackwardAreNotShared) {
  Caffe::set_mode(Caffe::CPU);
  std::unique_ptr<Net<float>> net = MakeNet("1");
  const std::vector<DiffSpan> spans = DiffSpans(*net);
  auto shareable = [&](const std::string& name) {
    for (size_t b = 0; b < spans.size(); ++b) {
      if (net->blob_names()[b] == name) return spans[b].shareable;
    }
    ADD_FAILURE() << "no blob " << name;
    return false;
  };
  for (const char* name : {"conv1", "conv2", "sum1", "conv3", "conv4", "sum2", "pool"}) {
    EXPECT_TRUE(shareable(name)) << name;
  }
  // No gradient reaches the input; the loss's diff holds its weight; the accuracy takes none.
  for (const char* name : {"data", "label", "loss", "accuracy", "fc_fc_0_split_1"}) {
    EXPECT_FALSE(shareable(name)) << name;
  }
}

// Reshape and Flatten make their top's diff an alias of their bottom's: all three use it.
TEST(DiffSpansTest, ADiffThatIsAnotherBlobsTooIsNotShared) {
  Caffe::set_mode(Caffe::CPU);
  NetParameter param;
  ParseProtoFromText(R"(
    name: "Views"
    layer { name: "data" type: "Input" top: "data" top: "target"
      input_param { shape { dim: 4 dim: 6 } shape { dim: 4 dim: 6 } } }
    layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
      inner_product_param { num_output: 6 } }
    layer { name: "view" type: "Reshape" bottom: "ip1" top: "view"
      reshape_param { shape { dim: 0 dim: 2 dim: 3 } } }
    layer { name: "flat" type: "Flatten" bottom: "view" top: "flat" }
    layer { name: "ip2" type: "InnerProduct" bottom: "flat" top: "ip2"
      inner_product_param { num_output: 6 } }
    layer { name: "ip3" type: "InnerProduct" bottom: "ip2" top: "ip3"
      inner_product_param { num_output: 6 } }
    layer { name: "loss" type: "EuclideanLoss" bottom: "ip3" bottom: "target" top: "loss" }
  )",
                     "views net", &param);
  Net<float> net(param);
  const std::vector<DiffSpan> spans = DiffSpans(net);
  for (size_t b = 0; b < spans.size(); ++b) {
    const std::string& name = net.blob_names()[b];
    const bool alias = name == "ip1" || name == "view" || name == "flat";
    if (alias) {
      EXPECT_FALSE(spans[b].shareable) << name;
    } else if (name == "ip2") {
      EXPECT_TRUE(spans[b].shareable) << name;
    }
  }
}

class DiffSharingTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { Caffe::set_mode(Caffe::CPU); }
  const char* fusion() const { return GetParam(); }
};

INSTANTIATE_TEST_SUITE_P(Fusion, DiffSharingTest, ::testing::Values("1", "0"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param[0] == '1' ? "Fused" : "Apart");
                         });

TEST_P(DiffSharingTest, ASharedNetTrainsAsOneWithADiffPerBlob) {
  ExpectSharedNetTrainsAsOneWithADiffPerBlob(fusion(), "MKLDNN");
}

TEST_P(DiffSharingTest, ASharedNetTrainsOnTheGpuAsOneWithADiffPerBlob) {
  if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
  Caffe::set_mode(Caffe::GPU);
  ExpectSharedNetTrainsAsOneWithADiffPerBlob(fusion(), "DEFAULT");
}

}  // namespace caffe
