// Our nets against BVLC Caffe's own numbers: for each folder of ../shared/fixtures/golden, load
// BVLC's net (TEST phase) and weights, feed BVLC's inputs, and compare every forward blob, every
// backward diff and every parameter diff (util/reference_check, as `caffe compare` does). The bar:
// max |ours - BVLC| <= 1e-4 * max |BVLC| for each blob, unless a looser bound is listed (with the
// reason) in kLooserTolerances.
#include <map>
#include <string>
#include <vector>

#include "caffe/net.hpp"
#include "caffe/test/test_caffe_main.hpp"
#include "caffe/util/reference_check.hpp"

namespace caffe {

namespace {

constexpr double kRelativeTolerance = 1e-4;

// (folder, blob comparison) -> tolerance, each with its reason.
const std::map<std::pair<std::string, std::string>, double> kLooserTolerances = {};

}  // namespace

class GoldenNetTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenNetTest, ForwardBackwardAndParamDiffsMatchBvlc) {
  CAFFE_REQUIRE_SHARED_DIR();
  const std::string name = GetParam();
  const std::string folder = SharedDir() + "/fixtures/golden/" + name;
  Caffe::set_mode(Caffe::CPU);
  Net<float> net(folder + "/net.prototxt", TEST);
  net.CopyTrainedLayersFrom(folder + "/weights.caffemodel");
  ReferenceData reference(folder + "/blobs.h5");
  // The same graph: BVLC's blob and layer lists (split layers included) equal ours.
  ASSERT_EQ(reference.ListAttribute("blob_names"), net.blob_names());
  ASSERT_EQ(reference.ListAttribute("layer_names"), net.layer_names());

  const std::vector<BlobComparison> comparisons = CompareNetWithReference(&net, reference);
  int compared = 0;
  for (const BlobComparison& comparison : comparisons) {
    // Every blob has forward data; diffs exist where the net has a loss.
    EXPECT_TRUE(comparison.present || comparison.what.rfind("forward/", 0) != 0)
        << comparison.what << " is missing from the reference";
    if (!comparison.present) continue;
    ++compared;
    auto looser = kLooserTolerances.find({name, comparison.what});
    const double tolerance = looser == kLooserTolerances.end() ? kRelativeTolerance : looser->second;
    EXPECT_TRUE(comparison.shapes_match) << comparison.what << ": shape differs from BVLC's";
    EXPECT_LE(comparison.max_abs_diff, tolerance * comparison.max_abs_reference)
        << comparison.what << " drifted: max |ours - BVLC| = " << comparison.max_abs_diff
        << ", max |BVLC| = " << comparison.max_abs_reference << " (relative "
        << comparison.relative() << ", tolerance " << tolerance << ")";
  }
  EXPECT_GE(compared, static_cast<int>(net.blobs().size()));
}

INSTANTIATE_TEST_SUITE_P(Bvlc, GoldenNetTest,
                         ::testing::Values("lenet", "cifar10_quick", "caffenet_small",
                                           "caffenet_small_msra", "googlenet_small", "layerzoo"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace caffe
