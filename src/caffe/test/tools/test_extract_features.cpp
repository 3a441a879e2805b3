// extract_features, run as a program with BVLC's arguments on a small net (LMDB Data layer ->
// InnerProduct) and weights written here: one database per blob, one float Datum per image keyed
// "%010d", values as the net computes them; bad arguments are one clear line.
#include <memory>
#include <string>
#include <vector>

#include "caffe/io/db.hpp"
#include "caffe/io/io.hpp"
#include "caffe/net.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {
namespace {

constexpr int kRecords = 5;

class ExtractFeaturesTest : public ::testing::Test {
 protected:
  ExtractFeaturesTest()
      : dir_(MakeTempDir("caffe_test_extract_features")),
        source_(dir_.path() + "/input_lmdb"),
        proto_(dir_.path() + "/net.prototxt"),
        weights_(dir_.path() + "/net.caffemodel") {}

  void SetUp() override {
    // Record r: 1 x 1 x 3 bytes r, r + 1, r + 2.
    std::unique_ptr<db::DB> database = db::GetDB("lmdb");
    database->Open(source_, db::NEW);
    auto txn = database->NewTransaction();
    for (int r = 0; r < kRecords; ++r) {
      Datum datum;
      datum.set_channels(1);
      datum.set_height(1);
      datum.set_width(3);
      datum.set_label(r);
      datum.set_data(
          string{static_cast<char>(r), static_cast<char>(r + 1), static_cast<char>(r + 2)});
      txn->Put("r" + std::to_string(r), datum.SerializeAsString());
    }
    txn->Commit();
    txn.reset();
    database->Close();

    NetParameter net_param;
    ParseProtoFromText(
        "name: 'features' "
        "layer { name: 'data' type: 'Data' top: 'data' top: 'label' "
        "  data_param { source: '" +
            source_ +
            "' backend: LMDB batch_size: 2 } } "
            "layer { name: 'ip' type: 'InnerProduct' bottom: 'data' top: 'ip' "
            "  inner_product_param { num_output: 2 } }",
        "test net", &net_param);
    WriteProtoToTextFile(net_param, proto_);
    // ip = [x0 + 0.5, x1 + x2 - 1].
    Net<float> net(proto_, TEST);
    const auto& ip = net.layer_by_name("ip")->blobs();
    const float weights[] = {1, 0, 0, 0, 1, 1};
    const float bias[] = {0.5f, -1};
    std::copy(weights, weights + 6, ip[0]->mutable_cpu_data());
    std::copy(bias, bias + 2, ip[1]->mutable_cpu_data());
    NetParameter trained;
    net.ToProto(&trained);
    WriteProtoToBinaryFile(trained, weights_);
  }

  ToolResult Run(const vector<string>& args) {
    return RunTool("extract_features", args, dir_.path());
  }

  /// Exit status 1 and one line "extract_features: ..." holding every fragment (the net's setup
  /// log, which prints the net over many lines, may come before it).
  void ExpectOneLineError(const ToolResult& result, const vector<string>& fragments) {
    EXPECT_EQ(result.exit_code, 1) << result.err;
    vector<string> lines;
    for (const string& line : NonLogLines(result.err)) {
      if (line.rfind("extract_features: ", 0) == 0) lines.push_back(line);
    }
    ASSERT_EQ(lines.size(), 1u) << result.err;
    for (const string& fragment : fragments) {
      EXPECT_NE(lines[0].find(fragment), string::npos)
          << "'" << fragment << "' not in: " << lines[0];
    }
  }

  ScopedTempDir dir_;
  string source_, proto_, weights_;
};

TEST_F(ExtractFeaturesTest, StoresEachBlobPerImageInItsOwnDatabase) {
  const string ip_db = dir_.path() + "/ip_features";
  const string data_db = dir_.path() + "/data_features";
  const ToolResult result =
      Run({weights_, proto_, "ip,data", ip_db + "," + data_db, "3", "lmdb", "CPU"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.err.find("Successfully extracted the features!"), string::npos) << result.err;

  for (const string& path : {ip_db, data_db}) {
    std::unique_ptr<db::DB> database = db::GetDB("lmdb");
    database->Open(path, db::READ);
    int index = 0;
    for (auto cursor = database->NewCursor(); cursor->valid(); cursor->Next(), ++index) {
      char key[16];
      snprintf(key, sizeof(key), "%010d", index);
      EXPECT_EQ(cursor->key(), key);
      Datum datum;
      ASSERT_TRUE(datum.ParseFromString(cursor->value()));
      const int r = index % kRecords;  // 3 batches of 2 wrap around the 5 records
      if (path == ip_db) {
        EXPECT_EQ(datum.channels(), 2);
        EXPECT_EQ(datum.height(), 1);
        EXPECT_EQ(datum.width(), 1);
        ASSERT_EQ(datum.float_data_size(), 2);
        EXPECT_FLOAT_EQ(datum.float_data(0), r + 0.5f);
        EXPECT_FLOAT_EQ(datum.float_data(1), (r + 1) + (r + 2) - 1.0f);
      } else {
        EXPECT_EQ(datum.width(), 3);
        ASSERT_EQ(datum.float_data_size(), 3);
        EXPECT_FLOAT_EQ(datum.float_data(2), r + 2.0f);
      }
      EXPECT_TRUE(datum.data().empty());
    }
    EXPECT_EQ(index, 6) << path;
  }
}

TEST_F(ExtractFeaturesTest, BadArgumentsAreOneClearLine) {
  const string out = dir_.path() + "/out";
  ExpectOneLineError(Run({weights_, proto_, "nope", out, "1", "lmdb"}),
                     {"Unknown feature blob name nope in the network " + proto_});
  ExpectOneLineError(Run({weights_, proto_, "ip,data", out, "1", "lmdb"}),
                     {"number of blob names (2", "dataset names (1"});
  ExpectOneLineError(Run({weights_, proto_, "ip", out, "many", "lmdb"}),
                     {"num_mini_batches is 'many'"});
  ExpectOneLineError(Run({weights_, proto_, "ip", out, "1", "rocksdb"}),
                     {"unknown database backend 'rocksdb'"});
  ExpectOneLineError(Run({weights_, proto_, "ip", out, "1", "lmdb", "TPU"}), {"'TPU'"});
  EXPECT_FALSE(FileExists(out));
  const ToolResult usage = Run({weights_, proto_});
  EXPECT_EQ(usage.exit_code, 1);
  EXPECT_NE(usage.err.find("Usage: extract_features  pretrained_net_param"), string::npos);
}

}  // namespace
}  // namespace caffe
