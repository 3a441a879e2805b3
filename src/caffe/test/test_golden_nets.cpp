// Our nets against BVLC Caffe's own numbers: for each folder of ../shared/fixtures/golden, load
// BVLC's net (TEST phase) and weights, feed BVLC's inputs, and compare every forward blob, every
// backward diff and every parameter diff (util/reference_check, as `caffe compare` does). The bar:
// max |ours - BVLC| <= 1e-4 * max |BVLC| for each blob, unless a looser bound is listed (with the
// reason) in kLooserTolerances. Each folder runs on both CPU engines for Convolution: Caffe's own
// (im2col + GEMM, BVLC's arithmetic) and oneDNN's (the default where built), whose different
// summation order changes low bits; and, where a GPU exists, in GPU mode with the default engines
// there (cuDNN where built), which sum in other orders again, with cuDNN's convolution
// algorithms from its heuristics (gpu) and chosen by timing them (gpu_timed); and in bf16
// arithmetic on the CPU (bf16), at the tolerance bf16's precision allows.
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "caffe/diagnostics/reference_check.hpp"
#include "caffe/kernels/bf16_gemm.hpp"
#include "caffe/layer_engine.hpp"
#include "caffe/net.hpp"
#include "caffe/net/layer_precision.hpp"
#include "caffe/test/scoped_env.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

constexpr double kRelativeTolerance = 1e-4;
// In bf16 (`-precision bf16`: Convolution and InnerProduct with their factors rounded to 8
// significant bits, u = 2^-8) a layer's output is off by up to 2u of sum |x||w| (test_bf16_math
// checks that bound per element), which the nets' cancellations make up to several times u of
// the blob's largest value, and each layer passes on its inputs' errors besides: over LeNet's
// and CIFAR-10 quick's 4-5 matrix layers forward and as many backward, 8 x 2u = 2^-4 bounds it.
constexpr double kBf16RelativeTolerance = 1.0 / 16;

// caffenet_small on oneDNN: every forward blob agrees at 1e-4, but pool5 (MAX over ReLU outputs)
// has windows whose candidates differ by less than the engines' low-bit differences (conv5's
// outputs differ by up to 3.6e-7 from BVLC's on oneDNN, 1.2e-7 on Caffe's engine), so some windows
// pick another maximum and send their gradient to a neighbouring position. Every diff upstream of
// pool5 then differs at those positions (relative 0.001-0.57), and only its scale is checked here.
// The same engine's layer is checked against Caffe's on the same inputs in
// test_dnnl_convolution_layer, and this folder passes at 1e-4 on Caffe's engine.
std::map<std::string, double> CaffenetSmallOnDnnl() {
  std::map<std::string, double> tolerances;
  for (const char* blob :
       {"conv1", "pool1", "norm1", "conv2", "pool2", "norm2", "conv3", "conv4", "conv5"}) {
    tolerances[std::string("backward/") + blob] = 1;
  }
  for (const char* layer : {"conv1", "conv2", "conv3", "conv4", "conv5"}) {
    for (const char* index : {"/0", "/1"}) {
      tolerances[std::string("param_diff/") + layer + index] = 1;
    }
  }
  return tolerances;
}

// googlenet_small on oneDNN: the same with pool2 (MAX over conv2/norm2), once conv2/3x3 runs
// Winograd's algorithm (CAFFE_WINOGRAD, the default; its outputs within 1e-6 of the largest, as
// the direct algorithm's are, but other low bits): every forward blob agrees at 1e-4, and the
// diffs upstream of pool2 differ where a window's maximum moved (relative 0.005-0.11).
std::map<std::string, double> GooglenetSmallOnDnnl() {
  std::map<std::string, double> tolerances;
  for (const char* blob : {"conv1/7x7_s2", "pool1/3x3_s2", "pool1/norm1", "conv2/3x3_reduce",
                           "conv2/3x3", "conv2/norm2"}) {
    tolerances[std::string("backward/") + blob] = 1;
  }
  for (const char* layer : {"conv1/7x7_s2", "conv2/3x3_reduce", "conv2/3x3"}) {
    for (const char* index : {"/0", "/1"}) {
      tolerances[std::string("param_diff/") + layer + index] = 1;
    }
  }
  return tolerances;
}

// (folder, engine) -> (blob comparison -> tolerance), each with its reason above.
// The GPU's convolutions (cuDNN's algorithms) differ from BVLC's in low bits as oneDNN's do, with
// the same effect on pool5's near-ties.
const std::map<std::pair<std::string, std::string>, std::map<std::string, double>>
    kLooserTolerances = {{{"caffenet_small", "dnnl"}, CaffenetSmallOnDnnl()},
                         {{"caffenet_small", "gpu"}, CaffenetSmallOnDnnl()},
                         {{"caffenet_small", "gpu_timed"}, CaffenetSmallOnDnnl()},
                         {{"caffenet_small", "bf16"}, CaffenetSmallOnDnnl()},
                         {{"googlenet_small", "dnnl"}, GooglenetSmallOnDnnl()}};

// In bf16 the forward blobs are held to kBf16RelativeTolerance of their largest value. A
// gradient is not: where the rounding moves a value across a ReLU's 0 or changes a max-pooling
// window's maximum, that element's gradient differs wholly (up to 0.7 of the largest, LeNet's
// ip1), which a per-element bound cannot express. Gradients are held in the 2-norm instead, where
// such elements weigh by their share: 1/8 for LeNet and CIFAR-10 quick (measured 0.10 and 0.06);
// 1/2 for the nets with many more ReLU and max-pooling decisions on each path (GoogLeNet's
// inception_4e 0.43, the layer zoo's 0.22, CaffeNet-MSRA's 0.16). caffenet_small's gradients
// are decided by pool5's near-ties already in fp32 (CaffenetSmallOnDnnl), so in bf16 they are
// whole others (norm 1.0-1.2): only their scale is checked, within 2.
double Bf16GradientTolerance(const std::string& net) {
  if (net == "lenet" || net == "cifar10_quick") return 1.0 / 8;
  return net == "caffenet_small" ? 2.0 : 0.5;
}

// Forward blobs that take discrete values (a Threshold's 0 or 1, an ArgMax's index): an input
// the rounding moves across the threshold, or a near-tie it reorders, changes an element wholly,
// as with gradients; they are held in the 2-norm too (the layer zoo's: 0.03 and 0.08).
bool Discrete(const std::string& what) {
  return what == "forward/thr" || what.rfind("forward/amax", 0) == 0;
}

void CheckBf16(const std::string& net, const BlobComparison& comparison) {
  if (comparison.what.rfind("forward/", 0) == 0 && !Discrete(comparison.what)) {
    EXPECT_LE(comparison.relative(), kBf16RelativeTolerance)
        << comparison.what << " drifted: max |ours - BVLC| = " << comparison.max_abs_diff
        << ", max |BVLC| = " << comparison.max_abs_reference;
  } else {
    EXPECT_LE(comparison.norm_relative(), Bf16GradientTolerance(net))
        << comparison.what << " drifted: |ours - BVLC| / |BVLC| = " << comparison.norm_relative();
  }
}

}  // namespace

class GoldenNetTest : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {
 protected:
  ~GoldenNetTest() override {
    Caffe::set_mode(Caffe::CPU);
    SetPrecisionFlag("");
  }
};

TEST_P(GoldenNetTest, ForwardBackwardAndParamDiffsMatchBvlc) {
  CAFFE_REQUIRE_SHARED_DIR();
  const auto& [name, engine] = GetParam();
  if (engine == "dnnl" && !DnnlBuilt()) GTEST_SKIP() << "this build has no oneDNN (libdnnl-dev)";
  const std::string folder = SharedDir() + "/fixtures/golden/" + name;
  // A GPU machine gets the fixtures that fit its bundle (scripts/gpu_prepare.sh).
  if (!std::ifstream(folder + "/net.prototxt")) GTEST_SKIP() << folder << " is not there";
  // The user's CAFFE_CPU_ENGINE or CAFFE_CUDNN_ALGO comes back afterwards.
  std::optional<ScopedEnv> engine_env;
  if (engine.rfind("gpu", 0) == 0) {
    if (!Caffe::GpuAvailable()) GTEST_SKIP() << "no GPU available on this machine";
    Caffe::SetDevice(0);
    Caffe::set_mode(Caffe::GPU);
    // gpu_timed: cuDNN's convolution algorithms chosen by timing them, read as layers are set up.
    engine_env.emplace("CAFFE_CUDNN_ALGO", engine == "gpu_timed" ? "time" : "heuristic");
  } else if (engine == "bf16") {
    if (!CpuHasBf16Math()) GTEST_SKIP() << "no bf16 arithmetic here: " << CpuBf16Explanation();
    SetPrecisionFlag("bf16");  // cleared by the fixture
    Caffe::set_mode(Caffe::CPU);
  } else {
    engine_env.emplace("CAFFE_CPU_ENGINE", engine.c_str());  // read when the net makes its layers
    Caffe::set_mode(Caffe::CPU);
  }
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
    double tolerance = engine == "bf16" ? kBf16RelativeTolerance : kRelativeTolerance;
    auto looser = kLooserTolerances.find({name, engine});
    if (looser != kLooserTolerances.end() && looser->second.count(comparison.what)) {
      tolerance = looser->second.at(comparison.what);
    }
    EXPECT_TRUE(comparison.shapes_match) << comparison.what << ": shape differs from BVLC's";
    if (engine == "bf16") {
      CheckBf16(name, comparison);
      continue;
    }
    EXPECT_LE(comparison.max_abs_diff, tolerance * comparison.max_abs_reference)
        << comparison.what << " drifted: max |ours - BVLC| = " << comparison.max_abs_diff
        << ", max |BVLC| = " << comparison.max_abs_reference << " (relative "
        << comparison.relative() << ", tolerance " << tolerance << ")";
  }
  EXPECT_GE(compared, static_cast<int>(net.blobs().size()));
}

INSTANTIATE_TEST_SUITE_P(
    Bvlc, GoldenNetTest,
    ::testing::Combine(::testing::Values("lenet", "cifar10_quick", "caffenet_small",
                                         "caffenet_small_msra", "googlenet_small", "layerzoo"),
                       ::testing::Values("caffe", "dnnl", "gpu", "gpu_timed", "bf16")),
    [](const ::testing::TestParamInfo<std::tuple<std::string, std::string>>& info) {
      return std::get<0>(info.param) + "_" + std::get<1>(info.param);
    });

}  // namespace caffe
