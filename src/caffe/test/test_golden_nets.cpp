// Our nets against BVLC Caffe's own numbers: for each golden fixture, load BVLC's net and weights,
// feed BVLC's inputs, and compare every forward blob, every backward diff and every param diff.
// The bar: max |ours - BVLC| <= 1e-4 * max |BVLC| for each blob.
#include <string>
#include <vector>

#include "caffe/net.hpp"
#include "caffe/test/golden_reference.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

constexpr double kRelativeTolerance = 1e-4;

void ExpectWithin(const BlobComparison& comparison) {
  EXPECT_TRUE(comparison.shapes_match) << comparison.what << ": shape differs from BVLC's";
  EXPECT_LE(comparison.max_abs_diff, kRelativeTolerance * comparison.max_abs_reference)
      << comparison.what << " drifted: max |ours - BVLC| = " << comparison.max_abs_diff
      << ", max |BVLC| = " << comparison.max_abs_reference;
}

void CheckGoldenNet(const std::string& name) {
  const std::string folder = SharedDir() + "/fixtures/golden/" + name;
  Caffe::set_mode(Caffe::CPU);
  Net<float> net(folder + "/net.prototxt", TEST);
  net.CopyTrainedLayersFrom(folder + "/weights.caffemodel");
  GoldenReference reference(folder);

  // Same graph: BVLC's blob and layer lists (split layers included) equal ours.
  ASSERT_EQ(reference.ListAttribute("blob_names"), net.blob_names());
  ASSERT_EQ(reference.ListAttribute("layer_names"), net.layer_names());

  for (int index : net.input_blob_indices()) {
    const std::string& blob_name = net.blob_names()[index];
    Blob<float> input;
    reference.Load("input", blob_name, &input);
    ASSERT_EQ(input.shape(), net.blobs()[index]->shape()) << "input " << blob_name;
    net.blobs()[index]->CopyFrom(input);
  }
  net.Forward();
  for (size_t i = 0; i < net.blobs().size(); ++i) {
    const Blob<float>& blob = *net.blobs()[i];
    ExpectWithin(reference.Compare("forward", net.blob_names()[i], blob.shape(), blob.cpu_data()));
  }
  if (!reference.HasLoss()) return;

  net.Backward();
  for (size_t i = 0; i < net.blobs().size(); ++i) {
    const Blob<float>& blob = *net.blobs()[i];
    ExpectWithin(
        reference.Compare("backward", net.blob_names()[i], blob.shape(), blob.cpu_diff()));
  }
  for (size_t layer_id = 0; layer_id < net.layers().size(); ++layer_id) {
    const auto& params = net.layers()[layer_id]->blobs();
    for (size_t j = 0; j < params.size(); ++j) {
      // The fixture encodes the layer name, then adds "/<index>".
      const std::string index = std::to_string(j);
      ExpectWithin(reference.CompareDataset(
          "param_diff/" + GoldenReference::Encode(net.layer_names()[layer_id]) + "/" + index,
          "param_diff/" + net.layer_names()[layer_id] + "/" + index, params[j]->shape(),
          params[j]->cpu_diff()));
    }
  }
}

}  // namespace

class GoldenNetTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenNetTest, ForwardBackwardAndParamDiffsMatchBvlc) {
  CAFFE_REQUIRE_SHARED_DIR();
  CheckGoldenNet(GetParam());
}

INSTANTIATE_TEST_SUITE_P(CoreLayers, GoldenNetTest,
                         ::testing::Values("lenet", "cifar10_quick", "caffenet_small_msra",
                                           "googlenet_small"));

}  // namespace caffe
