// LevelDB databases, where the build has LevelDB: records read back in key order, seeking, adding
// to an existing database, the atomic writer of the converter tools, several handles on one
// database in this process (one data layer per GPU), the error when another process has it open,
// errors naming the path (missing, not a LevelDB, an LMDB given as LevelDB, writing a database
// opened for reading), and a Data layer with `backend: LEVELDB` giving exactly the batches, and
// the exact resume, of the same records in an LMDB.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "caffe/io/db.hpp"
#include "caffe/io/io.hpp"
#include "caffe/layer.hpp"
#include "caffe/layer_factory.hpp"
#include "caffe/resumable_layer.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {
namespace {

// Record i: a 1 x 2 x 3 Datum with label i and bytes 10 i + j.
string Record(int i) {
  Datum datum;
  datum.set_channels(1);
  datum.set_height(2);
  datum.set_width(3);
  datum.set_label(i);
  string bytes;
  for (int j = 0; j < 6; ++j) bytes.push_back(static_cast<char>(10 * i + j));
  datum.set_data(bytes);
  return datum.SerializeAsString();
}

string Key(int i) { return "k" + std::to_string(100 + i); }

class LevelDBTest : public ::testing::Test {
 protected:
  LevelDBTest() : dir_(MakeTempDir("caffe_test_leveldb")), path_(dir_.path() + "/db") {}

  void SetUp() override {
    if (!db::HaveLevelDB()) GTEST_SKIP() << "this build has no LevelDB (libleveldb-dev not found)";
  }

  /// Writes records `first` .. `last` - 1 into `path` (NEW or WRITE), backwards, in two commits.
  static void Write(const string& backend, const string& path, db::Mode mode, int first, int last) {
    std::unique_ptr<db::DB> database = db::GetDB(backend);
    database->Open(path, mode);
    std::unique_ptr<db::Transaction> txn = database->NewTransaction();
    for (int i = last - 1; i >= first; --i) {
      txn->Put(Key(i), Record(i));
      if (i == (first + last) / 2) txn->Commit();
    }
    txn->Commit();
  }

  static std::vector<string> Keys(db::Cursor* cursor) {
    std::vector<string> keys;
    for (; cursor->valid(); cursor->Next()) keys.push_back(cursor->key());
    return keys;
  }

  static void ExpectError(const std::function<void()>& action,
                          const std::vector<string>& fragments) {
    try {
      action();
      ADD_FAILURE() << "no error";
    } catch (const Error& error) {
      for (const string& fragment : fragments) {
        EXPECT_NE(string(error.what()).find(fragment), string::npos) << error.what();
      }
    }
  }

  ScopedTempDir dir_;
  string path_;
};

TEST_F(LevelDBTest, ReadsBackInKeyOrderSeeksAndAdds) {
  Write("leveldb", path_, db::NEW, 0, 6);
  Write("LevelDB", path_, db::WRITE, 6, 8);
  std::unique_ptr<db::DB> database = db::GetDB(DataParameter::LEVELDB);
  database->Open(path_, db::READ);
  std::unique_ptr<db::Cursor> cursor = database->NewCursor();
  std::vector<string> expected;
  for (int i = 0; i < 8; ++i) expected.push_back(Key(i));
  EXPECT_EQ(Keys(cursor.get()), expected);
  cursor->Seek(Key(3));
  ASSERT_TRUE(cursor->valid());
  EXPECT_EQ(cursor->value(), Record(3));
  cursor->Seek("k1035");  // between k103 and k104
  EXPECT_EQ(cursor->key(), Key(4));
  cursor->Seek("z");
  EXPECT_FALSE(cursor->valid());
  cursor->SeekToFirst();
  EXPECT_EQ(cursor->key(), Key(0));
}

TEST_F(LevelDBTest, TheAtomicWriterShowsItOnlyWhenFinished) {
  {
    db::AtomicDBWriter writer("leveldb", path_);
    writer.transaction()->Put(Key(1), Record(1));
    EXPECT_FALSE(FileExists(path_));
    writer.Finish();
  }
  std::unique_ptr<db::DB> database = db::GetDB("leveldb");
  database->Open(path_, db::READ);
  EXPECT_EQ(database->NewCursor()->value(), Record(1));
}

TEST_F(LevelDBTest, SeveralHandlesInOneProcessShareIt) {
  Write("leveldb", path_, db::NEW, 0, 4);
  std::unique_ptr<db::DB> first = db::GetDB("leveldb"), second = db::GetDB("leveldb"),
                          third = db::GetDB("leveldb");
  first->Open(path_, db::READ);
  second->Open(path_, db::READ);
  third->Open(dir_.path() + "/./db", db::WRITE);    // the same folder, spelt otherwise
  third->NewTransaction()->Put(Key(9), Record(9));  // not committed: nothing changes
  std::unique_ptr<db::Cursor> a = first->NewCursor(), b = second->NewCursor();
  b->Next();
  EXPECT_EQ(a->key(), Key(0));
  EXPECT_EQ(b->key(), Key(1));
  first->Close();  // the other handle and the cursors go on
  a->Next();
  EXPECT_EQ(a->key(), Key(1));
  EXPECT_EQ(Keys(b.get()).size(), 3u);
}

TEST_F(LevelDBTest, AnotherProcessHoldingItIsNamed) {
  Write("leveldb", path_, db::NEW, 0, 2);
  int ready[2], done[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(done), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // holds the database until told to stop
    std::unique_ptr<db::DB> database = db::GetDB("leveldb");
    database->Open(path_, db::READ);
    char byte = 1;
    if (write(ready[1], &byte, 1) != 1) _exit(1);
    if (read(done[0], &byte, 1) != 1) _exit(1);
    _exit(0);
  }
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  ExpectError(
      [&] { db::GetDB("leveldb")->Open(path_, db::READ); },
      {"cannot open LevelDB '" + path_ + "'", "another process has it open", "convert it to LMDB"});
  ASSERT_EQ(write(done[1], &byte, 1), 1);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  // Free again once that process ends.
  std::unique_ptr<db::DB> database = db::GetDB("leveldb");
  database->Open(path_, db::READ);
  EXPECT_TRUE(database->NewCursor()->valid());
  for (int fd : {ready[0], ready[1], done[0], done[1]}) close(fd);
}

TEST_F(LevelDBTest, MistakesNameTheDatabase) {
  ExpectError([&] { db::GetDB("leveldb")->Open(path_, db::READ); },
              {"LevelDB '" + path_ + "' does not exist"});
  std::filesystem::create_directory(path_);
  ExpectError([&] { db::GetDB("leveldb")->Open(path_, db::READ); },
              {"'" + path_ + "' is not a LevelDB"});
  ExpectError([&] { db::GetDB("leveldb")->Open(path_, db::NEW); },
              {"cannot create LevelDB '" + path_ + "': it already exists"});
  const string lmdb = dir_.path() + "/lmdb";
  Write("lmdb", lmdb, db::NEW, 0, 1);
  ExpectError([&] { db::GetDB(DataParameter::LEVELDB)->Open(lmdb, db::READ); },
              {"is not a LevelDB", "it is an LMDB: set `backend: LMDB`"});
  const string leveldb = dir_.path() + "/leveldb";
  Write("leveldb", leveldb, db::NEW, 0, 1);
  std::unique_ptr<db::DB> database = db::GetDB("leveldb");
  database->Open(leveldb, db::READ);
  ExpectError([&] { database->NewTransaction(); }, {"opened for reading; cannot write"});
}

// BVLC's default backend: a Data layer reads a LevelDB as it reads the same records in an LMDB.
TEST_F(LevelDBTest, DataLayerGivesTheBatchesOfTheSameLMDB) {
  const string lmdb = dir_.path() + "/lmdb";
  Write("lmdb", lmdb, db::NEW, 0, 7);
  Write("leveldb", path_, db::NEW, 0, 7);
  auto make_layer = [](const string& source, const string& backend, const Blobs<float>& top) {
    Caffe::set_random_seed(1701);
    const LayerParameter param = ParseLayerParam(
        "name: 'data' type: 'Data' top: 'data' top: 'label' transform_param { mirror: true "
        "crop_size: 2 } data_param { source: '" +
        source + "' batch_size: 3 " + (backend.empty() ? "" : "backend: " + backend) + " }");
    std::shared_ptr<Layer<float>> layer = LayerRegistry<float>::CreateLayer(param);
    layer->SetUp({}, top);
    return layer;
  };
  Blob<float> lmdb_data, lmdb_label, level_data, level_label;
  const Blobs<float> lmdb_top{&lmdb_data, &lmdb_label}, level_top{&level_data, &level_label};
  Caffe::set_mode(Caffe::CPU);
  std::shared_ptr<Layer<float>> from_lmdb = make_layer(lmdb, "LMDB", lmdb_top);
  std::shared_ptr<Layer<float>> from_leveldb = make_layer(path_, "", level_top);  // the default
  auto values = [](const Blobs<float>& top) {
    std::vector<float> all(top[0]->cpu_data(), top[0]->cpu_data() + top[0]->count());
    all.insert(all.end(), top[1]->cpu_data(), top[1]->cpu_data() + top[1]->count());
    return all;
  };
  DataCursor after_two;
  for (int batch = 0; batch < 5; ++batch) {  // 15 records from 7: wraps twice
    from_lmdb->Forward({}, lmdb_top);
    from_leveldb->Forward({}, level_top);
    EXPECT_EQ(values(level_top), values(lmdb_top)) << "batch " << batch;
    if (batch == 1) after_two = dynamic_cast<ResumableLayer&>(*from_leveldb).SaveCursor();
  }
  // Exact resume from a LevelDB position.
  Blob<float> data, label;
  const Blobs<float> top{&data, &label};
  std::shared_ptr<Layer<float>> resumed = make_layer(path_, "LEVELDB", top);
  dynamic_cast<ResumableLayer&>(*resumed).RestoreCursor(after_two);
  std::shared_ptr<Layer<float>> reference = make_layer(path_, "LEVELDB", level_top);
  for (int batch = 0; batch < 3; ++batch) reference->Forward({}, level_top);
  resumed->Forward({}, top);
  EXPECT_EQ(values(top), values(level_top));
}

}  // namespace
}  // namespace caffe
