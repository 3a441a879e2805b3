#include "caffe/io/db_leveldb.hpp"

#include <leveldb/db.h>
#include <leveldb/write_batch.h>

#include <filesystem>
#include <map>
#include <mutex>

#include "caffe/io/io.hpp"

namespace caffe {
namespace db {

namespace {

// The databases this process has open, by canonical folder: LevelDB locks a database for one
// open at a time, even within a process.
std::mutex open_mutex;
std::map<string, std::weak_ptr<leveldb::DB>>& OpenDatabases() {
  static auto* open = new std::map<string, std::weak_ptr<leveldb::DB>>();
  return *open;
}

void LevelDBCheck(const leveldb::Status& status, const string& what) {
  CAFFE_CHECK(status.ok()) << what << ": " << status.ToString();
}

}  // namespace

// ---- LevelDBCursor ---------------------------------------------------------------------------

LevelDBCursor::LevelDBCursor(std::shared_ptr<leveldb::DB> database, const string& source)
    : database_(std::move(database)), source_(source) {
  leveldb::ReadOptions options;
  options.fill_cache = false;  // one pass over the data after another: caching evicts itself
  iterator_.reset(database_->NewIterator(options));
  SeekToFirst();
}

LevelDBCursor::~LevelDBCursor() {
  iterator_.reset();  // before the database it reads
}

void LevelDBCursor::CheckStatus() const {
  if (!iterator_->Valid())
    LevelDBCheck(iterator_->status(), "cannot read LevelDB '" + source_ + "'");
}

void LevelDBCursor::SeekToFirst() {
  iterator_->SeekToFirst();
  CheckStatus();
}

void LevelDBCursor::Seek(const string& key) {
  iterator_->Seek(key);
  CheckStatus();
}

void LevelDBCursor::Next() {
  iterator_->Next();
  CheckStatus();
}

string LevelDBCursor::key() const {
  CHECK(iterator_->Valid()) << "key() of a LevelDB cursor past the end";
  return iterator_->key().ToString();
}

string LevelDBCursor::value() const {
  CHECK(iterator_->Valid()) << "value() of a LevelDB cursor past the end";
  return iterator_->value().ToString();
}

bool LevelDBCursor::valid() const { return iterator_->Valid(); }

// ---- LevelDBTransaction ----------------------------------------------------------------------

LevelDBTransaction::LevelDBTransaction(std::shared_ptr<leveldb::DB> database, const string& source)
    : database_(std::move(database)), batch_(new leveldb::WriteBatch()), source_(source) {}

LevelDBTransaction::~LevelDBTransaction() = default;

void LevelDBTransaction::Put(const string& key, const string& value) { batch_->Put(key, value); }

void LevelDBTransaction::Commit() {
  LevelDBCheck(database_->Write(leveldb::WriteOptions(), batch_.get()),
               "cannot write to LevelDB '" + source_ + "'");
  batch_->Clear();
}

// ---- LevelDB ---------------------------------------------------------------------------------

void LevelDB::Open(const string& source, Mode mode) {
  Close();
  source_ = source;
  read_only_ = (mode == READ);
  CheckDatabaseFolder(
      source, mode, "LevelDB", "a LevelDB", "CURRENT",
      FileExists(source + "/data.mdb") ? " (it is an LMDB: set `backend: LMDB`)" : "");
  std::error_code ignored;
  const string canonical = std::filesystem::weakly_canonical(source, ignored).string();
  std::lock_guard<std::mutex> lock(open_mutex);
  database_ = OpenDatabases()[canonical].lock();
  if (database_) return;  // open here already: share it
  leveldb::Options options;
  options.create_if_missing = (mode == NEW);
  options.error_if_exists = (mode == NEW);
  options.write_buffer_size = 64 << 20;  // fewer, larger files while a converter writes
  leveldb::DB* opened = nullptr;
  const leveldb::Status status = leveldb::DB::Open(options, source, &opened);
  if (!status.ok() && status.IsIOError() && status.ToString().find("lock") != string::npos) {
    CAFFE_THROW() << "cannot open LevelDB '" << source << "': another process has it open ("
                  << status.ToString() << "); LevelDB serves one process at a time, so for "
                  << "several processes (DDL learners) convert it to LMDB (caffe_db "
                  << "--backend=leveldb convert " << source << " NEW_LMDB)";
  }
  LevelDBCheck(status, "cannot open LevelDB '" + source + "'");
  database_.reset(opened);
  OpenDatabases()[canonical] = database_;
  LOG(INFO) << "Opened leveldb " << source;
}

std::unique_ptr<Cursor> LevelDB::NewCursor() {
  CHECK(database_) << "NewCursor on a closed LevelDB";
  return std::make_unique<LevelDBCursor>(database_, source_);
}

std::unique_ptr<Transaction> LevelDB::NewTransaction() {
  CHECK(database_) << "NewTransaction on a closed LevelDB";
  CAFFE_CHECK(!read_only_) << "LevelDB '" << source_ << "' was opened for reading; cannot write";
  return std::make_unique<LevelDBTransaction>(database_, source_);
}

}  // namespace db
}  // namespace caffe
