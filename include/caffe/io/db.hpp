// Key-value databases of records (Datum protos) as the data layers and the converter tools use
// them: open a database, walk it in key order with a Cursor, write it through a Transaction. The
// interface is BVLC's, with Seek added (to resume where a snapshot left off). LMDB always;
// LevelDB where the build found libleveldb (db_leveldb.hpp), else asking for it is a caffe::Error
// that says so.
#ifndef CAFFE_IO_DB_HPP_
#define CAFFE_IO_DB_HPP_

#include <memory>
#include <string>

#include "caffe/common.hpp"
#include "caffe/proto/caffe.pb.h"

namespace caffe {
namespace db {

/// READ: an existing database, read-only. WRITE: an existing database, for adding records.
/// NEW: creates the database; it must not exist yet.
enum Mode { READ, WRITE, NEW };

/// Walks a database's records in key order (byte-wise). key() and value() may only be called
/// while valid().
class Cursor {
 public:
  Cursor() = default;
  virtual ~Cursor() = default;
  virtual void SeekToFirst() = 0;
  /// Moves to the first record whose key is >= `key` (invalid if there is none).
  virtual void Seek(const string& key) = 0;
  virtual void Next() = 0;
  virtual string key() const = 0;
  virtual string value() const = 0;
  virtual bool valid() const = 0;

  DISABLE_COPY_AND_ASSIGN(Cursor);
};

/// Collects Put()s and writes them together on Commit(); usable again after Commit().
class Transaction {
 public:
  Transaction() = default;
  virtual ~Transaction() = default;
  /// Stores (or replaces) a record; nothing is written until Commit().
  virtual void Put(const string& key, const string& value) = 0;
  virtual void Commit() = 0;

  DISABLE_COPY_AND_ASSIGN(Transaction);
};

/// A database on disk. Open throws caffe::Error naming the path when it cannot be opened.
class DB {
 public:
  DB() = default;
  virtual ~DB() = default;
  virtual void Open(const string& source, Mode mode) = 0;
  virtual void Close() = 0;
  /// A cursor positioned at the first record. The database must stay open while it is used.
  virtual std::unique_ptr<Cursor> NewCursor() = 0;
  virtual std::unique_ptr<Transaction> NewTransaction() = 0;

  DISABLE_COPY_AND_ASSIGN(DB);
};

/// A database whose bytes are damaged: a page or a record its library cannot read, or a read that
/// faulted (db_read_guard.hpp). what() is the whole line, "<kind> '<source>' is damaged: <where>
/// failed: <reason>; check every record with `caffe_db verify <source>`"; where() ("reading the
/// record after key '00000041'") and reason() are its parts.
class DamagedDatabase : public Error {
 public:
  DamagedDatabase(const string& kind, const string& source, const string& where,
                  const string& reason);
  const string& where() const { return where_; }
  const string& reason() const { return reason_; }

 private:
  string where_, reason_;
};

/// The checks a backend makes before it opens `source` in `mode`, for its errors: NEW, that
/// nothing is there yet; READ and WRITE, that it is a folder holding `marker`, the file every
/// database of the backend has. `kind` names the backend ("LMDB"), `a_kind` with its article
/// ("an LMDB"); `hint` is added to the not-a-database error. Throws caffe::Error naming the path.
void CheckDatabaseFolder(const string& source, Mode mode, const string& kind, const string& a_kind,
                         const string& marker, const string& hint = "");

/// Writes a new database that appears at its path only when complete, for the converter tools.
/// The records go into "<path>.partial-<pid>" beside it, and Finish() renames that folder to
/// `path`. Destroyed unfinished (after an error), it removes the folder; a process killed while
/// writing leaves only the ".partial-<pid>" folder, never something at `path` that looks like a
/// finished database, and the next writer for the same path removes such leftovers of processes
/// that no longer run.
class AtomicDBWriter {
 public:
  /// Throws caffe::Error when `path` exists already or the folder cannot be created.
  AtomicDBWriter(const string& backend, const string& path);
  ~AtomicDBWriter();
  /// The transaction to Put() records into; Commit() it in batches.
  Transaction* transaction() { return txn_.get(); }
  /// Commits what is left, closes the database and renames it to its path.
  void Finish();
  const string& partial_path() const { return partial_path_; }

 private:
  string path_, partial_path_;
  std::unique_ptr<DB> db_;
  std::unique_ptr<Transaction> txn_;
  bool finished_ = false;

  DISABLE_COPY_AND_ASSIGN(AtomicDBWriter);
};

/// The database for a data layer's `backend:`: LMDB, or LEVELDB (the proto's default), which in a
/// build without LevelDB is a caffe::Error telling the user to convert to LMDB.
std::unique_ptr<DB> GetDB(DataParameter::DB backend);
/// The database for a tool's --backend flag: "lmdb" or "leveldb" (any case).
std::unique_ptr<DB> GetDB(const string& backend);
/// Whether this build reads and writes LevelDB (libleveldb-dev was found when it was built).
bool HaveLevelDB();

}  // namespace db
}  // namespace caffe

#endif  // CAFFE_IO_DB_HPP_
