#include "caffe/util/db.hpp"

#include <algorithm>
#include <cctype>

#include "caffe/util/db_lmdb.hpp"

namespace caffe {
namespace db {

namespace {

[[noreturn]] void ThrowNoLevelDB() {
  CAFFE_THROW() << "LevelDB is not built into this Caffe (only LMDB is supported); convert the "
                   "data to LMDB (e.g. convert_imageset --backend=lmdb) and set `backend: LMDB` "
                   "in data_param";
}

}  // namespace

std::unique_ptr<DB> GetDB(DataParameter::DB backend) {
  switch (backend) {
    case DataParameter::LMDB:
      return std::make_unique<LMDB>();
    case DataParameter::LEVELDB:
      ThrowNoLevelDB();
  }
  CAFFE_THROW() << "unknown database backend " << static_cast<int>(backend) << "; known: LMDB";
}

std::unique_ptr<DB> GetDB(const string& backend) {
  string name = backend;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (name == "lmdb") return std::make_unique<LMDB>();
  if (name == "leveldb") ThrowNoLevelDB();
  CAFFE_THROW() << "unknown database backend '" << backend << "'; known: lmdb";
}

}  // namespace db
}  // namespace caffe
