// The LMDB database: writing and reading back in key order, seeking, batched commits, growing the
// map when it fills up, reading a read-only folder without a lock file, the atomic writer of the
// converter tools (a database appears only complete), and the errors for missing paths, folders
// that are no LMDB, truncated or empty data files, damaged pages and records, and unknown
// backends (LevelDB itself: test_db_leveldb.cpp).
#include <lmdb.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "caffe/io/db.hpp"
#include "caffe/io/db_lmdb.hpp"
#include "caffe/io/io.hpp"
#include "caffe/io/lmdb_header.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/lmdb_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

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

TEST_F(DBTest, FolderThatIsNotAnLMDBIsAnError) {
  std::filesystem::create_directory(path_);
  try {
    db::GetDB("lmdb")->Open(path_, db::READ);
    FAIL() << "a folder without data.mdb was accepted";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("'" + path_ + "' is not an LMDB"), string::npos)
        << error.what();
  }
  std::ofstream(path_ + "/data.mdb") << string(10000, '\x01');
  try {
    db::GetDB("lmdb")->Open(path_, db::READ);
    FAIL() << "a data.mdb of garbage was accepted";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("'" + path_ + "/data.mdb' is not an LMDB data file"),
              string::npos)
        << error.what();
  }
}

// A half-finished copy to a node: LMDB would fault (SIGBUS) reading the pages that are missing.
TEST_F(DBTest, TruncatedDataFileIsNamedWhenOpened) {
  WriteDatumLMDB(path_, 1000);
  const string data_file = path_ + "/data.mdb";
  const db::LMDBHeader header = db::ReadLMDBHeader(data_file);
  const uint64_t half = header.file_size / 2;
  TruncateFile(data_file, half);
  const string expected = "'" + data_file + "' is " + std::to_string(half) +
                          " bytes but its header says the database has " +
                          std::to_string(header.last_page + 1) + " pages of " +
                          std::to_string(header.page_size) + " bytes (" +
                          std::to_string((header.last_page + 1) * header.page_size) +
                          " bytes): it is truncated (an unfinished copy?)";
  EXPECT_EQ(ErrorOf([&] { db::GetDB("lmdb")->Open(path_, db::READ); }), expected);
  EXPECT_EQ(ErrorOf([&] { db::GetDB("lmdb")->Open(path_, db::WRITE); }), expected);
}

TEST_F(DBTest, EmptyOrMissingDataFileIsNamed) {
  Write({{"a", "1"}}, 10);
  const string data_file = path_ + "/data.mdb";
  TruncateFile(data_file, 0);  // LMDB itself says "Bad file descriptor"
  EXPECT_EQ(ErrorOf([&] { db::GetDB("lmdb")->Open(path_, db::READ); }),
            "'" + data_file +
                "' is empty (0 bytes) but an LMDB data file starts with two meta pages, the "
                "first alone 152 bytes long: it is truncated (an unfinished copy?)");
  std::filesystem::remove(data_file);
  EXPECT_EQ(ErrorOf([&] { db::GetDB("lmdb")->Open(path_, db::READ); }),
            "'" + path_ +
                "' is not an LMDB: the folder holds no data.mdb (only its lock.mdb is there: an "
                "unfinished copy?)");
}

// LMDB leaves pages that it allocated and freed within one transaction unwritten, so a whole
// database may end before the last page its header names; it opens as long as every missing page
// is a free one.
TEST_F(DBTest, DataFileShortOnlyByFreePagesOpens) {
  WriteDatumLMDB(path_, 1000);
  const string data_file = path_ + "/data.mdb";
  // Small commits rewrite the tree's top pages into reused ones until the last pages are free.
  uint64_t free_tail = 0;
  db::LMDBHeader header;
  for (int commit = 0; commit < 40 && free_tail == 0; ++commit) {
    {
      std::unique_ptr<db::DB> database = db::GetDB("lmdb");
      database->Open(path_, db::WRITE);
      std::unique_ptr<db::Transaction> txn = database->NewTransaction();
      txn->Put(DatumLMDBKey(commit * 37 % 1000), "replaced");
      txn->Commit();
    }
    header = db::ReadLMDBHeader(data_file);
    std::set<uint64_t> free_pages;  // from LMDB's free-page list, read with LMDB itself
    MDB_env* env = nullptr;
    MDB_txn* txn = nullptr;
    MDB_cursor* cursor = nullptr;
    ASSERT_EQ(mdb_env_create(&env), MDB_SUCCESS);
    ASSERT_EQ(mdb_env_open(env, path_.c_str(), MDB_RDONLY, 0664), MDB_SUCCESS);
    ASSERT_EQ(mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn), MDB_SUCCESS);
    ASSERT_EQ(mdb_cursor_open(txn, 0, &cursor), MDB_SUCCESS);
    MDB_val key, value;
    for (int status = mdb_cursor_get(cursor, &key, &value, MDB_FIRST); status == MDB_SUCCESS;
         status = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
      const size_t* list = static_cast<const size_t*>(value.mv_data);
      free_pages.insert(list + 1, list + 1 + list[0]);
    }
    mdb_cursor_close(cursor);
    mdb_txn_abort(txn);
    mdb_env_close(env);
    while (free_pages.count(header.last_page - free_tail) > 0) ++free_tail;
  }
  if (free_tail == 0) GTEST_SKIP() << "this LMDB left no free page at the end of the file";
  std::map<string, string> expected = ReadAll();
  const uint64_t kept = (header.last_page + 1 - free_tail) * header.page_size;
  TruncateFile(data_file, kept);
  EXPECT_EQ(ReadAll(), expected);
  TruncateFile(data_file, kept - header.page_size);  // a page in use goes too
  EXPECT_NE(ErrorOf([&] { db::GetDB("lmdb")->Open(path_, db::READ); })
                .find("' is " + std::to_string(kept - header.page_size) +
                      " bytes but its header says the database has " +
                      std::to_string(header.last_page + 1) + " pages"),
            string::npos);
}

// A lost disk block in the middle: LMDB's own check fails (or it reports the page corrupted) as
// the cursor steps onto it; the error names the database and the last record read.
TEST_F(DBTest, ADamagedPageIsAnErrorNamingTheDatabaseAndTheLastGoodKey) {
  WriteDatumLMDB(path_, 1000);
  const string data_file = path_ + "/data.mdb";
  const uint64_t page = MiddleLMDBLeafPage(data_file);
  const int first_lost = std::stoi(FirstKeyOnLMDBPage(data_file, page));
  ASSERT_GT(first_lost, 0);
  ZeroLMDBPage(data_file, page);
  std::unique_ptr<db::DB> database = db::GetDB("lmdb");
  database->Open(path_, db::READ);
  std::unique_ptr<db::Cursor> cursor = database->NewCursor();
  int read = 0;
  try {
    for (; cursor->valid(); cursor->Next()) {
      cursor->value();
      ++read;
    }
    FAIL() << "all " << read << " records were read";
  } catch (const db::DamagedDatabase& damage) {
    const string what = damage.what();
    EXPECT_EQ(read, first_lost) << what;
    EXPECT_EQ(what.rfind("LMDB '" + path_ + "' is damaged: reading the record after key '" +
                             DatumLMDBKey(first_lost - 1) + "' failed: ",
                         0),
              0u)
        << what;
    EXPECT_NE(what.find("; check every record with `caffe_db verify " + path_ + "`"), string::npos)
        << what;
  }
}

// A damaged size field makes a record run past the end of the file: reading its value faults
// (SIGBUS), and the error names the key; a size larger than the whole file is refused unread.
TEST_F(DBTest, ARecordRunningPastTheEndOfTheFileIsAnErrorNamingItsKey) {
  WriteDatumLMDB(path_, 1000);
  const string data_file = path_ + "/data.mdb";
  const uint64_t page = MiddleLMDBLeafPage(data_file);
  const string key = FirstKeyOnLMDBPage(data_file, page);
  const uint64_t file_size = std::filesystem::file_size(data_file);
  auto read_value = [&] {
    std::unique_ptr<db::DB> database = db::GetDB("lmdb");
    database->Open(path_, db::READ);
    std::unique_ptr<db::Cursor> cursor = database->NewCursor();
    cursor->Seek(key);
    EXPECT_EQ(cursor->key(), key);
    cursor->value();
  };
  SetFirstLMDBValueSize(data_file, page, static_cast<uint32_t>(file_size - 16));
  EXPECT_EQ(ErrorOf(read_value), "LMDB '" + path_ + "' is damaged: reading the value of key '" +
                                     key +
                                     "' failed: SIGBUS (a page past the end of the file); check "
                                     "every record with `caffe_db verify " +
                                     path_ + "`");
  SetFirstLMDBValueSize(data_file, page, 0xFFFFFFF0u);
  EXPECT_NE(ErrorOf(read_value)
                .find("reading the value of key '" + key +
                      "' failed: LMDB gives it 4294967280 bytes, more than all " +
                      std::to_string(file_size) + " of data.mdb"),
            string::npos);
}

TEST_F(DBTest, ReadOnlyFolderIsReadWithoutALockFile) {
  // Another user's dataset: a folder (and lock file) this process may not write. Root may write
  // anything, so as root the reader runs in a child process as user nobody.
  Write({{"a", "1"}, {"b", "2"}}, 10);
  std::filesystem::remove(path_ + "/lock.mdb");  // a copied dataset often has none
  ASSERT_EQ(chmod(path_.c_str(), 0555), 0);
  ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
  ASSERT_EQ(chmod((path_ + "/data.mdb").c_str(), 0444), 0);
  auto read_all = [&]() -> int {
    try {
      std::unique_ptr<db::DB> database = db::GetDB("lmdb");
      database->Open(path_, db::READ);
      int count = 0;
      for (auto cursor = database->NewCursor(); cursor->valid(); cursor->Next()) ++count;
      return count;
    } catch (const Error&) {
      return -1;
    }
  };
  int count = -1;
  if (geteuid() == 0) {
    const pid_t pid = fork();
    if (pid == 0) _exit(setuid(65534) == 0 ? read_all() + 10 : 1);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_NE(WEXITSTATUS(status), 1) << "could not become user nobody";
    count = WEXITSTATUS(status) - 10;
  } else {
    count = read_all();
  }
  EXPECT_EQ(count, 2) << "the read-only database could not be read";
  EXPECT_FALSE(FileExists(path_ + "/lock.mdb"));
  chmod(path_.c_str(), 0755);
}

TEST_F(DBTest, AtomicWriterShowsTheDatabaseOnlyWhenFinished) {
  {
    db::AtomicDBWriter writer("lmdb", path_);
    EXPECT_EQ(writer.partial_path(), path_ + ".partial-" + std::to_string(getpid()));
    writer.transaction()->Put("a", "1");
    writer.transaction()->Commit();
    writer.transaction()->Put("b", "2");
    EXPECT_FALSE(FileExists(path_));
    EXPECT_TRUE(FileExists(writer.partial_path() + "/data.mdb"));
    writer.Finish();
    EXPECT_FALSE(FileExists(writer.partial_path()));
  }
  const std::map<string, string> expected = {{"a", "1"}, {"b", "2"}};
  EXPECT_EQ(ReadAll(), expected);
  // The finished database is refused as a new target.
  try {
    db::AtomicDBWriter again("lmdb", path_);
    FAIL() << "an existing database was accepted";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("already exists"), string::npos) << error.what();
  }
}

TEST_F(DBTest, AtomicWriterAbandonedLeavesNothing) {
  const string other = dir_.path() + "/other";
  {
    db::AtomicDBWriter writer("lmdb", other);
    writer.transaction()->Put("a", "1");
    writer.transaction()->Commit();
  }  // as after an error: destroyed unfinished
  EXPECT_TRUE(std::filesystem::is_empty(dir_.path()));
}

TEST_F(DBTest, AtomicWriterRemovesLeftoversOfDeadProcessesOnly) {
  // A process that has exited: its pid is free until reused.
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  waitpid(dead, nullptr, 0);
  const string dead_partial = path_ + ".partial-" + std::to_string(dead);
  const string live_partial = path_ + ".partial-" + std::to_string(getppid());  // our parent runs
  std::filesystem::create_directories(dead_partial);
  std::filesystem::create_directories(live_partial);
  db::AtomicDBWriter writer("lmdb", path_);
  writer.Finish();
  EXPECT_FALSE(FileExists(dead_partial));
  EXPECT_TRUE(FileExists(live_partial)) << "a running conversion's folder was removed";
  EXPECT_TRUE(FileExists(path_ + "/data.mdb"));
}

// Only in a build without LevelDB (test_db_leveldb.cpp tests it where it is built).
TEST(GetDBTest, LevelDBWithoutLevelDBIsRefusedWithAHintToUseLMDB) {
  try {
    db::GetDB("leveldb");
    GTEST_SKIP() << "this build has LevelDB";
  } catch (const Error&) {
  }
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
    EXPECT_NE(db::GetDB("LevelDB"), nullptr);
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("LevelDB is not built"), string::npos) << error.what();
  }
  try {
    db::GetDB("rocksdb");
    FAIL() << "an unknown backend was accepted";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("'rocksdb'"), string::npos) << error.what();
  }
}

}  // namespace
}  // namespace caffe
