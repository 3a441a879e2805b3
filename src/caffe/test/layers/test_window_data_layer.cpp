// The WindowData layer on a PNG and a window file written by the test: the warped windows'
// pixels (as OpenCV warps them) with context padding at the image's border, square crops, mean and
// scale, mirroring, the background-then-foreground order of a batch and which windows are used,
// cached images, exact resume, and the errors for bad window files and parameters. Without
// image support only the error saying what the layer needs is checked.
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/io/image_io.hpp"
#include "caffe/layer_factory.hpp"
#include "caffe/layers/window_data_layer.hpp"
#include "caffe/test/data_layer_test_util.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/image_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {
namespace {

constexpr int kRows = 20, kCols = 24;

// One image; windows: class 1 (x 2..11, y 3..12), class 2 (the whole image), a background one and
// one between the thresholds (overlap 0.4 with fg 0.5 and bg 0.3: never used).
constexpr char kWindows[] = R"(# 0
img0.png
3
20
24
4
1 0.9 2 3 11 12
2 0.8 0 0 23 19
0 0.1 5 5 14 14
3 0.4 1 1 5 5
)";

class WindowDataLayerTest : public ::testing::Test {
 protected:
  WindowDataLayerTest()
      : dir_(MakeTempDir("caffe_test_window_data")), source_(dir_.path() + "/windows.txt") {
    top_ = {&data_, &label_};
  }

  void SetUp() override {
#ifdef USE_OPENCV
    image_ = PatternImage(kRows, kCols, 3, 5);
    cv::imwrite(dir_.path() + "/img0.png", image_);
#endif
    WriteWindows(kWindows);
  }

  void WriteWindows(const string& text) { std::ofstream(source_) << text; }

  // A layer made through the registry and set up, its sampling seeded.
  Layer<float>* MakeLayer(int batch_size, const string& extra, const string& transform,
                          uint32_t seed = 1701) {
    Caffe::set_random_seed(seed);
    const LayerParameter param = ParseLayerParam(
        "name: 'windows' type: 'WindowData' top: 'data' top: 'label' phase: TRAIN "
        "window_data_param { source: '" +
        source_ + "' root_folder: '" + dir_.path() +
        "/' batch_size: " + std::to_string(batch_size) + " fg_threshold: 0.5 bg_threshold: 0.3 " +
        extra + " } transform_param { " + transform + " }");
    std::shared_ptr<Layer<float>> layer = LayerRegistry<float>::CreateLayer(param);
    layer->SetUp({}, top_);
    layers_.push_back(layer);
    return layer.get();
  }

  // Item `item` of the last batch, C x S x S.
  vector<float> Item(int item) const {
    const int size = data_.count(1);
    return vector<float>(data_.cpu_data() + item * size, data_.cpu_data() + (item + 1) * size);
  }

#ifdef USE_OPENCV
  // The region (x, y, w, h) of the image warped as OpenCV does, at (pad_x, pad_y) in an S x S
  // crop of zeros, optionally mirrored with the crop, values (v - mean[c]) * scale.
  vector<float> Expected(cv::Rect region, cv::Size warped, int pad_x, int pad_y, int crop,
                         bool mirror = false, vector<float> mean = {0, 0, 0},
                         float scale = 1) const {
    cv::Mat resized;
    cv::resize(image_(region), resized, warped, 0, 0, cv::INTER_LINEAR);
    if (mirror) cv::flip(resized, resized, 1);
    vector<float> values(3 * crop * crop, 0.0f);
    for (int c = 0; c < 3; ++c) {
      for (int h = 0; h < resized.rows; ++h) {
        for (int w = 0; w < resized.cols; ++w) {
          const float pixel = resized.ptr<uint8_t>(h)[3 * w + c];
          values[(c * crop + h + pad_y) * crop + w + pad_x] = (pixel - mean[c]) * scale;
        }
      }
    }
    return values;
  }
  cv::Mat image_;
#endif

  ScopedTempDir dir_;
  string source_;
  Blob<float> data_, label_;
  vector<Blob<float>*> top_;
  vector<std::shared_ptr<Layer<float>>> layers_;
};

TEST_F(WindowDataLayerTest, WithoutImageSupportItSaysWhatItNeeds) {
  if (ImageSupportAvailable()) GTEST_SKIP() << "this build reads images";
  try {
    MakeLayer(4, "", "crop_size: 8");
    FAIL() << "set up without image support";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("reading the images of window file"), string::npos)
        << error.what();
  }
}

#ifdef USE_OPENCV
TEST_F(WindowDataLayerTest, WarpsEachForegroundWindowAsOpenCV) {
  Layer<float>* layer = MakeLayer(6, "fg_fraction: 1", "crop_size: 10");
  ForwardBatchLabels(layer, top_);
  ASSERT_EQ(data_.shape_string(), "6 3 10 10 (1800)");
  std::set<int> seen;
  for (int item = 0; item < 6; ++item) {
    const int label = static_cast<int>(label_.cpu_data()[item]);
    seen.insert(label);
    ASSERT_TRUE(label == 1 || label == 2) << label;
    // Class 1 is 10 x 10 already; class 2, the whole image, is warped down.
    const vector<float> expected =
        label == 1 ? Expected(cv::Rect(2, 3, 10, 10), cv::Size(10, 10), 0, 0, 10)
                   : Expected(cv::Rect(0, 0, kCols, kRows), cv::Size(10, 10), 0, 0, 10);
    EXPECT_EQ(Item(item), expected) << "item " << item << ", class " << label;
  }
  EXPECT_EQ(seen.size(), 2u) << "both foreground windows in six draws";
}

// The whole image with 2 pixels of context in a crop of 14: the widened window (x -5..29, y
// -4..24) reaches past every border, so the warped image sits at (2, 2), 10 x 10, in zeros,
// which the mean does not touch.
TEST_F(WindowDataLayerTest, ContextPaddingBeyondTheImageStaysZero) {
  WriteWindows("# 0\nimg0.png\n3\n20\n24\n1\n2 0.8 0 0 23 19\n");
  Layer<float>* layer =
      MakeLayer(2, "fg_fraction: 1 context_pad: 2",
                "crop_size: 14 mean_value: 10 mean_value: 20 mean_value: 30 scale: 0.5");
  ForwardBatchLabels(layer, top_);
  const vector<float> expected =
      Expected(cv::Rect(0, 0, kCols, kRows), cv::Size(10, 10), 2, 2, 14, false, {10, 20, 30}, 0.5);
  EXPECT_EQ(Item(0), expected);
  EXPECT_EQ(Item(1), expected);
  EXPECT_EQ(label_.cpu_data()[0], 2);
}

// Square mode: the 10 x 4 window (x 2..11, y 8..11) becomes a square around its centre
// (x 2..12, y 5..15, BVLC's rounding), warped to the crop.
TEST_F(WindowDataLayerTest, SquareModeCutsASquareAroundTheWindow) {
  WriteWindows("# 0\nimg0.png\n3\n20\n24\n1\n4 0.7 2 8 11 11\n");
  ForwardBatchLabels(MakeLayer(1, "fg_fraction: 1 crop_mode: 'square'", "crop_size: 8"), top_);
  EXPECT_EQ(Item(0), Expected(cv::Rect(2, 5, 11, 11), cv::Size(8, 8), 0, 0, 8));
}

// With mirror each window is flipped on a coin toss (its padding with it).
TEST_F(WindowDataLayerTest, MirrorFlipsSomeWindows) {
  WriteWindows("# 0\nimg0.png\n3\n20\n24\n1\n1 0.9 2 3 11 12\n");
  Layer<float>* layer = MakeLayer(8, "fg_fraction: 1", "crop_size: 10 mirror: true");
  const vector<float> plain = Expected(cv::Rect(2, 3, 10, 10), cv::Size(10, 10), 0, 0, 10);
  const vector<float> flipped =
      Expected(cv::Rect(2, 3, 10, 10), cv::Size(10, 10), 0, 0, 10, /*mirror=*/true);
  int flips = 0;
  for (int batch = 0; batch < 4; ++batch) {
    ForwardBatchLabels(layer, top_);
    for (int item = 0; item < 8; ++item) {
      const vector<float> values = Item(item);
      ASSERT_TRUE(values == plain || values == flipped) << "item " << item;
      flips += values == flipped;
    }
  }
  EXPECT_GT(flips, 0);
  EXPECT_LT(flips, 32);
}

// A batch of 8 at fg_fraction 0.25: 6 background windows (label 0) then 2 foreground ones; the
// window between the thresholds (class 3) never comes.
TEST_F(WindowDataLayerTest, BatchesHoldBackgroundThenForegroundWindows) {
  Layer<float>* layer = MakeLayer(8, "fg_fraction: 0.25", "crop_size: 6");
  std::set<int> foreground;
  for (int batch = 0; batch < 10; ++batch) {
    const vector<int> labels = ForwardBatchLabels(layer, top_);
    for (int item = 0; item < 6; ++item) ASSERT_EQ(labels[item], 0) << "item " << item;
    for (int item = 6; item < 8; ++item) {
      ASSERT_TRUE(labels[item] == 1 || labels[item] == 2) << labels[item];
      foreground.insert(labels[item]);
    }
  }
  EXPECT_EQ(foreground, (std::set<int>{1, 2}));
}

TEST_F(WindowDataLayerTest, CachedImagesGiveTheSameBatches) {
  const vector<float> first =
      ForwardBatchValues(MakeLayer(8, "fg_fraction: 0.5", "crop_size: 8 mirror: true", 99), top_);
  EXPECT_EQ(ForwardBatchValues(MakeLayer(8, "fg_fraction: 0.5 cache_images: true",
                                         "crop_size: 8 mirror: true", 99),
                               top_),
            first);
}

// SaveCursor after two batches; a new layer restored there gives the third batch.
TEST_F(WindowDataLayerTest, ResumesExactlyFromASavedPosition) {
  auto* layer = dynamic_cast<WindowDataLayer<float>*>(
      MakeLayer(4, "fg_fraction: 0.5", "crop_size: 8 mirror: true", 7));
  ASSERT_NE(layer, nullptr);
  ForwardBatchValues(layer, top_);
  ForwardBatchValues(layer, top_);
  const DataCursor cursor = layer->SaveCursor();
  EXPECT_EQ(cursor.records_read(), 8u);
  const vector<float> third = ForwardBatchValues(layer, top_);
  auto* resumed = dynamic_cast<WindowDataLayer<float>*>(
      MakeLayer(4, "fg_fraction: 0.5", "crop_size: 8 mirror: true", 12345));
  resumed->RestoreCursor(cursor);
  EXPECT_EQ(ForwardBatchValues(resumed, top_), third);
}

TEST_F(WindowDataLayerTest, BadWindowFilesAndParametersAreClearErrors) {
  const auto error_of = [&](const string& windows, const string& extra, const string& transform) {
    WriteWindows(windows);
    try {
      MakeLayer(4, extra, transform);
    } catch (const Error& error) {
      return string(error.what());
    }
    return string("no error");
  };
  const auto expect_error = [&](const string& windows, const string& extra, const string& transform,
                                const string& message) {
    const string error = error_of(windows, extra, transform);
    EXPECT_NE(error.find("WindowData layer 'windows'"), string::npos) << error;
    EXPECT_NE(error.find(message), string::npos) << error;
  };
  const string header = "# 0\nimg0.png\n3\n20\n24\n";
  expect_error(kWindows, "", "", "needs transform_param.crop_size");
  expect_error(kWindows, "crop_mode: 'stretch'", "crop_size: 8", "crop_mode is 'stretch'");
  expect_error(kWindows, "context_pad: 4", "crop_size: 8", "context_pad 4 leaves no room");
  expect_error(header + "1\n1 0.9 2 3 11 20\n", "", "crop_size: 8",
               "line 7: the window (2, 3) to (11, 20) does not lie in image 'img0.png' of 24 x 20");
  expect_error(header + "1\n0 0.9 2 3 11 12\n", "", "crop_size: 8",
               "line 7: a foreground window (overlap 0.9) has class 0");
  expect_error(header + "1\n1 high 2 3 11 12\n", "", "crop_size: 8",
               "line 7: a window's overlap is 'high'; expected a number");
  expect_error(header + "2\n1 0.9 2 3 11 12\n", "", "crop_size: 8",
               "ends where a window's class should be");
  expect_error("img0.png\n", "", "crop_size: 8", "line 1: expected '# <image index>'");
  expect_error("# 0\nimg0.png\n1\n20\n24\n0\n", "", "crop_size: 8",
               "lists 1 channels; WindowData reads images in colour (3)");
  expect_error(header + "1\n0 0.1 2 3 11 12\n", "fg_fraction: 0.5", "crop_size: 8",
               "a batch takes 2 foreground windows, but window file");
  expect_error(header + "1\n1 0.9 2 3 11 12\n", "fg_fraction: 0.5", "crop_size: 8",
               "a batch takes 2 background windows, but window file");
  // An image the file names but the folder lacks: the batch that reads it fails, naming it.
  WriteWindows("# 0\nmissing.png\n3\n20\n24\n1\n1 0.9 2 3 11 12\n");
  Layer<float>* missing = MakeLayer(2, "fg_fraction: 1", "crop_size: 8");
  try {
    ForwardBatchLabels(missing, top_);
    FAIL() << "a missing image was read";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("image 'missing.png'"), string::npos) << error.what();
  }
  expect_error("", "", "crop_size: 8", "lists no images");
  source_ = dir_.path() + "/absent.txt";
  try {
    MakeLayer(4, "", "crop_size: 8");
    FAIL() << "set up from a window file that does not exist";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("cannot open window file '" + source_ + "'"), string::npos)
        << error.what();
  }
}
#endif  // USE_OPENCV

}  // namespace
}  // namespace caffe
