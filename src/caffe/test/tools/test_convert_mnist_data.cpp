// convert_mnist_data, run as a program: tiny idx files written here become an LMDB of Datum
// records keyed "%08d"; malformed inputs end with exit status 1 and one clear line on stderr.
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"
#include "caffe/test/tool_test_util.hpp"
#include "caffe/util/db.hpp"
#include "caffe/util/io.hpp"

namespace caffe {
namespace {

void AppendBigEndian(string* out, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(value >> shift));
}

class ConvertMnistDataTest : public ::testing::Test {
 protected:
  ConvertMnistDataTest()
      : dir_(MakeTempDir("caffe_test_convert_mnist")),
        images_(dir_.path() + "/images-idx3-ubyte"),
        labels_(dir_.path() + "/labels-idx1-ubyte"),
        output_(dir_.path() + "/out_lmdb") {}

  /// `count` images of rows x cols, pixel j of image i = i * 10 + j; labels 9 - i.
  void WriteIdx(uint32_t count, uint32_t rows, uint32_t cols, uint32_t image_magic = 2051,
                uint32_t label_magic = 2049, uint32_t label_count_in_header = UINT32_MAX) {
    string images, labels;
    AppendBigEndian(&images, image_magic);
    AppendBigEndian(&images, count);
    AppendBigEndian(&images, rows);
    AppendBigEndian(&images, cols);
    for (uint32_t i = 0; i < count; ++i) {
      for (uint32_t j = 0; j < rows * cols; ++j) images.push_back(static_cast<char>(i * 10 + j));
    }
    AppendBigEndian(&labels, label_magic);
    AppendBigEndian(&labels, label_count_in_header == UINT32_MAX ? count : label_count_in_header);
    for (uint32_t i = 0; i < count; ++i) labels.push_back(static_cast<char>(9 - i));
    Write(images_, images);
    Write(labels_, labels);
  }

  static void Write(const string& path, const string& content) {
    std::ofstream(path, std::ios::binary) << content;
  }

  ToolResult Run(const vector<string>& args) {
    return RunTool("convert_mnist_data", args, dir_.path());
  }

  /// Expects exit status 1 and exactly one non-log line on stderr, containing every fragment.
  void ExpectOneLineError(const ToolResult& result, const vector<string>& fragments) {
    ExpectOneLineToolError(result, "convert_mnist_data", fragments);
  }

  ScopedTempDir dir_;
  string images_, labels_, output_;
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
  WriteIdx(2, 2, 2, /*image_magic=*/2049);
  ExpectOneLineError(Run({images_, labels_, output_}),
                     {images_, "magic number is 2049, expected 2051"});
  EXPECT_FALSE(FileExists(output_)) << "nothing is written for bad input";
}

TEST_F(ConvertMnistDataTest, BadLabelMagicIsOneClearLine) {
  WriteIdx(2, 2, 2, 2051, /*label_magic=*/2051);
  ExpectOneLineError(Run({images_, labels_, output_}),
                     {labels_, "magic number is 2051, expected 2049"});
}

TEST_F(ConvertMnistDataTest, GzippedInputIsRecognised) {
  WriteIdx(1, 1, 1);
  Write(images_, string("\x1f\x8b\x08\x00\x00\x00\x00\x00", 8));
  ExpectOneLineError(Run({images_, labels_, output_}), {images_, "gunzip"});
}

TEST_F(ConvertMnistDataTest, CountMismatchIsOneClearLine) {
  WriteIdx(3, 2, 2, 2051, 2049, /*label_count_in_header=*/2);
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

}  // namespace
}  // namespace caffe
