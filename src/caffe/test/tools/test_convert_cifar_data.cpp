// convert_cifar_data, run as a program on CIFAR-10 binary batches written here (a few records
// each, the real format): the train and test LMDBs hold every record in order with its label
// and its 3 x 32 x 32 R, G, B planes, and read back through the Data layer; bad batch files are
// one clear line and leave nothing written.
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "caffe/io/db.hpp"
#include "caffe/io/io.hpp"
#include "caffe/layers/data_layer.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"
#include "caffe/test/tool_test_util.hpp"

namespace caffe {
namespace {

constexpr int kImageBytes = 3 * 32 * 32;

/// Record r of a file: label (r * 3 + seed) % 10, byte j of the image (r * 7 + seed + j) % 256.
string MakeBatch(int records, int seed) {
  string content;
  for (int r = 0; r < records; ++r) {
    content.push_back(static_cast<char>((r * 3 + seed) % 10));
    for (int j = 0; j < kImageBytes; ++j)
      content.push_back(static_cast<char>((r * 7 + seed + j) % 256));
  }
  return content;
}

class ConvertCifarDataTest : public ::testing::Test {
 protected:
  ConvertCifarDataTest()
      : dir_(MakeTempDir("caffe_test_convert_cifar")),
        input_(dir_.path() + "/batches"),
        output_(dir_.path() + "/out") {
    std::filesystem::create_directory(input_);
    std::filesystem::create_directory(output_);
  }

  /// Five training batches of 3, 1, 4, 2, 2 records and a test batch of 3.
  void WriteBatches() {
    for (int batch = 1; batch <= 5; ++batch) {
      Write("data_batch_" + std::to_string(batch) + ".bin",
            MakeBatch(kTrainCounts[batch - 1], batch));
    }
    Write("test_batch.bin", MakeBatch(3, 100));
  }

  void Write(const string& name, const string& content) {
    std::ofstream(input_ + "/" + name, std::ios::binary) << content;
  }

  ToolResult Run() { return RunTool("convert_cifar_data", {input_, output_, "lmdb"}, dir_.path()); }

  static vector<Datum> ReadDB(const string& path, vector<string>* keys) {
    vector<Datum> records;
    std::unique_ptr<db::DB> database = db::GetDB("lmdb");
    database->Open(path, db::READ);
    for (auto cursor = database->NewCursor(); cursor->valid(); cursor->Next()) {
      Datum datum;
      EXPECT_TRUE(datum.ParseFromString(cursor->value()));
      records.push_back(datum);
      keys->push_back(cursor->key());
    }
    return records;
  }

  void ExpectOneLineError(const ToolResult& result, const vector<string>& fragments) {
    ExpectOneLineToolError(result, "convert_cifar_data", fragments);
    EXPECT_TRUE(std::filesystem::is_empty(output_)) << "nothing is written for bad input";
  }

  static constexpr int kTrainCounts[5] = {3, 1, 4, 2, 2};
  ScopedTempDir dir_;
  string input_, output_;
};

TEST_F(ConvertCifarDataTest, TrainAndTestDatabasesHoldEveryRecordInOrder) {
  WriteBatches();
  const ToolResult result = Run();
  ASSERT_EQ(result.exit_code, 0) << result.err;
  vector<string> keys;
  const vector<Datum> train = ReadDB(output_ + "/cifar10_train_lmdb", &keys);
  ASSERT_EQ(train.size(), 12u);
  int index = 0;
  for (int batch = 1; batch <= 5; ++batch) {
    for (int r = 0; r < kTrainCounts[batch - 1]; ++r, ++index) {
      char key[16];
      snprintf(key, sizeof(key), "%05d", index);
      EXPECT_EQ(keys[index], key);
      const Datum& datum = train[index];
      EXPECT_EQ(datum.label(), (r * 3 + batch) % 10);
      EXPECT_EQ(datum.channels(), 3);
      EXPECT_EQ(datum.height(), 32);
      EXPECT_EQ(datum.width(), 32);
      EXPECT_FALSE(datum.encoded());
      ASSERT_EQ(datum.data().size(), size_t{kImageBytes});
      for (int j = 0; j < kImageBytes; j += 97) {
        ASSERT_EQ(static_cast<uint8_t>(datum.data()[j]), (r * 7 + batch + j) % 256);
      }
    }
  }
  keys.clear();
  const vector<Datum> test = ReadDB(output_ + "/cifar10_test_lmdb", &keys);
  ASSERT_EQ(test.size(), 3u);
  EXPECT_EQ(keys, (vector<string>{"00000", "00001", "00002"}));
  EXPECT_EQ(test[2].label(), (2 * 3 + 100) % 10);
  EXPECT_EQ(static_cast<uint8_t>(test[2].data()[5]), (2 * 7 + 100 + 5) % 256);

  // Through the Data layer: the red plane first, as stored.
  LayerParameter param =
      ParseLayerParam("name: 'cifar' type: 'Data' top: 'data' top: 'label' data_param { source: '" +
                      output_ + "/cifar10_test_lmdb' backend: LMDB batch_size: 3 }");
  param.set_phase(TEST);
  Blob<float> data, label;
  DataLayer<float> layer(param);
  layer.SetUp({}, {&data, &label});
  layer.Forward({}, {&data, &label});
  EXPECT_EQ(data.shape(), (vector<int>{3, 3, 32, 32}));
  EXPECT_EQ(label.cpu_data()[1], (1 * 3 + 100) % 10);
  EXPECT_EQ(data.data_at(1, 2, 1, 3), (1 * 7 + 100 + 2 * 1024 + 32 + 3) % 256);
}

TEST_F(ConvertCifarDataTest, MissingBatchIsOneClearLine) {
  WriteBatches();
  std::filesystem::remove(input_ + "/data_batch_4.bin");
  ExpectOneLineError(Run(), {"cannot open CIFAR-10 batch", "data_batch_4.bin", "get_cifar10.sh"});
}

TEST_F(ConvertCifarDataTest, BatchOfAPartialRecordIsOneClearLine) {
  WriteBatches();
  Write("test_batch.bin", MakeBatch(2, 0) + "xyz");
  ExpectOneLineError(Run(), {"test_batch.bin", "6149 bytes", "3073-byte"});
}

TEST_F(ConvertCifarDataTest, LabelAboveNineIsOneClearLine) {
  WriteBatches();
  string batch = MakeBatch(2, 0);
  batch[3073] = 57;
  Write("data_batch_2.bin", batch);
  ExpectOneLineError(Run(), {"record 1 of", "data_batch_2.bin", "label 57", "CIFAR-100"});
}

TEST_F(ConvertCifarDataTest, ExistingOutputIsRefusedBeforeWritingAnything) {
  WriteBatches();
  std::filesystem::create_directory(output_ + "/cifar10_test_lmdb");
  const ToolResult result = Run();
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("cifar10_test_lmdb': it already exists"), string::npos) << result.err;
  EXPECT_FALSE(FileExists(output_ + "/cifar10_train_lmdb"));
}

TEST_F(ConvertCifarDataTest, WrongArgumentCountPrintsUsage) {
  const ToolResult result = RunTool("convert_cifar_data", {input_}, dir_.path());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE((result.out + result.err).find("convert_cifar_data input_folder output_folder db_type"),
            string::npos);
}

}  // namespace
}  // namespace caffe
