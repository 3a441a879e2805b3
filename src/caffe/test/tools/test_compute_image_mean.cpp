// compute_image_mean, run as a program on LMDBs written here: the .binaryproto mean, the logged
// per-channel means, float records, and one-line errors for bad input.
#include <memory>
#include <string>
#include <vector>

#include "caffe/io/db.hpp"
#include "caffe/io/io.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"
#include "caffe/test/tool_test_util.hpp"

namespace caffe {
namespace {

class ComputeImageMeanTest : public ::testing::Test {
 protected:
  ComputeImageMeanTest()
      : dir_(MakeTempDir("caffe_test_image_mean")),
        source_(dir_.path() + "/lmdb"),
        mean_file_(dir_.path() + "/mean.binaryproto") {}

  void WriteLMDB(const vector<Datum>& records) {
    std::unique_ptr<db::DB> database = db::GetDB("lmdb");
    database->Open(source_, db::NEW);
    std::unique_ptr<db::Transaction> txn = database->NewTransaction();
    for (size_t i = 0; i < records.size(); ++i) {
      txn->Put("key" + std::to_string(i), records[i].SerializeAsString());
    }
    txn->Commit();
  }

  static Datum Bytes(int channels, int height, int width, const vector<int>& values) {
    Datum datum;
    datum.set_channels(channels);
    datum.set_height(height);
    datum.set_width(width);
    string data;
    for (int value : values) data.push_back(static_cast<char>(value));
    datum.set_data(data);
    return datum;
  }

  ToolResult Run(const vector<string>& args) {
    return RunTool("compute_image_mean", args, dir_.path());
  }

  void ExpectOneLineError(const ToolResult& result, const vector<string>& fragments) {
    ExpectOneLineToolError(result, "compute_image_mean", fragments);
  }

  ScopedTempDir dir_;
  string source_, mean_file_;
};

TEST_F(ComputeImageMeanTest, WritesTheMeanImageAndLogsChannelMeans) {
  // Two channels of 1x2: channel 0 averages to 10, channel 1 to 201.
  WriteLMDB({Bytes(2, 1, 2, {0, 10, 200, 255}), Bytes(2, 1, 2, {20, 10, 150, 199}),
             Bytes(2, 1, 2, {10, 10, 250, 152})});
  const ToolResult result = Run({source_, mean_file_});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  BlobProto mean;
  ReadProtoFromBinaryFile(mean_file_, &mean);
  EXPECT_EQ(mean.num(), 1);
  EXPECT_EQ(mean.channels(), 2);
  EXPECT_EQ(mean.height(), 1);
  EXPECT_EQ(mean.width(), 2);
  ASSERT_EQ(mean.data_size(), 4);
  EXPECT_FLOAT_EQ(mean.data(0), 10);
  EXPECT_FLOAT_EQ(mean.data(1), 10);
  EXPECT_FLOAT_EQ(mean.data(2), 200);
  EXPECT_FLOAT_EQ(mean.data(3), 202);
  EXPECT_NE(result.err.find("Number of channels: 2"), string::npos) << result.err;
  EXPECT_NE(result.err.find("mean_value channel [0]: 10\n"), string::npos) << result.err;
  EXPECT_NE(result.err.find("mean_value channel [1]: 201\n"), string::npos) << result.err;
}

TEST_F(ComputeImageMeanTest, AveragesFloatRecords) {
  Datum first, second;
  for (Datum* datum : {&first, &second}) {
    datum->set_channels(1);
    datum->set_height(1);
    datum->set_width(2);
  }
  first.add_float_data(-1.5f);
  first.add_float_data(1000.f);
  second.add_float_data(0.5f);
  second.add_float_data(3000.f);
  WriteLMDB({first, second});
  ASSERT_EQ(Run({source_, mean_file_}).exit_code, 0);
  BlobProto mean;
  ReadProtoFromBinaryFile(mean_file_, &mean);
  ASSERT_EQ(mean.data_size(), 2);
  EXPECT_FLOAT_EQ(mean.data(0), -0.5f);
  EXPECT_FLOAT_EQ(mean.data(1), 2000.f);
}

TEST_F(ComputeImageMeanTest, WithoutOutputFileOnlyLogs) {
  WriteLMDB({Bytes(1, 1, 1, {42})});
  const ToolResult result = Run({source_});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("mean_value channel [0]: 42"), string::npos) << result.err;
  EXPECT_FALSE(FileExists(mean_file_));
}

TEST_F(ComputeImageMeanTest, MissingDatabaseIsOneClearLine) {
  ExpectOneLineError(Run({source_, mean_file_}), {source_, "does not exist"});
  EXPECT_FALSE(FileExists(mean_file_));
}

TEST_F(ComputeImageMeanTest, EmptyDatabaseIsOneClearLine) {
  WriteLMDB({});
  ExpectOneLineError(Run({source_, mean_file_}), {source_, "no records"});
}

TEST_F(ComputeImageMeanTest, ImagesOfDifferentSizesAreOneClearLine) {
  WriteLMDB({Bytes(1, 1, 2, {1, 2}), Bytes(1, 2, 1, {1, 2})});
  ExpectOneLineError(Run({source_, mean_file_}), {"'key1'", "1x2x1", "1x1x2"});
  EXPECT_FALSE(FileExists(mean_file_));
}

TEST_F(ComputeImageMeanTest, CorruptRecordIsOneClearLine) {
  std::unique_ptr<db::DB> database = db::GetDB("lmdb");
  database->Open(source_, db::NEW);
  std::unique_ptr<db::Transaction> txn = database->NewTransaction();
  txn->Put("bad", string("\xff\xff\xff", 3));
  txn->Commit();
  database->Close();
  ExpectOneLineError(Run({source_, mean_file_}), {"'bad'", "not a valid Datum"});
}

TEST_F(ComputeImageMeanTest, WrongArgumentCountPrintsUsage) {
  const ToolResult result = Run({});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE((result.out + result.err).find("compute_image_mean [FLAGS] INPUT_DB [OUTPUT_FILE]"),
            string::npos)
      << result.out << result.err;
}

TEST_F(ComputeImageMeanTest, LogEveryGivesAProgressLineEveryNImages) {
  WriteLMDB({Bytes(1, 1, 1, {1}), Bytes(1, 1, 1, {2}), Bytes(1, 1, 1, {3})});
  const ToolResult result = Run({"--log_every=1", source_, mean_file_});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const char* line : {"Processed 1 files.", "Processed 2 files.", "Processed 3 files."}) {
    EXPECT_NE(result.err.find(line), string::npos) << line << "\n" << result.err;
  }
  ExpectOneLineError(Run({"--log_every=0", source_, mean_file_}),
                     {"--log_every is 0; must be >= 1"});
}

}  // namespace
}  // namespace caffe
