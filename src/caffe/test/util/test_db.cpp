// The LMDB database: writing and reading back in key order, seeking, batched commits, growing the
// map when it fills up, and the errors for missing paths and unsupported backends.
#include <lmdb.h>

#include <map>
#include <memory>
#include <string>

#include "caffe/test/file_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"
#include "caffe/util/db.hpp"
#include "caffe/util/db_lmdb.hpp"

namespace caffe {
namespace {

class DBTest : public ::testing::Test {
 protected:
  DBTest() : dir_(MakeTempDir("caffe_test_db")), path_(dir_.path() + "/db") {}

  /// Writes `records` into a new LMDB at path_, committing every `commit_every` records.
  void Write(const std::map<string, string>& records, int commit_every) {
    std::unique_ptr<db::DB> database = db::GetDB("lmdb");
    database->Open(path_, db::NEW);
    std::unique_ptr<db::Transaction> txn = database->NewTransaction();
    int count = 0;
    for (const auto& record : records) {
      txn->Put(record.first, record.second);
      if (++count % commit_every == 0) txn->Commit();
    }
    txn->Commit();
  }

  std::map<string, string> ReadAll() {
    std::unique_ptr<db::DB> database = db::GetDB(DataParameter::LMDB);
    database->Open(path_, db::READ);
    std::map<string, string> records;
    string previous;
    for (std::unique_ptr<db::Cursor> cursor = database->NewCursor(); cursor->valid();
         cursor->Next()) {
      EXPECT_LT(previous, cursor->key()) << "keys must come in increasing order";
      previous = cursor->key();
      records[cursor->key()] = cursor->value();
    }
    return records;
  }

  ScopedTempDir dir_;
  string path_;
};

TEST_F(DBTest, ReadsBackWhatWasWrittenInKeyOrder) {
  // Values with zero bytes and keys written out of order.
  const std::map<string, string> records = {{"00000002", string("two\0bytes", 9)},
                                            {"00000000", "zero"},
                                            {"00000001", ""},
                                            {"a_key", "last"}};
  Write(records, 2);
  EXPECT_EQ(ReadAll(), records);
}

TEST_F(DBTest, CursorStartsAtFirstAndRewinds) {
  Write({{"b", "2"}, {"a", "1"}, {"c", "3"}}, 10);
  std::unique_ptr<db::DB> database = db::GetDB("lmdb");
  database->Open(path_, db::READ);
  std::unique_ptr<db::Cursor> cursor = database->NewCursor();
  ASSERT_TRUE(cursor->valid());
  EXPECT_EQ(cursor->key(), "a");
  cursor->Next();
  cursor->Next();
  EXPECT_EQ(cursor->key(), "c");
  cursor->Next();
  EXPECT_FALSE(cursor->valid());
  cursor->SeekToFirst();
  ASSERT_TRUE(cursor->valid());
  EXPECT_EQ(cursor->key(), "a");
  EXPECT_EQ(cursor->value(), "1");
}

TEST_F(DBTest, SeekFindsTheKeyOrTheNextOne) {
  Write({{"00000010", "ten"}, {"00000020", "twenty"}, {"00000030", "thirty"}}, 10);
  std::unique_ptr<db::DB> database = db::GetDB("lmdb");
  database->Open(path_, db::READ);
  std::unique_ptr<db::Cursor> cursor = database->NewCursor();
  cursor->Seek("00000020");
  ASSERT_TRUE(cursor->valid());
  EXPECT_EQ(cursor->key(), "00000020");
  EXPECT_EQ(cursor->value(), "twenty");
  cursor->Next();
  EXPECT_EQ(cursor->key(), "00000030");
  cursor->Seek("00000011");
  ASSERT_TRUE(cursor->valid());
  EXPECT_EQ(cursor->key(), "00000020");
  cursor->Seek("00000031");
  EXPECT_FALSE(cursor->valid());
  cursor->Seek("");
  ASSERT_TRUE(cursor->valid());
  EXPECT_EQ(cursor->key(), "00000010");
}

TEST_F(DBTest, GrowsTheMapInsteadOfFailingWhenFull) {
  // 600 records of 64 KiB (about 39 MB) overflow LMDB's default 10 MiB map several times over,
  // both across commits and within one commit of 200 records.
  std::map<string, string> records;
  for (int i = 0; i < 600; ++i) {
    char key[16];
    snprintf(key, sizeof(key), "%08d", i);
    records[key] = string(64 * 1024, static_cast<char>('a' + i % 26)) + std::to_string(i);
  }
  Write(records, 200);
  EXPECT_EQ(ReadAll(), records);
  // The map really grew past the default size.
  MDB_env* env = nullptr;
  ASSERT_EQ(mdb_env_create(&env), MDB_SUCCESS);
  ASSERT_EQ(mdb_env_open(env, path_.c_str(), MDB_RDONLY, 0664), MDB_SUCCESS);
  MDB_envinfo info;
  ASSERT_EQ(mdb_env_info(env, &info), MDB_SUCCESS);
  mdb_env_close(env);
  EXPECT_GT(info.me_mapsize, size_t{39} * 1000 * 1000);
}

TEST_F(DBTest, WriteModeAddsToAnExistingDatabase) {
  Write({{"a", "1"}}, 10);
  {
    std::unique_ptr<db::DB> database = db::GetDB("lmdb");
    database->Open(path_, db::WRITE);
    std::unique_ptr<db::Transaction> txn = database->NewTransaction();
    txn->Put("b", "2");
    txn->Put("a", "replaced");
    txn->Commit();
  }
  const std::map<string, string> expected = {{"a", "replaced"}, {"b", "2"}};
  EXPECT_EQ(ReadAll(), expected);
}

TEST_F(DBTest, UncommittedRecordsAreNotWritten) {
  {
    std::unique_ptr<db::DB> database = db::GetDB("lmdb");
    database->Open(path_, db::NEW);
    std::unique_ptr<db::Transaction> txn = database->NewTransaction();
    txn->Put("kept", "1");
    txn->Commit();
    txn->Put("dropped", "2");
  }
  const std::map<string, string> expected = {{"kept", "1"}};
  EXPECT_EQ(ReadAll(), expected);
}

TEST_F(DBTest, MissingDatabaseIsAnErrorNamingThePath) {
  const string missing = dir_.path() + "/no_such_lmdb";
  std::unique_ptr<db::DB> database = db::GetDB("lmdb");
  try {
    database->Open(missing, db::READ);
    FAIL() << "opening a missing LMDB did not throw";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find(missing), string::npos) << error.what();
    EXPECT_NE(string(error.what()).find("does not exist"), string::npos) << error.what();
  }
  EXPECT_THROW(db::GetDB("lmdb")->Open(missing, db::WRITE), Error);
}

TEST_F(DBTest, NewRefusesAnExistingPath) {
  Write({{"a", "1"}}, 10);
  std::unique_ptr<db::DB> database = db::GetDB("lmdb");
  try {
    database->Open(path_, db::NEW);
    FAIL() << "creating over an existing LMDB did not throw";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("already exists"), string::npos) << error.what();
  }
  const std::map<string, string> expected = {{"a", "1"}};
  EXPECT_EQ(ReadAll(), expected);
}

TEST_F(DBTest, ReadModeRefusesToWrite) {
  Write({{"a", "1"}}, 10);
  std::unique_ptr<db::DB> database = db::GetDB("lmdb");
  database->Open(path_, db::READ);
  EXPECT_THROW(database->NewTransaction(), Error);
}

TEST_F(DBTest, EmptyDatabaseHasAnInvalidCursor) {
  Write({}, 10);
  std::unique_ptr<db::DB> database = db::GetDB("lmdb");
  database->Open(path_, db::READ);
  EXPECT_FALSE(database->NewCursor()->valid());
}

TEST(GetDBTest, LevelDBIsRefusedWithAHintToUseLMDB) {
  for (auto get : {+[] { db::GetDB(DataParameter::LEVELDB); }, +[] { db::GetDB("leveldb"); }}) {
    try {
      get();
      FAIL() << "LevelDB was accepted";
    } catch (const Error& error) {
      EXPECT_NE(string(error.what()).find("LevelDB is not built"), string::npos) << error.what();
      EXPECT_NE(string(error.what()).find("backend: LMDB"), string::npos) << error.what();
    }
  }
}

TEST(GetDBTest, BackendNamesAreCaseInsensitiveAndUnknownOnesRefused) {
  EXPECT_NE(db::GetDB("LMDB"), nullptr);
  try {
    db::GetDB("rocksdb");
    FAIL() << "an unknown backend was accepted";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("'rocksdb'"), string::npos) << error.what();
  }
}

}  // namespace
}  // namespace caffe
