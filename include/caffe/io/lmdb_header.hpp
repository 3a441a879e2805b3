// The header of an LMDB data file (data.mdb), read without LMDB: LMDB maps the file and reads
// the pages its header names, so a file cut short (a half-finished copy to a node) makes it fault
// with SIGBUS, and an empty one makes it fail with "Bad file descriptor". Reading the two meta
// pages first lets LMDB::Open say what is wrong with the file instead.
#ifndef CAFFE_IO_LMDB_HEADER_HPP_
#define CAFFE_IO_LMDB_HEADER_HPP_

#include <cstdint>
#include <string>

#include "caffe/common.hpp"

namespace caffe {
namespace db {

/// What the newer of an LMDB data file's two meta pages says (the one LMDB's readers use).
struct LMDBHeader {
  uint64_t file_size = 0;    // bytes of the file, from the file system
  uint32_t page_size = 0;    // bytes
  uint64_t last_page = 0;    // the highest page number in use: pages 0 .. last_page
  uint64_t transaction = 0;  // the id of the transaction that wrote this meta page
  uint64_t records = 0;      // records of the main database
  int meta_page = 0;         // which meta page is the newer: 0 or 1

  /// The bytes the pages 0 .. last_page take.
  uint64_t bytes_in_use() const { return (last_page + 1) * page_size; }
};

/// Reads and checks the two meta pages of `data_file`. Throws caffe::Error naming the file, what
/// was found and what was expected, when the file cannot be read, is empty or shorter than its
/// two meta pages, is not an LMDB data file, was written on a machine of the other byte order, has
/// another data format version, or holds a meta page that is not one. Whether the file holds
/// every page up to last_page is the caller's to check (see TruncatedLMDBMessage).
LMDBHeader ReadLMDBHeader(const string& data_file);

/// The one-line error for a data file shorter than the pages its header says are in use:
/// "'<file>' is N bytes but its header says the database has P pages of S bytes (B bytes): it
/// is truncated (an unfinished copy?)".
string TruncatedLMDBMessage(const string& data_file, const LMDBHeader& header);

}  // namespace db
}  // namespace caffe

#endif  // CAFFE_IO_LMDB_HEADER_HPP_
