#include "caffe/io/db_lmdb.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "caffe/io/db_read_guard.hpp"
#include "caffe/io/io.hpp"

namespace caffe {
namespace db {

void LMDBCheck(int status, const string& what) {
  CAFFE_CHECK(status == MDB_SUCCESS) << what << ": " << mdb_strerror(status);
}

// ---- LMDBCursor ----------------------------------------------------------------------------

namespace {

const string kNoKey;

// The reads TrapReadFaults runs: plain code, nothing to destroy.
struct CursorGet {
  MDB_cursor* cursor;
  MDB_val* key;
  MDB_val* value;
  MDB_cursor_op op;
  int status;
};
void RunCursorGet(void* argument) {
  auto* get = static_cast<CursorGet*>(argument);
  get->status = mdb_cursor_get(get->cursor, get->key, get->value, get->op);
}

struct Copy {
  const void* from;
  void* to;
  size_t size;
};
void RunCopy(void* argument) {
  const auto* copy = static_cast<const Copy*>(argument);
  if (copy->size > 0) std::memcpy(copy->to, copy->from, copy->size);
}

void OnLMDBAssertion(MDB_env* /*env*/, const char* message) { OnDatabaseLibraryAssertion(message); }

uint64_t SizeOfDataFile(MDB_txn* txn) {
  mdb_filehandle_t fd;
  struct stat info;
  if (mdb_env_get_fd(mdb_txn_env(txn), &fd) != MDB_SUCCESS || fstat(fd, &info) != 0) {
    return UINT64_MAX;  // unknown: no bound
  }
  return static_cast<uint64_t>(info.st_size);
}

}  // namespace

LMDBCursor::LMDBCursor(MDB_txn* txn, MDB_cursor* cursor, const string& source)
    : txn_(txn), cursor_(cursor), source_(source), file_size_(SizeOfDataFile(txn)) {
  try {
    SeekToFirst();
  } catch (...) {
    mdb_cursor_close(cursor_);
    mdb_txn_abort(txn_);
    throw;
  }
}

LMDBCursor::~LMDBCursor() {
  mdb_cursor_close(cursor_);
  mdb_txn_abort(txn_);
}

string LMDBCursor::Where(MDB_cursor_op op, const string& seek_key) const {
  if (op == MDB_SET_RANGE) return "seeking key '" + PrintableKey(seek_key) + "'";
  if (op == MDB_NEXT && read_any_) {
    return "reading the record after key '" + PrintableKey(key_) + "'";
  }
  return "reading the first record";
}

void LMDBCursor::ThrowDamaged(const string& where, const string& reason) const {
  throw DamagedDatabase("LMDB", source_, where, reason);
}

bool LMDBCursor::CopyOut(const MDB_val& view, string* out, string* reason) const {
  // A damaged size field can name gigabytes: no record is larger than the file (which a writer
  // may have grown since).
  if (view.mv_size > file_size_) file_size_ = SizeOfDataFile(txn_);
  if (view.mv_size > file_size_) {
    *reason = "LMDB gives it " + std::to_string(view.mv_size) + " bytes, more than all " +
              std::to_string(file_size_) + " of data.mdb";
    return false;
  }
  out->assign(view.mv_size, '\0');
  Copy copy{view.mv_data, &(*out)[0], view.mv_size};
  ReadFault fault;
  if (TrapReadFaults(&RunCopy, &copy, &fault)) return true;
  *reason = fault.Describe();
  return false;
}

void LMDBCursor::Move(MDB_cursor_op op, const string& seek_key) {
  CursorGet get{cursor_, &key_view_, &value_view_, op, MDB_SUCCESS};
  ReadFault fault;  // a trapped read needs no DatabaseReadScope: its faults come back here
  if (!TrapReadFaults(&RunCursorGet, &get, &fault)) {
    ThrowDamaged(Where(op, seek_key), fault.Describe());
  }
  if (get.status == MDB_NOTFOUND) {
    valid_ = false;
    return;
  }
  if (get.status == MDB_CORRUPTED || get.status == MDB_PAGE_NOTFOUND) {
    ThrowDamaged(Where(op, seek_key), mdb_strerror(get.status));
  }
  if (get.status != MDB_SUCCESS) {  // the message is built only when needed: this runs per record
    LMDBCheck(get.status, "cannot read LMDB '" + source_ + "' (" + Where(op, seek_key) + ")");
  }
  string key, reason;
  if (!CopyOut(key_view_, &key, &reason)) ThrowDamaged(Where(op, seek_key), reason);
  key_.swap(key);
  read_any_ = true;
  valid_ = true;
}

void LMDBCursor::Seek(const string& key) {
  if (key.empty()) {  // LMDB rejects empty keys; every key is >= ""
    SeekToFirst();
    return;
  }
  // MDB_SET_RANGE reads the key from key_view_ and replaces it with the key found.
  key_view_.mv_size = key.size();
  key_view_.mv_data = const_cast<char*>(key.data());
  Move(MDB_SET_RANGE, key);
}

string LMDBCursor::key() const {
  CHECK(valid_) << "key() of an LMDB cursor past the end";
  return key_;
}

string LMDBCursor::value() const {
  CHECK(valid_) << "value() of an LMDB cursor past the end";
  string value, reason;
  if (!CopyOut(value_view_, &value, &reason)) {
    ThrowDamaged("reading the value of key '" + PrintableKey(key_) + "'", reason);
  }
  return value;
}

uint64_t LMDBCursor::RecordsInSnapshot() const {
  MDB_stat stat;
  DatabaseReadScope reading("LMDB", source_, key_);
  LMDBCheck(mdb_stat(txn_, mdb_cursor_dbi(cursor_), &stat),
            "cannot count the records of LMDB '" + source_ + "'");
  return stat.ms_entries;
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
  CheckDatabaseFolder(
      source, mode, "LMDB", "an LMDB", "data.mdb",
      FileExists(source + "/lock.mdb") ? " (only its lock.mdb is there: an unfinished copy?)" : "");
  LMDBHeader header;
  if (mode == NEW) {
    CAFFE_CHECK(mkdir(source.c_str(), 0755) == 0)
        << "cannot create LMDB directory '" << source << "': " << std::strerror(errno);
  } else {
    // Before LMDB maps the file: an empty, cut-short or foreign data.mdb is named as such.
    header = ReadLMDBHeader(source + "/data.mdb");
  }
  CreateEnvironment();
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
    CreateEnvironment();
    status = mdb_env_open(env_, source.c_str(), flags | MDB_NOLOCK, 0664);
  }
  if (status != MDB_SUCCESS) {
    mdb_env_close(env_);
    env_ = nullptr;
    LMDBCheck(status, "cannot open LMDB '" + source + "'");
  }
  if (header.file_size < header.bytes_in_use()) {
    try {
      CheckMissingPagesAreFree(header);
    } catch (...) {
      Close();
      throw;
    }
  }
  LOG(INFO) << "Opened lmdb " << source;
}

void LMDB::CreateEnvironment() {
  LMDBCheck(mdb_env_create(&env_), "cannot create an LMDB environment for '" + source_ + "'");
  // LMDB's consistency checks, failing on a damaged page, end the read instead of the process.
  mdb_env_set_assert(env_, &OnLMDBAssertion);
}

void LMDB::CheckMissingPagesAreFree(const LMDBHeader& header) {
  const string data_file = source_ + "/data.mdb";
  const uint64_t first_missing = header.file_size / header.page_size;  // a partial page is missing
  vector<bool> is_free(header.last_page + 1 - first_missing, false);
  try {
    for (auto list = OpenCursor(/*free_pages=*/true); list->valid(); list->Next()) {
      // A record of LMDB's free-page list (keyed by transaction): a count, then that many page
      // numbers, 8 bytes each.
      const string pages = list->value();
      uint64_t count = 0;
      if (pages.size() >= sizeof(count)) std::memcpy(&count, pages.data(), sizeof(count));
      for (uint64_t i = 1; i <= count && (i + 1) * sizeof(uint64_t) <= pages.size(); ++i) {
        uint64_t page;
        std::memcpy(&page, pages.data() + i * sizeof(page), sizeof(page));
        if (page >= first_missing && page <= header.last_page) is_free[page - first_missing] = true;
      }
    }
  } catch (const Error&) {
    CAFFE_THROW() << TruncatedLMDBMessage(data_file, header);  // the list itself is cut off
  }
  CAFFE_CHECK(std::find(is_free.begin(), is_free.end(), false) == is_free.end())
      << TruncatedLMDBMessage(data_file, header);
  VLOG(1) << "'" << data_file << "' ends before its last " << is_free.size()
          << " pages, which are all free";
}

void LMDB::Close() {
  if (env_ == nullptr) return;
  mdb_env_close(env_);
  env_ = nullptr;
}

std::unique_ptr<Cursor> LMDB::NewCursor() { return OpenCursor(/*free_pages=*/false); }

std::unique_ptr<LMDBCursor> LMDB::OpenCursor(bool free_pages) {
  CHECK(env_ != nullptr) << "NewCursor on a closed LMDB";
  MDB_txn* txn = nullptr;
  {
    DatabaseReadScope reading("LMDB", source_, kNoKey);  // the transaction reads the meta pages
    LMDBCheck(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn),
              "cannot start a read transaction on LMDB '" + source_ + "'");
  }
  MDB_dbi dbi = 0;  // LMDB's own database 0 is its list of free pages
  MDB_cursor* cursor = nullptr;
  int status = free_pages ? MDB_SUCCESS : mdb_dbi_open(txn, nullptr, 0, &dbi);
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
