#include "caffe/io/db.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "caffe/io/db_lmdb.hpp"
#include "caffe/io/io.hpp"
#ifdef CAFFE_HAVE_LEVELDB  // defined for this file where CMake found LevelDB
#include "caffe/io/db_leveldb.hpp"
#endif

namespace caffe {
namespace db {

namespace {

std::unique_ptr<DB> NewLevelDB() {
#ifdef CAFFE_HAVE_LEVELDB
  return std::make_unique<LevelDB>();
#else
  CAFFE_THROW() << "LevelDB is not built into this Caffe (libleveldb-dev was not found when it "
                   "was built); convert the data to LMDB (e.g. convert_imageset --backend=lmdb) "
                   "and set `backend: LMDB` in data_param";
#endif
}

}  // namespace

std::unique_ptr<DB> GetDB(DataParameter::DB backend) {
  switch (backend) {
    case DataParameter::LMDB:
      return std::make_unique<LMDB>();
    case DataParameter::LEVELDB:
      return NewLevelDB();
  }
  CAFFE_THROW() << "unknown database backend " << static_cast<int>(backend)
                << "; known: LMDB, LEVELDB";
}

std::unique_ptr<DB> GetDB(const string& backend) {
  string name = backend;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (name == "lmdb") return std::make_unique<LMDB>();
  if (name == "leveldb") return NewLevelDB();
  CAFFE_THROW() << "unknown database backend '" << backend << "'; known: lmdb, leveldb";
}

bool HaveLevelDB() {
#ifdef CAFFE_HAVE_LEVELDB
  return true;
#else
  return false;
#endif
}

DamagedDatabase::DamagedDatabase(const string& kind, const string& source, const string& where,
                                 const string& reason)
    : Error(kind + " '" + source + "' is damaged: " + where + " failed: " + reason +
            "; check every record with `caffe_db verify " + source + "`"),
      where_(where),
      reason_(reason) {}

void CheckDatabaseFolder(const string& source, Mode mode, const string& kind, const string& a_kind,
                         const string& marker, const string& hint) {
  if (mode == NEW) {
    CAFFE_CHECK(!FileExists(source))
        << "cannot create " << kind << " '" << source << "': it already exists (remove it first)";
    return;
  }
  CAFFE_CHECK(IsDirectory(source))
      << kind << " '" << source << "' "
      << (FileExists(source)
              ? "is not a directory (" + a_kind + " is a directory holding " + marker + ")"
              : "does not exist");
  CAFFE_CHECK(FileExists(source + "/" + marker))
      << "'" << source << "' is not " << a_kind << ": the folder holds no " << marker << hint;
}

namespace {

/// Removes "<path>.partial-<pid>" folders whose process no longer runs.
void RemoveStalePartials(const string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  fs::path folder = target.parent_path();
  if (folder.empty()) folder = ".";
  const string prefix = target.filename().string() + ".partial-";
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    const string name = entry.path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // still running
    LOG(WARNING) << "removing '" << entry.path().string()
                 << "', left by an interrupted conversion (process " << pid << ")";
    std::error_code ignored;
    fs::remove_all(entry.path(), ignored);
  }
}

}  // namespace

AtomicDBWriter::AtomicDBWriter(const string& backend, const string& path)
    : path_(path), partial_path_(path + ".partial-" + std::to_string(getpid())) {
  CAFFE_CHECK(!path.empty()) << "no database path given";
  CAFFE_CHECK(!FileExists(path)) << "cannot create database '" << path
                                 << "': it already exists (remove it first)";
  RemoveStalePartials(path);
  db_ = GetDB(backend);
  db_->Open(partial_path_, NEW);
  txn_ = db_->NewTransaction();
}

AtomicDBWriter::~AtomicDBWriter() {
  if (finished_) return;
  txn_.reset();
  if (db_) db_->Close();
  std::error_code ignored;
  std::filesystem::remove_all(partial_path_, ignored);
}

void AtomicDBWriter::Finish() {
  CHECK(!finished_) << "AtomicDBWriter::Finish called twice";
  txn_->Commit();
  txn_.reset();
  db_->Close();
  finished_ = true;  // complete now: kept even if it cannot be moved into place
  CAFFE_CHECK(!FileExists(path_)) << "cannot move the finished database to '" << path_
                                  << "': something was created there meanwhile (the records are "
                                     "in '"
                                  << partial_path_ << "')";
  std::error_code error;
  std::filesystem::rename(partial_path_, path_, error);
  CAFFE_CHECK(!error) << "cannot rename '" << partial_path_ << "' to '" << path_
                      << "': " << error.message();
}

}  // namespace db
}  // namespace caffe
