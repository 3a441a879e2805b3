#include "caffe/io/db_lmdb.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "caffe/io/io.hpp"

namespace caffe {
namespace db {

void LMDBCheck(int status, const string& what) {
  CAFFE_CHECK(status == MDB_SUCCESS) << what << ": " << mdb_strerror(status);
}

// ---- LMDBCursor ----------------------------------------------------------------------------

LMDBCursor::LMDBCursor(MDB_txn* txn, MDB_cursor* cursor, const string& source)
    : txn_(txn), cursor_(cursor), source_(source) {
  SeekToFirst();
}

LMDBCursor::~LMDBCursor() {
  mdb_cursor_close(cursor_);
  mdb_txn_abort(txn_);
}

void LMDBCursor::Move(MDB_cursor_op op) {
  int status = mdb_cursor_get(cursor_, &key_, &value_, op);
  if (status == MDB_NOTFOUND) {
    valid_ = false;
    return;
  }
  LMDBCheck(status, "cannot read LMDB '" + source_ + "'");
  valid_ = true;
}

void LMDBCursor::Seek(const string& key) {
  if (key.empty()) {  // LMDB rejects empty keys; every key is >= ""
    SeekToFirst();
    return;
  }
  // MDB_SET_RANGE reads the key from key_ and replaces it with the key found.
  key_.mv_size = key.size();
  key_.mv_data = const_cast<char*>(key.data());
  Move(MDB_SET_RANGE);
}

string LMDBCursor::key() const {
  CHECK(valid_) << "key() of an LMDB cursor past the end";
  return string(static_cast<const char*>(key_.mv_data), key_.mv_size);
}

string LMDBCursor::value() const {
  CHECK(valid_) << "value() of an LMDB cursor past the end";
  return string(static_cast<const char*>(value_.mv_data), value_.mv_size);
}

// ---- LMDBTransaction -----------------------------------------------------------------------

void LMDBTransaction::Put(const string& key, const string& value) {
  CAFFE_CHECK(!key.empty()) << "cannot write a record with an empty key to LMDB '" << source_
                            << "'";
  records_.emplace_back(key, value);
}

bool LMDBTransaction::TryCommit() {
  MDB_txn* txn = nullptr;
  int status = mdb_txn_begin(env_, nullptr, 0, &txn);
  if (status == MDB_MAP_RESIZED) {
    // Another process grew the map: adopt its size and start again.
    LMDBCheck(mdb_env_set_mapsize(env_, 0), "cannot adopt the new map size of '" + source_ + "'");
    status = mdb_txn_begin(env_, nullptr, 0, &txn);
  }
  LMDBCheck(status, "cannot start a write transaction on LMDB '" + source_ + "'");
  MDB_dbi dbi;
  status = mdb_dbi_open(txn, nullptr, 0, &dbi);
  if (status != MDB_SUCCESS) {
    mdb_txn_abort(txn);
    LMDBCheck(status, "cannot open the database in LMDB '" + source_ + "'");
  }
  for (const auto& record : records_) {
    MDB_val key{record.first.size(), const_cast<char*>(record.first.data())};
    MDB_val value{record.second.size(), const_cast<char*>(record.second.data())};
    status = mdb_put(txn, dbi, &key, &value, 0);
    if (status != MDB_SUCCESS) {
      mdb_txn_abort(txn);
      if (status == MDB_MAP_FULL) return false;
      LMDBCheck(status, "cannot write key '" + record.first + "' to LMDB '" + source_ + "'");
    }
  }
  status = mdb_txn_commit(txn);  // frees txn whatever the outcome
  if (status == MDB_MAP_FULL) return false;
  LMDBCheck(status, "cannot commit to LMDB '" + source_ + "'");
  return true;
}

void LMDBTransaction::DoubleMapSize() {
  MDB_envinfo info;
  LMDBCheck(mdb_env_info(env_, &info), "cannot query LMDB '" + source_ + "'");
  size_t new_size = info.me_mapsize * 2;
  VLOG(1) << "LMDB '" << source_ << "' is full; growing its map to " << new_size << " bytes";
  LMDBCheck(mdb_env_set_mapsize(env_, new_size), "cannot grow the map of LMDB '" + source_ +
                                                     "' to " + std::to_string(new_size) + " bytes");
}

void LMDBTransaction::Commit() {
  if (records_.empty()) return;
  while (!TryCommit()) DoubleMapSize();
  records_.clear();
}

// ---- LMDB ----------------------------------------------------------------------------------

void LMDB::Open(const string& source, Mode mode) {
  CHECK(env_ == nullptr) << "LMDB '" << source_ << "' is already open";
  source_ = source;
  read_only_ = (mode == READ);
  CheckDatabaseFolder(source, mode, "LMDB", "an LMDB", "data.mdb");
  if (mode == NEW) {
    CAFFE_CHECK(mkdir(source.c_str(), 0755) == 0)
        << "cannot create LMDB directory '" << source << "': " << std::strerror(errno);
  }
  LMDBCheck(mdb_env_create(&env_), "cannot create an LMDB environment for '" + source + "'");
  unsigned int flags = read_only_ ? (MDB_RDONLY | MDB_NOTLS) : 0;
  if (read_only_) {
    // Readers register in lock.mdb, which needs write access (and the folder's, to create it).
    // Another user's dataset or a read-only share gives none: read it without the lock, which is
    // safe as long as nobody writes the database meanwhile (a published dataset).
    const string lock_file = source + "/lock.mdb";
    const bool can_lock = FileExists(lock_file) ? access(lock_file.c_str(), R_OK | W_OK) == 0
                                                : access(source.c_str(), W_OK) == 0;
    if (!can_lock) {
      LOG(INFO) << "LMDB '" << source << "' is not writable; reading it without locking";
      flags |= MDB_NOLOCK;
    }
  }
  int status = mdb_env_open(env_, source.c_str(), flags, 0664);
  if (status == EACCES && read_only_) {
    // A dataset on read-only storage cannot take the lock file; readers need no lock when no
    // writer runs, which is the case for a published dataset.
    LOG(INFO) << "LMDB '" << source << "' is not writable; reading it without locking";
    mdb_env_close(env_);
    LMDBCheck(mdb_env_create(&env_), "cannot create an LMDB environment for '" + source + "'");
    status = mdb_env_open(env_, source.c_str(), flags | MDB_NOLOCK, 0664);
  }
  if (status != MDB_SUCCESS) {
    mdb_env_close(env_);
    env_ = nullptr;
    LMDBCheck(status, "cannot open LMDB '" + source + "'");
  }
  LOG(INFO) << "Opened lmdb " << source;
}

void LMDB::Close() {
  if (env_ == nullptr) return;
  mdb_env_close(env_);
  env_ = nullptr;
}

std::unique_ptr<Cursor> LMDB::NewCursor() {
  CHECK(env_ != nullptr) << "NewCursor on a closed LMDB";
  MDB_txn* txn = nullptr;
  LMDBCheck(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn),
            "cannot start a read transaction on LMDB '" + source_ + "'");
  MDB_dbi dbi;
  MDB_cursor* cursor = nullptr;
  int status = mdb_dbi_open(txn, nullptr, 0, &dbi);
  if (status == MDB_SUCCESS) status = mdb_cursor_open(txn, dbi, &cursor);
  if (status != MDB_SUCCESS) {
    mdb_txn_abort(txn);
    LMDBCheck(status, "cannot open a cursor on LMDB '" + source_ + "'");
  }
  return std::make_unique<LMDBCursor>(txn, cursor, source_);
}

std::unique_ptr<Transaction> LMDB::NewTransaction() {
  CHECK(env_ != nullptr) << "NewTransaction on a closed LMDB";
  CAFFE_CHECK(!read_only_) << "LMDB '" << source_ << "' was opened for reading; cannot write";
  return std::make_unique<LMDBTransaction>(env_, source_);
}

}  // namespace db
}  // namespace caffe
