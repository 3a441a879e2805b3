// LevelDB databases (BVLC's default data_param backend, and its siamese and older examples' format)
// behind the same DB interface as LMDB, where the build found LevelDB. LevelDB lets one process
// at a time open a database; within this process every DB object on the same folder shares one
// handle, so several data layers (one solver per GPU, a train and a test net) read it together.
#ifndef CAFFE_IO_DB_LEVELDB_HPP_
#define CAFFE_IO_DB_LEVELDB_HPP_

#include <memory>
#include <string>

#include "caffe/io/db.hpp"

namespace leveldb {
class DB;
class Iterator;
class WriteBatch;
}  // namespace leveldb

namespace caffe {
namespace db {

class LevelDBCursor : public Cursor {
 public:
  /// Walks `database` (kept open while the cursor lives) from its first record.
  LevelDBCursor(std::shared_ptr<leveldb::DB> database, const string& source);
  ~LevelDBCursor() override;
  void SeekToFirst() override;
  void Seek(const string& key) override;
  void Next() override;
  string key() const override;
  string value() const override;
  bool valid() const override;

 private:
  /// Throws naming the database when the iterator stopped on an error, not at the end.
  void CheckStatus() const;

  std::shared_ptr<leveldb::DB> database_;
  std::unique_ptr<leveldb::Iterator> iterator_;
  string source_;
};

class LevelDBTransaction : public Transaction {
 public:
  LevelDBTransaction(std::shared_ptr<leveldb::DB> database, const string& source);
  ~LevelDBTransaction() override;
  void Put(const string& key, const string& value) override;
  void Commit() override;

 private:
  std::shared_ptr<leveldb::DB> database_;
  std::unique_ptr<leveldb::WriteBatch> batch_;
  string source_;
};

class LevelDB : public DB {
 public:
  LevelDB() = default;
  ~LevelDB() override { Close(); }
  void Open(const string& source, Mode mode) override;
  void Close() override { database_.reset(); }
  std::unique_ptr<Cursor> NewCursor() override;
  std::unique_ptr<Transaction> NewTransaction() override;

 private:
  std::shared_ptr<leveldb::DB> database_;
  string source_;
  bool read_only_ = false;
};

}  // namespace db
}  // namespace caffe

#endif  // CAFFE_IO_DB_LEVELDB_HPP_
