// Faults that a damaged database causes inside the database library, turned into errors that name
// the database. LMDB reads records straight from its memory map: a damaged page can send it to an
// address outside the map (SIGSEGV) or to a page past the end of a truncated data.mdb (SIGBUS),
// and its own consistency checks abort the process. TrapReadFaults runs one read so that such a
// fault returns as a ReadFault (the caller throws an error naming the database and the record);
// a thread marks the reads it cannot trap with a DatabaseReadScope, and a fault there prints one
// line naming the database and `caffe_db verify` and exits with status 1. A fault in a thread
// that reads no database goes on to the handler installed before (glog's stack trace, or the
// default: death by the signal).
#ifndef CAFFE_IO_DB_READ_GUARD_HPP_
#define CAFFE_IO_DB_READ_GUARD_HPP_

#include <cstddef>
#include <string>

#include "caffe/common.hpp"

namespace caffe {
namespace db {

/// Marks the calling thread as reading the database `source` of backend `kind` ("LMDB"), after
/// the record `last_key` ("" before the first), until destroyed. Installs the process's SIGSEGV
/// and SIGBUS handler the first time. The strings must outlive the scope unchanged; scopes nest.
class DatabaseReadScope {
 public:
  DatabaseReadScope(const char* kind, const string& source, const string& last_key);
  ~DatabaseReadScope();

 private:
  const char* outer_kind_;
  const char* outer_source_;
  size_t outer_source_size_;
  const char* outer_key_;
  size_t outer_key_size_;

  DISABLE_COPY_AND_ASSIGN(DatabaseReadScope);
};

/// How a trapped read ended: `signal` SIGSEGV or SIGBUS, or 0 when the database library's own
/// consistency check failed, whose message is `assertion`.
struct ReadFault {
  int signal = 0;
  string assertion;
  /// "SIGBUS (a page past the end of the file)", or "LMDB's own check: <its message>".
  string Describe() const;
};

/// Runs read(argument) so that a SIGSEGV or SIGBUS in the calling thread, or a failed assertion
/// of the database library (OnDatabaseLibraryAssertion), ends it: returns false and fills *fault;
/// true when read returned. The frames between here and the fault are abandoned, so `read` must
/// hold nothing that needs a destructor (a C library call, a memcpy).
bool TrapReadFaults(void (*read)(void*), void* argument, ReadFault* fault);

/// The database library's assertion callback (LMDB's mdb_env_set_assert): inside a trap the read
/// ends with the message; in a thread that reads a database, one line and exit status 1. Returns
/// elsewhere (a write), and LMDB then prints the message and aborts, as it always did.
void OnDatabaseLibraryAssertion(const char* message);

/// `key` for a message: bytes outside printable ASCII (and backslashes) written as \xNN, cut
/// after 64 bytes with "...".
string PrintableKey(const string& key);

}  // namespace db
}  // namespace caffe

#endif  // CAFFE_IO_DB_READ_GUARD_HPP_
