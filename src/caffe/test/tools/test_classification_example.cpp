// examples/cpp_classification's classification.bin, run as a program on a small net written here
// (Input 3x4x5 -> InnerProduct 6 -> Softmax) with its weights, a mean file, six labels and PNG
// images: it prints BVLC's "Prediction for" header and the five most probable labels with the
// probabilities the net gives for the image less the mean's per-channel averages (computed here
// by hand from the pixels), resizes images of another size, converts colour for a gray net, and
// gives one-line errors for bad input. Skips where the build cannot read images.
#include <algorithm>
#include <cmath>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "caffe/io/image_io.hpp"
#include "caffe/io/io.hpp"
#include "caffe/net.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"
#include "caffe/test/tool_test_util.hpp"

namespace caffe {
namespace {

constexpr int kHeight = 4, kWidth = 5, kLabels = 6;
const char* const kLabelNames[kLabels] = {
    "n01 tabby, tabby cat", "n02 dog", "n03 car", "n04 boat", "n05 kite", "n06 owl"};

std::string Deploy(int channels) {
  return "name: 'tiny' layer { name: 'data' type: 'Input' top: 'data' input_param { shape { "
         "dim: 1 dim: " +
         std::to_string(channels) +
         " dim: 4 dim: 5 } } } "
         "layer { name: 'ip' type: 'InnerProduct' bottom: 'data' top: 'ip' "
         "inner_product_param { num_output: 6 } } "
         "layer { name: 'prob' type: 'Softmax' bottom: 'ip' top: 'prob' }";
}

// Pixel (c, h, w) of the test images: spread over 0..255.
uint8_t Pixel(int c, int h, int w, int seed) { return (37 * c + 53 * h + 29 * w + seed) % 256; }

class ClassificationExampleTest : public ::testing::Test {
 protected:
  ClassificationExampleTest() : dir_(MakeTempDir("caffe_test_classification")) {}

  void SetUp() override {
    if (!ImageSupportAvailable()) GTEST_SKIP() << "reading images needs " << ImageSupportProblem();
  }

  std::string Path(const std::string& name) const { return dir_.path() + "/" + name; }

  // deploy.prototxt and weights.caffemodel for a net of `channels`; weights W[k][j] and biases
  // small enough that the probabilities stay apart.
  void WriteNet(int channels) {
    WriteWholeFile(Path("deploy.prototxt"), Deploy(channels));
    NetParameter param;
    ParseProtoFromText(Deploy(channels), "deploy", &param);
    Net<float> net(param);
    weights_.assign(kLabels, std::vector<double>(channels * kHeight * kWidth));
    Blob<float>& weight = *net.layer_by_name("ip")->blobs()[0];
    Blob<float>& bias = *net.layer_by_name("ip")->blobs()[1];
    for (int k = 0; k < kLabels; ++k) {
      for (size_t j = 0; j < weights_[k].size(); ++j) {
        weights_[k][j] = 0.002 * std::sin(1.7 * k + 0.31 * j);
        weight.mutable_cpu_data()[k * weights_[k].size() + j] = weights_[k][j];
      }
      biases_.push_back(0.1 * k - 0.2);
      bias.mutable_cpu_data()[k] = biases_[k];
    }
    NetParameter trained;
    net.ToProto(&trained);
    WriteProtoToBinaryFile(trained, Path("weights.caffemodel"));
  }

  // A 1 x channels x 2 x 2 mean whose channel c averages to means[c].
  void WriteMean(const std::vector<double>& means) {
    BlobProto mean;
    for (int dim : {1, static_cast<int>(means.size()), 2, 2}) mean.mutable_shape()->add_dim(dim);
    for (double value : means) {
      for (double spread : {-3.0, 5.0, 1.0, -3.0}) mean.add_data(value + spread);
    }
    WriteProtoToBinaryFile(mean, Path("mean.binaryproto"));
  }

  void WriteLabels(int count) {
    std::string text;
    for (int k = 0; k < count; ++k) text += std::string(kLabelNames[k]) + "\n";
    WriteWholeFile(Path("labels.txt"), text);
  }

  // A 3-channel PNG of height x width pixels; returns its values as (c, h, w) bytes.
  std::string WriteImage(const std::string& name, int height, int width) {
    Datum datum;
    datum.set_channels(3);
    datum.set_height(height);
    datum.set_width(width);
    std::string pixels;
    for (int c = 0; c < 3; ++c) {
      for (int h = 0; h < height; ++h) {
        for (int w = 0; w < width; ++w) pixels.push_back(static_cast<char>(Pixel(c, h, w, 11)));
      }
    }
    datum.set_data(pixels);
    WriteDatumToImage(datum, Path(name));
    return pixels;
  }

  // The (label, probability) pairs the net gives for `pixels` (c, h, w bytes of the net's size)
  // less `means`, most probable first, the first five.
  std::vector<std::pair<std::string, double>> Expected(const std::string& pixels,
                                                       const std::vector<double>& means) {
    const int spatial = kHeight * kWidth;
    std::vector<double> logits(kLabels);
    double total = 0;
    for (int k = 0; k < kLabels; ++k) {
      logits[k] = biases_[k];
      for (size_t j = 0; j < weights_[k].size(); ++j) {
        logits[k] += weights_[k][j] * (static_cast<uint8_t>(pixels[j]) - means[j / spatial]);
      }
      total += std::exp(logits[k]);
    }
    std::vector<std::pair<std::string, double>> ranked;
    for (int k = 0; k < kLabels; ++k)
      ranked.emplace_back(kLabelNames[k], std::exp(logits[k]) / total);
    std::sort(ranked.begin(), ranked.end(),
              [](const auto& a, const auto& b) { return a.second > b.second; });
    ranked.resize(5);
    return ranked;
  }

  ToolResult Run(const std::vector<std::string>& args) {
    return RunProgram(BuildDir() + "/examples/cpp_classification/classification.bin",
                      "classification", args, dir_.path());
  }

  ToolResult Classify(const std::string& image) {
    return Run({Path("deploy.prototxt"), Path("weights.caffemodel"), Path("mean.binaryproto"),
                Path("labels.txt"), Path(image)});
  }

  // Checks the header and the prediction lines against `expected`.
  void ExpectPredictions(const ToolResult& result, const std::string& image,
                         const std::vector<std::pair<std::string, double>>& expected) {
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::vector<std::string> lines = NonLogLines(result.out);
    ASSERT_EQ(lines.size(), expected.size() + 1) << result.out;
    EXPECT_EQ(lines[0], "---------- Prediction for " + Path(image) + " ----------");
    const std::regex line_form("^([01]\\.[0-9]{4}) - \"(.*)\"$");
    for (size_t i = 0; i < expected.size(); ++i) {
      std::smatch match;
      ASSERT_TRUE(std::regex_match(lines[i + 1], match, line_form)) << lines[i + 1];
      EXPECT_EQ(match[2].str(), expected[i].first) << "line " << i + 1;
      EXPECT_NEAR(std::stod(match[1].str()), expected[i].second, 1.01e-4) << "line " << i + 1;
    }
  }

  ScopedTempDir dir_;
  std::vector<std::vector<double>> weights_;
  std::vector<double> biases_;
};

TEST_F(ClassificationExampleTest, PrintsTheFiveMostProbableLabels) {
  WriteNet(3);
  const std::vector<double> means = {25, 100, 1};
  WriteMean(means);
  WriteLabels(kLabels);
  const std::string pixels = WriteImage("cat.png", kHeight, kWidth);
  const auto expected = Expected(pixels, means);
  // The probabilities are apart enough for the order to be certain.
  for (size_t i = 1; i < expected.size(); ++i) {
    ASSERT_GT(expected[i - 1].second - expected[i].second, 1e-3);
  }
  ExpectPredictions(Classify("cat.png"), "cat.png", expected);
}

TEST_F(ClassificationExampleTest, ResizesImagesAndConvertsThemForAGrayNet) {
  WriteNet(1);
  const std::vector<double> means = {60};
  WriteMean(means);
  WriteLabels(kLabels);
  WriteImage("large.png", 3 * kHeight, 2 * kWidth + 1);
  // What the net sees: the image read in gray at the net's size (bilinear, OpenCV's).
  Datum resized;
  ReadImageToDatum(Path("large.png"), 0, kHeight, kWidth, false, "", &resized);
  ExpectPredictions(Classify("large.png"), "large.png", Expected(resized.data(), means));
}

TEST_F(ClassificationExampleTest, MistakesAreOneLineErrors) {
  WriteNet(3);
  WriteMean({1, 2, 3});
  WriteLabels(kLabels - 1);
  WriteImage("cat.png", kHeight, kWidth);
  ToolResult result = Classify("cat.png");
  ExpectOneLineToolError(result, "classification",
                         {"labels.txt", "has 5 labels", "output has 6 channels"});

  WriteLabels(kLabels);
  result = Classify("missing.png");
  ExpectOneLineToolError(result, "classification", {"missing.png"});

  WriteMean({1, 2});
  result = Classify("cat.png");
  ExpectOneLineToolError(result, "classification", {"mean.binaryproto", "3 channels"});

  result = Run({Path("deploy.prototxt")});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("Usage: "), std::string::npos) << result.err;
}

}  // namespace
}  // namespace caffe
