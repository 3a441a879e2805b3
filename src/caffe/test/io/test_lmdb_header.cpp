// The header of an LMDB data file read without LMDB: what it says agrees with LMDB's own figures,
// the newer meta page wins, and an empty, cut-short, foreign, other-byte-order, other-version or
// damaged header is one error naming the file, what was found and what was expected.
#include <lmdb.h>

#include <string>

#include "caffe/io/db.hpp"
#include "caffe/io/lmdb_header.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/lmdb_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {
namespace {

class LMDBHeaderTest : public ::testing::Test {
 protected:
  LMDBHeaderTest()
      : dir_(MakeTempDir("caffe_test_lmdb_header")),
        db_(dir_.path() + "/db"),
        data_file_(db_ + "/data.mdb") {}

  /// What LMDB itself says of the database: page size, last page, last transaction, records.
  struct Figures {
    unsigned int page_size = 0;
    size_t last_page = 0, transaction = 0, records = 0;
  };
  Figures LMDBFigures() {
    Figures figures;
    MDB_env* env = nullptr;
    EXPECT_EQ(mdb_env_create(&env), MDB_SUCCESS);
    EXPECT_EQ(mdb_env_open(env, db_.c_str(), MDB_RDONLY, 0664), MDB_SUCCESS);
    MDB_envinfo info;
    MDB_stat stat;
    EXPECT_EQ(mdb_env_info(env, &info), MDB_SUCCESS);
    EXPECT_EQ(mdb_env_stat(env, &stat), MDB_SUCCESS);
    mdb_env_close(env);
    figures.page_size = stat.ms_psize;
    figures.last_page = info.me_last_pgno;
    figures.transaction = info.me_last_txnid;
    figures.records = stat.ms_entries;
    return figures;
  }

  /// The error ReadLMDBHeader throws for data_file_, or "" when it throws none.
  string HeaderError() {
    return ErrorOf([&] { db::ReadLMDBHeader(data_file_); });
  }

  ScopedTempDir dir_;
  string db_, data_file_;
};

TEST_F(LMDBHeaderTest, AgreesWithLMDBsOwnFigures) {
  WriteDatumLMDB(db_, 1000);
  const db::LMDBHeader header = db::ReadLMDBHeader(data_file_);
  const Figures figures = LMDBFigures();
  EXPECT_EQ(header.page_size, figures.page_size);
  EXPECT_EQ(header.last_page, figures.last_page);
  EXPECT_EQ(header.transaction, figures.transaction);
  EXPECT_EQ(header.records, 1000u);
  EXPECT_EQ(header.file_size, std::filesystem::file_size(data_file_));
  EXPECT_GE(header.file_size, header.bytes_in_use());
  EXPECT_EQ(header.bytes_in_use(), (figures.last_page + 1) * figures.page_size);
}

TEST_F(LMDBHeaderTest, TheNewerMetaPageWins) {
  // Transaction N writes meta page N % 2: after 1, 2 and 3 commits the newer one alternates.
  for (int commit = 1; commit <= 3; ++commit) {
    {
      // Closed before LMDB's own reader opens it: one process must not open an LMDB twice.
      std::unique_ptr<db::DB> database = db::GetDB("lmdb");
      database->Open(db_, commit == 1 ? db::NEW : db::WRITE);
      std::unique_ptr<db::Transaction> txn = database->NewTransaction();
      txn->Put(DatumLMDBKey(commit), string(100 * commit, 'x'));
      txn->Commit();
    }
    const db::LMDBHeader header = db::ReadLMDBHeader(data_file_);
    const Figures figures = LMDBFigures();
    EXPECT_EQ(header.transaction, figures.transaction) << "after commit " << commit;
    EXPECT_EQ(header.meta_page, static_cast<int>(figures.transaction % 2));
    EXPECT_EQ(header.records, static_cast<uint64_t>(commit));
    EXPECT_EQ(header.last_page, figures.last_page);
  }
}

TEST_F(LMDBHeaderTest, EmptyOrCutShortFilesAreTruncated) {
  WriteDatumLMDB(db_, 10);
  const uint32_t page_size = db::ReadLMDBHeader(data_file_).page_size;
  TruncateFile(data_file_, page_size + 100);  // inside the second meta page
  EXPECT_EQ(HeaderError(), "'" + data_file_ + "' is " + std::to_string(page_size + 100) +
                               " bytes but its second meta page ends at byte " +
                               std::to_string(page_size + 152) + " (pages of " +
                               std::to_string(page_size) +
                               " bytes): it is truncated (an unfinished copy?)");
  TruncateFile(data_file_, 100);
  EXPECT_EQ(HeaderError(), "'" + data_file_ +
                               "' is 100 bytes but an LMDB data file starts with two meta pages, "
                               "the first alone 152 bytes long: it is truncated (an unfinished "
                               "copy?)");
  TruncateFile(data_file_, 0);
  EXPECT_EQ(HeaderError(), "'" + data_file_ +
                               "' is empty (0 bytes) but an LMDB data file starts with two meta "
                               "pages, the first alone 152 bytes long: it is truncated (an "
                               "unfinished copy?)");
}

TEST_F(LMDBHeaderTest, TruncatedMessageGivesTheSizeThePagesNeed) {
  db::LMDBHeader header;
  header.file_size = 1048576;
  header.page_size = 4096;
  header.last_page = 511;
  EXPECT_EQ(db::TruncatedLMDBMessage("d/data.mdb", header),
            "'d/data.mdb' is 1048576 bytes but its header says the database has 512 pages of 4096 "
            "bytes (2097152 bytes): it is truncated (an unfinished copy?)");
}

TEST_F(LMDBHeaderTest, AFileThatIsNoLMDBIsNamed) {
  std::filesystem::create_directory(db_);
  WriteWholeFile(data_file_, string(10000, '\x01'));
  EXPECT_EQ(HeaderError(), "'" + data_file_ +
                               "' is not an LMDB data file: meta page 0 holds 0x1010101 where "
                               "LMDB's magic number 0xBEEFC0DE belongs");
  EXPECT_NE(ErrorOf([&] {
              db::ReadLMDBHeader(db_ + "/missing.mdb");
            }).find("cannot read '" + db_ + "/missing.mdb': No such file"),
            string::npos);
}

TEST_F(LMDBHeaderTest, DamagedFieldsAreNamed) {
  WriteDatumLMDB(db_, 10);
  const string healthy = ReadWholeFile(data_file_);
  const uint32_t page_size = db::ReadLMDBHeader(data_file_).page_size;
  auto damage = [&](uint64_t offset, const string& bytes) {
    WriteWholeFile(data_file_, healthy);
    OverwriteBytes(data_file_, offset, bytes);
    return HeaderError();
  };
  EXPECT_EQ(damage(16, "\xBE\xEF\xC0\xDE"),
            "'" + data_file_ +
                "' was written on a machine of the other byte order (its magic number reads "
                "0xDEC0EFBE): dump it there with mdb_dump and load it here with mdb_load");
  EXPECT_EQ(damage(page_size + 20, string("\xE7\x03\x00\x00", 4)),
            "'" + data_file_ + "' has LMDB data format version 999 but this LMDB reads version 1");
  EXPECT_EQ(damage(page_size + 10, string("\x02\x00", 2)),
            "'" + data_file_ +
                "': page 1 should be a meta page (flag 0x8) but its flags are 0x2: the header is "
                "damaged");
  EXPECT_EQ(damage(40, string("\xE8\x03\x00\x00", 4)),
            "'" + data_file_ +
                "': meta page 0 names a page size of 1000 bytes where LMDB's is a power of two "
                "from 512 to 65536: the header is damaged");
  EXPECT_NE(
      damage(136, string(8, '\xff')).find("says page 18446744073709551615 is the last in use"),
      string::npos);
  EXPECT_EQ(damage(page_size + 40, string("\x00\x04\x00\x00", 4)),
            "'" + data_file_ + "': its meta pages name different page sizes (" +
                std::to_string(page_size) + " and 1024 bytes): the header is damaged");
  WriteWholeFile(data_file_, healthy);
  EXPECT_EQ(HeaderError(), "");
}

}  // namespace
}  // namespace caffe
