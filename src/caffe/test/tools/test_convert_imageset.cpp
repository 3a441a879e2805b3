// convert_imageset, run as a program on a folder of PNG and JPEG images written here: raw and
// encoded, resized, gray and shuffled conversions read back through the Data layer with the
// expected pixels and labels; the ImageData layer on the same folder giving the Data layer's
// batches; compute_image_mean against a mean computed here; and bad input:
// missing and corrupt images (skipped with a warning and a count, or stopping), labels that are not
// integers, --check_size with differing sizes, an existing output, and a conversion killed midway
// that leaves no database looking complete.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "caffe/io/db.hpp"
#include "caffe/io/io.hpp"
#include "caffe/layers/data_layer.hpp"
#include "caffe/layers/image_data_layer.hpp"
#include "caffe/test/data_layer_test_util.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/image_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"
#include "caffe/test/tool_test_util.hpp"

namespace caffe {
namespace {

constexpr int kImages = 6;
constexpr int kHeight = 10, kWidth = 12;

#ifndef USE_OPENCV
TEST(ConvertImagesetWithoutOpenCVTest, IsOneClearLine) {
  ScopedTempDir dir(MakeTempDir("caffe_test_convert_imageset"));
  std::ofstream(dir.path() + "/list.txt") << "a.png 0\n";
  const ToolResult result =
      RunTool("convert_imageset", {dir.path() + "/", dir.path() + "/list.txt", dir.path() + "/db"},
              dir.path());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("needs OpenCV"), string::npos) << result.err;
  EXPECT_FALSE(FileExists(dir.path() + "/db"));
}
#else

class ConvertImagesetTest : public ::testing::Test {
 protected:
  ConvertImagesetTest()
      : dir_(MakeTempDir("caffe_test_convert_imageset")),
        root_(dir_.path() + "/images/"),
        list_(dir_.path() + "/list.txt"),
        db_(dir_.path() + "/out_lmdb") {}

  void SetUp() override {
    std::filesystem::create_directory(root_);
    // Image i: label 5 * i; PNG and JPEG alternate.
    for (int i = 0; i < kImages; ++i) {
      TestImage image;
      image.name = "img" + std::to_string(i) + (i % 2 ? ".jpg" : ".png");
      image.label = 5 * i;
      image.image = PatternImage(kHeight, kWidth, 3, i);
      images_.push_back(image);
    }
    WriteImageFolder(root_, images_, list_);
  }

  ToolResult Run(vector<string> args) {
    args.push_back(root_);
    args.push_back(list_);
    args.push_back(db_);
    return RunTool("convert_imageset", args, dir_.path());
  }

  /// The records of an LMDB in key order.
  static vector<std::pair<string, Datum> > ReadDB(const string& path) {
    vector<std::pair<string, Datum> > records;
    std::unique_ptr<db::DB> database = db::GetDB("lmdb");
    database->Open(path, db::READ);
    for (auto cursor = database->NewCursor(); cursor->valid(); cursor->Next()) {
      Datum datum;
      EXPECT_TRUE(datum.ParseFromString(cursor->value()));
      records.emplace_back(cursor->key(), datum);
    }
    return records;
  }

  /// One TEST-phase batch of `count` records through the Data layer: values then labels.
  static vector<float> DataLayerBatch(const string& source, int count,
                                      const string& transform = "") {
    LayerParameter param = ParseLayerParam(
        "name: 'data' type: 'Data' top: 'data' top: 'label' data_param { source: '" + source +
        "' backend: LMDB batch_size: " + std::to_string(count) + " } transform_param { " +
        transform + " }");
    param.set_phase(TEST);
    Blob<float> data, label;
    const Blobs<float> top{&data, &label};
    DataLayer<float> layer(param);
    layer.SetUp({}, top);
    return ForwardBatchValues(&layer, top);
  }

  /// The C x H x W values Caffe should read from image `index`.
  vector<int> Expected(int index, bool is_color = true, int height = 0, int width = 0) const {
    return ImageValues(ExpectedImage(root_ + images_[index].name, is_color, height, width));
  }

  void ExpectOneLineError(const ToolResult& result, const vector<string>& fragments) {
    ExpectOneLineToolError(result, "convert_imageset", fragments);
  }

  /// Nothing at the database path and no partial folder beside it.
  void ExpectNothingWritten() {
    EXPECT_FALSE(FileExists(db_));
    for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
      EXPECT_EQ(entry.path().filename().string().find("out_lmdb"), string::npos)
          << entry.path() << " was left behind";
    }
  }

  ScopedTempDir dir_;
  string root_, list_, db_;
  vector<TestImage> images_;
};

TEST_F(ConvertImagesetTest, RawImagesReachTheDataLayerWithTheirLabels) {
  const ToolResult result = Run({});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("Processed 6 files."), string::npos) << result.err;
  const auto records = ReadDB(db_);
  ASSERT_EQ(records.size(), size_t{kImages});
  for (int i = 0; i < kImages; ++i) {
    EXPECT_EQ(records[i].first, "0000000" + std::to_string(i) + "_" + images_[i].name);
    EXPECT_FALSE(records[i].second.encoded());
    EXPECT_EQ(records[i].second.channels(), 3);
    EXPECT_EQ(records[i].second.height(), kHeight);
    EXPECT_EQ(records[i].second.width(), kWidth);
  }
  const vector<float> batch = DataLayerBatch(db_, kImages);
  const int size = 3 * kHeight * kWidth;
  for (int i = 0; i < kImages; ++i) {
    const vector<int> expected = Expected(i);
    vector<int> actual(batch.begin() + i * size, batch.begin() + (i + 1) * size);
    EXPECT_EQ(actual, expected) << images_[i].name;
    EXPECT_EQ(batch[kImages * size + i], images_[i].label);
  }
}

TEST_F(ConvertImagesetTest, ResizedGrayShuffledRecordsKeepTheirLabels) {
  const ToolResult result =
      Run({"--gray", "--shuffle", "--shuffle_seed=4", "--resize_height=5", "--resize_width=7"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("Shuffling data"), string::npos);
  const auto records = ReadDB(db_);
  ASSERT_EQ(records.size(), size_t{kImages});
  vector<string> order;
  for (int line = 0; line < kImages; ++line) {
    const string& key = records[line].first;
    const string name = key.substr(9);
    order.push_back(name);
    const int index = name[3] - '0';
    const Datum& datum = records[line].second;
    EXPECT_EQ(key.substr(0, 9), "0000000" + std::to_string(line) + "_");
    EXPECT_EQ(datum.label(), images_[index].label) << name;
    EXPECT_EQ(datum.channels(), 1);
    EXPECT_EQ(datum.height(), 5);
    EXPECT_EQ(datum.width(), 7);
    vector<int> values;
    for (char value : datum.data()) values.push_back(static_cast<uint8_t>(value));
    EXPECT_EQ(values, Expected(index, false, 5, 7)) << name;
  }
  vector<string> list_order;
  for (const TestImage& image : images_) list_order.push_back(image.name);
  EXPECT_NE(order, list_order) << "this seed shuffles";
  std::sort(order.begin(), order.end());
  EXPECT_EQ(order, list_order);
}

TEST_F(ConvertImagesetTest, EncodedRecordsGiveTheDataLayerWhatRawOnesGive) {
  ASSERT_EQ(Run({}).exit_code, 0);
  const string raw_db = dir_.path() + "/raw_lmdb";
  std::filesystem::rename(db_, raw_db);
  const string transform = "crop_size: 8 mean_value: 100 mean_value: 110 mean_value: 120";
  const vector<float> raw = DataLayerBatch(raw_db, kImages, transform);

  // --encoded alone keeps each file's own bytes.
  ToolResult result = Run({"--encoded"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  auto records = ReadDB(db_);
  ASSERT_EQ(records.size(), size_t{kImages});
  for (int i = 0; i < kImages; ++i) {
    EXPECT_TRUE(records[i].second.encoded());
    EXPECT_EQ(records[i].second.data(), ReadWholeFile(root_ + images_[i].name));
  }
  EXPECT_EQ(DataLayerBatch(db_, kImages, transform), raw);

  // --encode_type=png re-encodes the JPEG files (losslessly, from their decoded pixels).
  std::filesystem::remove_all(db_);
  result = Run({"--encoded", "--encode_type=png"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  records = ReadDB(db_);
  for (const auto& record : records) EXPECT_EQ(record.second.data().substr(1, 3), "PNG");
  EXPECT_EQ(DataLayerBatch(db_, kImages, transform), raw);
}

TEST_F(ConvertImagesetTest, ImageDataLayerOnTheSameFolderGivesWhatTheDataLayerGives) {
  // Colour at the files' size, and gray resized, each with a centred crop and a mean.
  const vector<std::pair<vector<string>, string> > cases = {
      {{}, "is_color: true"},
      {{"--gray", "--resize_height=5", "--resize_width=7"},
       "is_color: false new_height: 5 new_width: 7"}};
  const string transform = "crop_size: 4 mean_value: 90 scale: 0.5";
  for (const auto& [flags, image_param] : cases) {
    std::filesystem::remove_all(db_);
    const ToolResult result = Run(flags);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const vector<float> from_db = DataLayerBatch(db_, kImages, transform);

    LayerParameter param = ParseLayerParam(
        "name: 'images' type: 'ImageData' top: 'data' top: 'label' image_data_param { source: '" +
        list_ + "' root_folder: '" + root_ + "' batch_size: " + std::to_string(kImages) + " " +
        image_param + " } transform_param { " + transform + " }");
    param.set_phase(TEST);
    Blob<float> data, label;
    const Blobs<float> top{&data, &label};
    ImageDataLayer<float> layer(param);
    layer.SetUp({}, top);
    EXPECT_EQ(ForwardBatchValues(&layer, top), from_db) << image_param;
  }
}

TEST_F(ConvertImagesetTest, ComputeImageMeanEqualsTheMeanComputedHere) {
  vector<double> expected(3 * kHeight * kWidth, 0.0);
  for (int i = 0; i < kImages; ++i) {
    const vector<int> values = Expected(i);
    for (size_t j = 0; j < values.size(); ++j) expected[j] += values[j] / double(kImages);
  }
  for (const vector<string>& flags : {vector<string>{}, vector<string>{"--encoded"}}) {
    std::filesystem::remove_all(db_);
    ASSERT_EQ(Run(flags).exit_code, 0);
    const string mean_file = dir_.path() + "/mean.binaryproto";
    const ToolResult result = RunTool("compute_image_mean", {db_, mean_file}, dir_.path());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    BlobProto mean;
    ReadProtoFromBinaryFile(mean_file, &mean);
    EXPECT_EQ(mean.num(), 1);
    EXPECT_EQ(mean.channels(), 3);
    EXPECT_EQ(mean.height(), kHeight);
    EXPECT_EQ(mean.width(), kWidth);
    ASSERT_EQ(mean.data_size(), static_cast<int>(expected.size()));
    for (size_t j = 0; j < expected.size(); ++j) {
      ASSERT_NEAR(mean.data(static_cast<int>(j)), expected[j], 1e-4) << "value " << j;
    }
  }
}

TEST_F(ConvertImagesetTest, MissingAndCorruptImagesAreSkippedWithWarningsAndACount) {
  std::ofstream(root_ + "corrupt.jpg") << "\xff\xd8\xff not really a JPEG";
  std::ofstream(list_, std::ios::app) << "missing.png 3\ncorrupt.jpg 4\n";
  const ToolResult result = Run({});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("skipping line 7 of '" + list_ + "': cannot open image '" + root_ +
                            "missing.png'"),
            string::npos)
      << result.err;
  EXPECT_NE(result.err.find("skipping line 8 of '" + list_ + "': image '" + root_ +
                            "corrupt.jpg' cannot be decoded"),
            string::npos)
      << result.err;
  EXPECT_NE(result.err.find("Skipped 2 of 8 images"), string::npos) << result.err;
  EXPECT_EQ(ReadDB(db_).size(), size_t{kImages});
}

TEST_F(ConvertImagesetTest, BadImageStopsTheConversionWhenAsked) {
  std::ofstream(list_, std::ios::app) << "missing.png 3\n";
  ExpectOneLineError(Run({"--on_bad_image=stop"}),
                     {"cannot open image '" + root_ + "missing.png'", "line 7 of '" + list_});
  ExpectNothingWritten();
  ExpectOneLineError(Run({"--on_bad_image=maybe"}), {"--on_bad_image is 'maybe'"});
}

TEST_F(ConvertImagesetTest, LabelThatIsNotAnIntegerIsOneClearLine) {
  std::ofstream(list_, std::ios::app) << "img0.png zero\n";
  ExpectOneLineError(Run({}), {list_, "line 7", "label 'zero' is not an integer"});
  ExpectNothingWritten();
}

TEST_F(ConvertImagesetTest, CheckSizeRefusesImagesOfDifferentSizes) {
  cv::imwrite(root_ + "img3.jpg", PatternImage(4, 9, 3, 3));
  ExpectOneLineError(Run({"--check_size"}), {"--check_size", root_ + "img3.jpg", "is 3x4x9",
                                             root_ + "img0.png", "is 3x10x12"});
  ExpectNothingWritten();
  // Resized to one size they pass.
  const ToolResult result = Run({"--check_size", "--resize_height=4", "--resize_width=4"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
}

TEST_F(ConvertImagesetTest, ExistingOutputAndBadFlagsAreRefused) {
  ASSERT_EQ(Run({}).exit_code, 0);
  ExpectOneLineError(Run({}), {db_, "already exists"});
  std::filesystem::remove_all(db_);
  ExpectOneLineError(Run({"--resize_height=4"}), {"give both"});
  ExpectOneLineError(Run({"--encode_type=png"}), {"needs --encoded"});
  ExpectOneLineError(Run({"--backend=rocksdb"}), {"unknown database backend 'rocksdb'"});
  ExpectNothingWritten();
  const ToolResult usage = RunTool("convert_imageset", {root_, list_}, dir_.path());
  EXPECT_EQ(usage.exit_code, 1);
  EXPECT_NE((usage.out + usage.err).find("convert_imageset [FLAGS] ROOTFOLDER/ LISTFILE DB_NAME"),
            string::npos);
}

TEST_F(ConvertImagesetTest, KilledConversionLeavesNoDatabaseThatLooksComplete) {
  // Many lines naming one image, so the conversion runs for seconds unless it is killed.
  {
    std::ofstream list(list_);
    for (int i = 0; i < 40000; ++i) list << "img0.png " << i % 10 << "\n";
  }
  const string binary = BuildDir() + "/bin/convert_imageset";
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(binary.c_str(), binary.c_str(), "--threads=1", "--encoded", "--encode_type=png",
          "--resize_height=64", "--resize_width=64", root_.c_str(), list_.c_str(), db_.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(pid, 0);
  const string partial = db_ + ".partial-" + std::to_string(pid);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!FileExists(partial + "/data.mdb") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // well into the writing
  kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the conversion ended before it was killed (status " << status
                                   << "); the test needs a longer list";
  EXPECT_FALSE(FileExists(db_)) << "a killed conversion left a database at the output path";
  EXPECT_TRUE(FileExists(partial)) << "the partial folder is where the records went";

  // The next conversion to the same path removes the leftover and completes.
  WriteImageFolder(root_, images_, list_);
  const ToolResult result = Run({});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("left by an interrupted conversion"), string::npos) << result.err;
  EXPECT_FALSE(FileExists(partial));
  EXPECT_EQ(ReadDB(db_).size(), size_t{kImages});
}

TEST_F(ConvertImagesetTest, LogEveryGivesAProgressLineEveryNImages) {
  const ToolResult result = Run({"--log_every=2"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (int count : {2, 4, 6}) {
    const string line = "Processed " + std::to_string(count) + " files (" + std::to_string(count) +
                        " of " + std::to_string(kImages) + " lines, " +
                        std::to_string(100 * count / kImages) + "%";
    EXPECT_NE(result.err.find(line), string::npos) << line << "\n" << result.err;
  }
  ExpectOneLineError(Run({"--log_every=0"}), {"--log_every is 0; must be >= 1"});
}

#endif  // USE_OPENCV

}  // namespace
}  // namespace caffe
