// caffe_db, run as a program on LMDBs written here: the record count, the stats (storage, shapes,
// label histogram) of raw, float and encoded records, record N dumped as an image file, the
// conversion to the other backend and back, verify on healthy and damaged databases (the first
// bad record named, never a signal), and one-line errors for a folder that is no database, a
// record number past the end and bad usage.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "caffe/io/db.hpp"
#include "caffe/io/io.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/image_test_util.hpp"
#include "caffe/test/lmdb_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"
#include "caffe/test/tool_test_util.hpp"

namespace caffe {
namespace {

class CaffeDbTest : public ::testing::Test {
 protected:
  CaffeDbTest() : dir_(MakeTempDir("caffe_test_caffe_db")), db_(dir_.path() + "/lmdb") {}

  void WriteLMDB(const vector<Datum>& records) {
    std::unique_ptr<db::DB> database = db::GetDB("lmdb");
    database->Open(db_, db::NEW);
    std::unique_ptr<db::Transaction> txn = database->NewTransaction();
    for (size_t i = 0; i < records.size(); ++i) {
      txn->Put("key" + std::to_string(i), records[i].SerializeAsString());
    }
    txn->Commit();
  }

  /// A C x H x W record of bytes (first + i) % 256, labelled `label`.
  static Datum Raw(int channels, int height, int width, int label, int first = 0) {
    Datum datum;
    datum.set_channels(channels);
    datum.set_height(height);
    datum.set_width(width);
    datum.set_label(label);
    string data;
    for (int i = 0; i < channels * height * width; ++i)
      data.push_back(static_cast<char>(first + i));
    datum.set_data(data);
    return datum;
  }

  ToolResult Run(const vector<string>& args) { return RunTool("caffe_db", args, dir_.path()); }

  void ExpectOneLineError(const ToolResult& result, const vector<string>& fragments) {
    ExpectOneLineToolError(result, "caffe_db", fragments);
  }

  ScopedTempDir dir_;
  string db_;
};

TEST_F(CaffeDbTest, CountsRecords) {
  WriteLMDB({Raw(1, 2, 2, 0), Raw(1, 2, 2, 1), Raw(1, 2, 2, 1)});
  const ToolResult result = Run({"count", db_});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "3\n");
}

TEST_F(CaffeDbTest, StatsGiveStorageShapesAndLabelHistogram) {
  Datum floats = Raw(2, 1, 1, 7);
  floats.clear_data();
  floats.add_float_data(0.5f);
  floats.add_float_data(1.5f);
  WriteLMDB({Raw(3, 4, 5, 0), Raw(3, 4, 5, 2), Raw(1, 4, 5, 2), floats, Raw(3, 4, 5, 2)});
  const ToolResult result = Run({"stats", db_});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const string expected = "database: " + db_ +
                          "\n"
                          "records: 5\n"
                          "storage:\n"
                          "  raw float: 1\n"
                          "  raw uint8: 4\n"
                          "shapes (channels x height x width):\n"
                          "  1x4x5: 1\n"
                          "  2x1x1: 1\n"
                          "  3x4x5: 3\n"
                          "labels (3 distinct):\n"
                          "  0: 1\n"
                          "  2: 3\n"
                          "  7: 1\n";
  EXPECT_EQ(result.out, expected);
}

TEST_F(CaffeDbTest, NotADatabaseAndBadUsageAreClearErrors) {
  std::filesystem::create_directory(db_);
  ExpectOneLineError(Run({"count", db_}), {"'" + db_ + "' is not an LMDB"});
  ExpectOneLineError(Run({"stats", dir_.path() + "/missing"}), {"does not exist"});
  const ToolResult usage = Run({"list", db_});
  EXPECT_EQ(usage.exit_code, 1);
  EXPECT_NE(usage.err.find("caffe_db [FLAGS] dump DB_NAME N OUTPUT_IMAGE"), string::npos);
  EXPECT_NE(usage.err.find("unknown command 'list'"), string::npos);
}

// LMDB -> LevelDB -> LMDB: the same records under the same keys (where LevelDB is built).
TEST_F(CaffeDbTest, ConvertCopiesEveryRecordToTheOtherBackend) {
  try {
    db::GetDB("leveldb");
  } catch (const Error&) {
    GTEST_SKIP() << "this build has no LevelDB";
  }
  const vector<Datum> records = {Raw(1, 2, 2, 0), Raw(3, 1, 2, 5, 9), Raw(1, 2, 2, 1)};
  WriteLMDB(records);
  const string leveldb = dir_.path() + "/leveldb", back = dir_.path() + "/back_lmdb";
  ToolResult result = Run({"--to=leveldb", "convert", db_, leveldb});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "converted 3 records of lmdb '" + db_ + "' to leveldb '" + leveldb + "'\n");
  result = Run({"--backend=leveldb", "convert", leveldb, back});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::unique_ptr<db::DB> database = db::GetDB("lmdb");
  database->Open(back, db::READ);
  std::unique_ptr<db::Cursor> cursor = database->NewCursor();
  for (size_t i = 0; i < records.size(); ++i, cursor->Next()) {
    ASSERT_TRUE(cursor->valid()) << "record " << i;
    EXPECT_EQ(cursor->key(), "key" + std::to_string(i));
    EXPECT_EQ(cursor->value(), records[i].SerializeAsString());
  }
  EXPECT_FALSE(cursor->valid());
  // An existing output is refused, and nothing is lost.
  ExpectOneLineError(Run({"convert", db_, back}), {back, "already exists"});
}

TEST_F(CaffeDbTest, VerifySummarizesAHealthyDatabase) {
  WriteDatumLMDB(db_, 1000);
  uint64_t bytes = 0;
  {
    std::unique_ptr<db::DB> database = db::GetDB("lmdb");
    database->Open(db_, db::READ);
    for (auto cursor = database->NewCursor(); cursor->valid(); cursor->Next()) {
      bytes += cursor->key().size() + cursor->value().size();
    }
  }
  const ToolResult result = Run({"verify", db_});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "'" + db_ + "': 1000 records, " + std::to_string(bytes) +
                            " bytes of keys and values; every record reads and is a valid "
                            "Datum\n");
}

TEST_F(CaffeDbTest, VerifyNamesARecordThatIsNotAValidDatum) {
  Datum short_of_data = Raw(1, 2, 2, 0);
  short_of_data.set_data("abc");
  {
    std::unique_ptr<db::DB> database = db::GetDB("lmdb");
    database->Open(db_, db::NEW);
    std::unique_ptr<db::Transaction> txn = database->NewTransaction();
    txn->Put("key0", Raw(1, 2, 2, 0).SerializeAsString());
    txn->Put("key1", "\xff\xff not a Datum");
    txn->Commit();
  }
  ExpectOneLineError(Run({"verify", db_}),
                     {"'" + db_ +
                      "' is damaged: record 1, key 'key1', is not a valid Datum (14 "
                      "bytes)"});
  std::filesystem::remove_all(db_);
  WriteLMDB({Raw(1, 2, 2, 0), short_of_data});
  ExpectOneLineError(Run({"verify", db_}),
                     {"'" + db_ +
                      "': record 1, key 'key1', is not a valid record: the record "
                      "holds 3 bytes of data but its shape 1x2x2 needs 4"});
}

// A lost disk block in the middle of the file: the record after the last one before it is named.
TEST_F(CaffeDbTest, VerifyNamesTheFirstRecordADamagedPageHides) {
  WriteDatumLMDB(db_, 1000);
  const string data_file = db_ + "/data.mdb";
  const uint64_t page = MiddleLMDBLeafPage(data_file);
  const int first_lost = std::stoi(FirstKeyOnLMDBPage(data_file, page));
  ZeroLMDBPage(data_file, page);
  ExpectOneLineError(Run({"verify", db_}), {"'" + db_ + "' is damaged: record " +
                                            std::to_string(first_lost) + " (the one after key '" +
                                            DatumLMDBKey(first_lost - 1) + "') cannot be read: "});
  // count, stats and convert stop with the same damage, as one line too.
  ExpectOneLineError(Run({"count", db_}), {"LMDB '" + db_ + "' is damaged", "caffe_db verify"});
}

// A record whose size runs past the end of the file: LMDB reads past the end of its map (SIGBUS).
TEST_F(CaffeDbTest, VerifyNamesARecordThatRunsPastTheEndOfTheFile) {
  WriteDatumLMDB(db_, 1000);
  const string data_file = db_ + "/data.mdb";
  const uint64_t page = MiddleLMDBLeafPage(data_file);
  const string key = FirstKeyOnLMDBPage(data_file, page);
  SetFirstLMDBValueSize(data_file, page,
                        static_cast<uint32_t>(std::filesystem::file_size(data_file) - 16));
  ExpectOneLineError(
      Run({"verify", db_}),
      {"'" + db_ + "' is damaged: record " + std::to_string(std::stoi(key)) + ", key '" + key +
       "', cannot be read: SIGBUS (a page past the end of the file)"});
}

// Pages that no longer point at part of the tree: the walk ends early without an error from
// LMDB, and the count it finds is not the count LMDB keeps.
TEST_F(CaffeDbTest, VerifyFindsRecordsThatDamagedPagesHide) {
  WriteDatumLMDB(db_, 1000);
  DropLastChildOfLMDBBranchPages(db_ + "/data.mdb");
  const ToolResult result = Run({"verify", db_});
  ExpectOneLineError(result, {"'" + db_ + "' is damaged: reading it in key order found ",
                              " records but LMDB counts 1000 (damaged pages hide the rest)"});
  EXPECT_EQ(result.err.find("found 1000 records"), string::npos) << result.err;
}

TEST_F(CaffeDbTest, VerifyNamesATruncatedOrEmptyDataFile) {
  WriteDatumLMDB(db_, 1000);
  const string data_file = db_ + "/data.mdb";
  const uint64_t size = std::filesystem::file_size(data_file);
  TruncateFile(data_file, size / 2);
  ExpectOneLineError(Run({"verify", db_}), {"'" + data_file + "' is " + std::to_string(size / 2) +
                                                " bytes but its header says the database has ",
                                            "it is truncated (an unfinished copy?)"});
  TruncateFile(data_file, 0);
  ExpectOneLineError(Run({"verify", db_}), {"'" + data_file + "' is empty (0 bytes)"});
}

#ifdef USE_OPENCV
TEST_F(CaffeDbTest, DumpWritesRecordNAsAnImage) {
  const cv::Mat picture = PatternImage(6, 4, 3, 2);
  std::vector<uchar> png;
  cv::imencode(".png", picture, png);
  Datum encoded;
  encoded.set_encoded(true);
  encoded.set_data(png.data(), png.size());
  encoded.set_label(9);  // BVLC's encoded records carry no shape
  WriteLMDB({Raw(1, 3, 2, 1, 40), encoded});

  const string raw_out = dir_.path() + "/record0.png";
  ToolResult result = Run({"dump", db_, "0", raw_out});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "record 0: key 'key0', label 1, 1x3x2, written to " + raw_out + "\n");
  EXPECT_EQ(ImageValues(cv::imread(raw_out, cv::IMREAD_UNCHANGED)),
            (vector<int>{40, 41, 42, 43, 44, 45}));

  const string encoded_out = dir_.path() + "/record1.jpg";
  result = Run({"dump", db_, "1", encoded_out});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "record 1: key 'key1', label 9, 3x6x4 (encoded png), written to " + encoded_out + "\n");
  EXPECT_EQ(cv::imread(encoded_out).size(), cv::Size(4, 6));

  result = Run({"stats", db_});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("  encoded png: 1\n  raw uint8: 1\n"), string::npos) << result.out;
  EXPECT_NE(result.out.find("  3x6x4: 1\n"), string::npos) << result.out;

  ExpectOneLineError(Run({"dump", db_, "2", encoded_out}), {"holds only 2 records"});
  ExpectOneLineError(Run({"dump", db_, "x", encoded_out}), {"'x' is not a non-negative integer"});
}
#endif  // USE_OPENCV

}  // namespace
}  // namespace caffe
