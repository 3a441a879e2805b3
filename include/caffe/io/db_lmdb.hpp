// The LMDB implementation of db::DB. Readers open the environment read-only without thread-local
// reader slots (MDB_RDONLY | MDB_NOTLS), so a cursor may be created on one thread and used on a
// prefetch thread. A database whose lock file this process may not write (another user's
// dataset, a read-only share) is read without the lock (MDB_NOLOCK). Writers start with LMDB's
// default map size and double it whenever a commit hits MDB_MAP_FULL, instead of reserving a huge
// fixed map up front.
//
// A damaged database is an error naming it, never a signal: Open reads data.mdb's header first
// (lmdb_header.hpp: an empty, cut-short or foreign file is named as such), and a cursor reads
// each record inside TrapReadFaults (db_read_guard.hpp), so a damaged page that makes LMDB fault
// or fail its own checks throws DamagedDatabase naming the database and the last good key.
#ifndef CAFFE_IO_DB_LMDB_HPP_
#define CAFFE_IO_DB_LMDB_HPP_

#include <lmdb.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "caffe/io/db.hpp"
#include "caffe/io/lmdb_header.hpp"

namespace caffe {
namespace db {

/// Throws caffe::Error "<what>: <LMDB's message>" unless `status` is MDB_SUCCESS.
void LMDBCheck(int status, const string& what);

/// A cursor over one read-only transaction, which it owns (a consistent view of the database).
/// Every read of the map is trapped: a damaged page throws DamagedDatabase.
class LMDBCursor : public Cursor {
 public:
  /// Takes ownership of `txn` and `cursor`; positions at the first record.
  LMDBCursor(MDB_txn* txn, MDB_cursor* cursor, const string& source);
  ~LMDBCursor() override;
  void SeekToFirst() override { Move(MDB_FIRST, ""); }
  void Seek(const string& key) override;
  void Next() override { Move(MDB_NEXT, ""); }
  string key() const override;
  string value() const override;
  bool valid() const override { return valid_; }
  /// How many records LMDB counts in this cursor's database and snapshot (a walk that finds
  /// fewer met damaged pages that hid the rest).
  uint64_t RecordsInSnapshot() const;

 private:
  /// mdb_cursor_get(op); `seek_key` for MDB_SET_RANGE.
  void Move(MDB_cursor_op op, const string& seek_key);
  /// Copies the bytes `view` points to in the map into *out; false, with the *reason, when they
  /// cannot be read.
  bool CopyOut(const MDB_val& view, string* out, string* reason) const;
  /// Where a Move(op) reads, for its errors: "reading the record after key '...'".
  string Where(MDB_cursor_op op, const string& seek_key) const;
  [[noreturn]] void ThrowDamaged(const string& where, const string& reason) const;

  MDB_txn* txn_;
  MDB_cursor* cursor_;
  string source_;                   // for error messages
  mutable uint64_t file_size_ = 0;  // bytes of data.mdb: no record is larger
  MDB_val key_view_{0, nullptr};    // the current record, in the map
  MDB_val value_view_{0, nullptr};
  string key_;  // the current record's key; once the cursor ran past the end, the last one's
  bool read_any_ = false;
  bool valid_ = false;
};

/// Buffers records and writes them in one LMDB write transaction per Commit(), growing the
/// environment's map (doubling) and retrying when the map is full.
class LMDBTransaction : public Transaction {
 public:
  LMDBTransaction(MDB_env* env, const string& source) : env_(env), source_(source) {}
  void Put(const string& key, const string& value) override;
  void Commit() override;

 private:
  /// Writes the buffered records in one transaction; returns false on MDB_MAP_FULL (nothing of
  /// this batch is written then).
  bool TryCommit();
  void DoubleMapSize();

  MDB_env* env_;
  string source_;
  vector<std::pair<string, string>> records_;
};

/// An LMDB environment (a directory holding data.mdb and lock.mdb).
class LMDB : public DB {
 public:
  LMDB() = default;
  ~LMDB() override { Close(); }
  void Open(const string& source, Mode mode) override;
  void Close() override;
  std::unique_ptr<Cursor> NewCursor() override;
  std::unique_ptr<Transaction> NewTransaction() override;

 private:
  /// mdb_env_create, with LMDB's assertions routed to OnDatabaseLibraryAssertion.
  void CreateEnvironment();
  /// A cursor over the main database, or over LMDB's list of free pages.
  std::unique_ptr<LMDBCursor> OpenCursor(bool free_pages);
  /// For a data file that ends before the last page its header names: LMDB leaves pages it freed
  /// within the transaction that allocated them unwritten, so such a file is whole when every
  /// missing page is a free one. Throws the truncated-file error otherwise.
  void CheckMissingPagesAreFree(const LMDBHeader& header);

  MDB_env* env_ = nullptr;
  string source_;
  bool read_only_ = false;
};

}  // namespace db
}  // namespace caffe

#endif  // CAFFE_IO_DB_LMDB_HPP_
