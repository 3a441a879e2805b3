// convert_mnist_data and examples/siamese's convert_mnist_siamese_data, run as programs: tiny idx
// files written here become a database of Datum records keyed "%08d" (one image each, or a pair of
// images and their similarity); malformed inputs end with exit status 1 and one clear line on
// stderr.
#include <cstdint>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "caffe/io/db.hpp"
#include "caffe/io/io.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"
#include "caffe/test/tool_test_util.hpp"

namespace caffe {
namespace {

/// A converter of MNIST idx files run as a program: `program` under build/, whose error lines
/// start with "<name>: ".
class MnistConverterTest : public ::testing::Test {
 protected:
  MnistConverterTest(const string& program, const string& name)
      : program_(program),
        name_(name),
        dir_(MakeTempDir("caffe_test_convert_mnist")),
        images_(dir_.path() + "/images-idx3-ubyte"),
        labels_(dir_.path() + "/labels-idx1-ubyte"),
        output_(dir_.path() + "/out_lmdb") {}

  /// `count` images of rows x cols, pixel j of image i = i * 10 + j; labels 9 - i.
  void WriteIdx(uint32_t count, uint32_t rows, uint32_t cols, IdxMagic magic = {}) {
    WriteMnistIdx(
        images_, labels_, count, rows, cols, [](uint32_t i, uint32_t j) { return i * 10 + j; },
        [](uint32_t i) { return 9 - i; }, magic);
  }

  static void Write(const string& path, const string& content) {
    std::ofstream(path, std::ios::binary) << content;
  }

  ToolResult Run(const vector<string>& args) {
    return RunProgram(program_, name_, args, dir_.path());
  }

  /// Expects exit status 1 and exactly one non-log line on stderr, containing every fragment.
  void ExpectOneLineError(const ToolResult& result, const vector<string>& fragments) {
    ExpectOneLineToolError(result, name_, fragments);
  }

  const string program_, name_;
  ScopedTempDir dir_;
  string images_, labels_, output_;
};

class ConvertMnistDataTest : public MnistConverterTest {
 protected:
  ConvertMnistDataTest()
      : MnistConverterTest(BuildDir() + "/bin/convert_mnist_data", "convert_mnist_data") {}
};

TEST_F(ConvertMnistDataTest, WritesOneDatumPerImageKeyedByIndex) {
  WriteIdx(3, 2, 3);
  const ToolResult result = Run({images_, labels_, output_});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("Processed 3 files."), string::npos) << result.err;

  std::unique_ptr<db::DB> database = db::GetDB("lmdb");
  database->Open(output_, db::READ);
  std::unique_ptr<db::Cursor> cursor = database->NewCursor();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(cursor->valid()) << "record " << i << " missing";
    EXPECT_EQ(cursor->key(), "0000000" + std::to_string(i));
    Datum datum;
    ASSERT_TRUE(datum.ParseFromString(cursor->value()));
    EXPECT_EQ(datum.channels(), 1);
    EXPECT_EQ(datum.height(), 2);
    EXPECT_EQ(datum.width(), 3);
    EXPECT_EQ(datum.label(), 9 - i);
    EXPECT_FALSE(datum.encoded());
    EXPECT_EQ(datum.float_data_size(), 0);
    ASSERT_EQ(datum.data().size(), 6u);
    for (int j = 0; j < 6; ++j) EXPECT_EQ(static_cast<uint8_t>(datum.data()[j]), i * 10 + j);
    cursor->Next();
  }
  EXPECT_FALSE(cursor->valid());
}

TEST_F(ConvertMnistDataTest, CommitsManyImagesInBatches) {
  WriteIdx(2500, 1, 1);  // more than two commit batches of 1000
  const ToolResult result = Run({"--backend=lmdb", images_, labels_, output_});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::unique_ptr<db::DB> database = db::GetDB("lmdb");
  database->Open(output_, db::READ);
  int count = 0;
  string last_key;
  for (auto cursor = database->NewCursor(); cursor->valid(); cursor->Next()) {
    ++count;
    last_key = cursor->key();
  }
  EXPECT_EQ(count, 2500);
  EXPECT_EQ(last_key, "00002499");
}

TEST_F(ConvertMnistDataTest, BadImageMagicIsOneClearLine) {
  WriteIdx(2, 2, 2, {/*image=*/2049});
  ExpectOneLineError(Run({images_, labels_, output_}),
                     {images_, "magic number is 2049, expected 2051"});
  EXPECT_FALSE(FileExists(output_)) << "nothing is written for bad input";
}

TEST_F(ConvertMnistDataTest, BadLabelMagicIsOneClearLine) {
  WriteIdx(2, 2, 2, {2051, /*label=*/2051});
  ExpectOneLineError(Run({images_, labels_, output_}),
                     {labels_, "magic number is 2051, expected 2049"});
}

TEST_F(ConvertMnistDataTest, GzippedInputIsRecognised) {
  WriteIdx(1, 1, 1);
  Write(images_, string("\x1f\x8b\x08\x00\x00\x00\x00\x00", 8));
  ExpectOneLineError(Run({images_, labels_, output_}), {images_, "gunzip"});
}

TEST_F(ConvertMnistDataTest, CountMismatchIsOneClearLine) {
  WriteIdx(3, 2, 2, {2051, 2049, /*label_count=*/2});
  ExpectOneLineError(Run({images_, labels_, output_}), {"holds 3 images", "holds 2 labels"});
}

TEST_F(ConvertMnistDataTest, TruncatedImageFileIsOneClearLine) {
  WriteIdx(3, 2, 2);
  std::ifstream in(images_, std::ios::binary);
  string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Write(images_, content.substr(0, content.size() - 1));
  ExpectOneLineError(Run({images_, labels_, output_}), {images_, "truncated"});
}

TEST_F(ConvertMnistDataTest, MissingInputIsOneClearLine) {
  const string missing = dir_.path() + "/missing";
  WriteIdx(1, 1, 1);
  ExpectOneLineError(Run({missing, labels_, output_}), {"cannot open image file", missing});
}

TEST_F(ConvertMnistDataTest, ExistingOutputIsRefused) {
  WriteIdx(1, 1, 1);
  ASSERT_EQ(Run({images_, labels_, output_}).exit_code, 0);
  ExpectOneLineError(Run({images_, labels_, output_}), {output_, "already exists"});
}

// BVLC's other backend: written where this build has LevelDB, else one clear line.
TEST_F(ConvertMnistDataTest, LevelDBBackendWritesALevelDBWhereBuilt) {
  WriteIdx(2, 1, 1);
  const ToolResult result = Run({"--backend=leveldb", images_, labels_, output_});
  std::unique_ptr<db::DB> database;
  try {
    database = db::GetDB("leveldb");
  } catch (const Error&) {
    ExpectOneLineError(result, {"LevelDB is not built"});
    return;
  }
  ASSERT_EQ(result.exit_code, 0) << result.err;
  database->Open(output_, db::READ);
  std::unique_ptr<db::Cursor> cursor = database->NewCursor();
  for (int i = 0; i < 2; ++i, cursor->Next()) {
    ASSERT_TRUE(cursor->valid()) << "record " << i << " missing";
    Datum datum;
    ASSERT_TRUE(datum.ParseFromString(cursor->value()));
    EXPECT_EQ(datum.label(), 9 - i);
  }
  EXPECT_FALSE(cursor->valid());
}

TEST_F(ConvertMnistDataTest, WrongArgumentCountPrintsUsage) {
  const ToolResult result = Run({images_, labels_});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE((result.out + result.err).find("convert_mnist_data [FLAGS] input_image_file"),
            string::npos)
      << result.out << result.err;
}

// examples/siamese's converter: record i is a pair of images drawn from the file, in channels 0
// and 1, labelled 1 when their digits agree.
class ConvertMnistSiameseDataTest : public MnistConverterTest {
 protected:
  ConvertMnistSiameseDataTest()
      : MnistConverterTest(BuildDir() + "/examples/siamese/convert_mnist_siamese_data.bin",
                           "convert_mnist_siamese_data") {}

  /// `count` images of 2 x 3 pixels, pixel j of image i = i * 10 + j, the digit of image i i % 3.
  void WriteDigits(uint32_t count) {
    WriteMnistIdx(
        images_, labels_, count, 2, 3, [](uint32_t i, uint32_t j) { return i * 10 + j; },
        [](uint32_t i) { return i % 3; });
  }

  /// The records of the database at output_ (the backend the converter chose by default),
  /// serialized, in key order.
  vector<string> Records() {
    std::unique_ptr<db::DB> database = db::GetDB(db::HaveLevelDB() ? "leveldb" : "lmdb");
    database->Open(output_, db::READ);
    vector<string> records;
    for (auto cursor = database->NewCursor(); cursor->valid(); cursor->Next()) {
      records.push_back(cursor->value());
    }
    return records;
  }
};

TEST_F(ConvertMnistSiameseDataTest, EachRecordIsTwoWholeImagesAndWhetherTheirDigitsAgree) {
  WriteDigits(20);
  const ToolResult result = Run({images_, labels_, output_});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("Processed 20 pairs"), string::npos) << result.err;
  const vector<string> records = Records();
  ASSERT_EQ(records.size(), 20u);
  int similar = 0;
  std::set<uint32_t> drawn;
  for (const string& record : records) {
    Datum datum;
    ASSERT_TRUE(datum.ParseFromString(record));
    EXPECT_EQ(datum.channels(), 2);
    EXPECT_EQ(datum.height(), 2);
    EXPECT_EQ(datum.width(), 3);
    ASSERT_EQ(datum.data().size(), 12u);
    uint32_t image[2];
    for (int c = 0; c < 2; ++c) {
      image[c] = static_cast<uint8_t>(datum.data()[c * 6]) / 10;
      ASSERT_LT(image[c], 20u);
      for (int j = 0; j < 6; ++j) {
        EXPECT_EQ(static_cast<uint8_t>(datum.data()[c * 6 + j]), image[c] * 10 + j);
      }
      drawn.insert(image[c]);
    }
    EXPECT_EQ(datum.label(), image[0] % 3 == image[1] % 3 ? 1 : 0)
        << "images " << image[0] << " and " << image[1];
    similar += datum.label();
  }
  // 40 draws from 20 images with 3 digits: both kinds of pairs, and no image fixed in place.
  EXPECT_GT(similar, 0);
  EXPECT_LT(similar, 20);
  EXPECT_GT(drawn.size(), 10u);
}

TEST_F(ConvertMnistSiameseDataTest, PairsFollowTheSeed) {
  WriteDigits(50);
  ASSERT_EQ(Run({"--seed=5", images_, labels_, output_}).exit_code, 0);
  const vector<string> first = Records();
  std::filesystem::remove_all(output_);
  ASSERT_EQ(Run({"--seed=5", images_, labels_, output_}).exit_code, 0);
  EXPECT_EQ(Records(), first);
  std::filesystem::remove_all(output_);
  ASSERT_EQ(Run({"--seed=6", images_, labels_, output_}).exit_code, 0);
  EXPECT_NE(Records(), first);
}

TEST_F(ConvertMnistSiameseDataTest, BadInputIsOneClearLineAndWritesNothing) {
  WriteMnistIdx(
      images_, labels_, 3, 2, 2, [](uint32_t, uint32_t) { return 0; }, [](uint32_t) { return 0; },
      {2051, 2049, /*label_count=*/2});
  ExpectOneLineError(Run({images_, labels_, output_}), {"holds 3 images", "holds 2 labels"});
  WriteDigits(0);
  ExpectOneLineError(Run({images_, labels_, output_}), {images_, "holds no images"});
  WriteDigits(3);
  ExpectOneLineError(Run({"--backend=rocksdb", images_, labels_, output_}),
                     {"unknown database backend 'rocksdb'"});
  EXPECT_FALSE(FileExists(output_)) << "nothing is written for bad input";
}

}  // namespace
}  // namespace caffe
