// The layout read here is LMDB 0.9's (liblmdb 0.9.x; data format version 1, its MDB_DATA_VERSION)
// as built for a 64-bit machine, where page numbers, sizes and pointers take 8 bytes, in the
// byte order of the machine that wrote the file. Pages 0 and 1 are the meta pages, at byte 0 and
// at byte <page size>; a write transaction N rewrites meta page N % 2, and readers take the one
// with the larger transaction id. Each meta page, in bytes from its start:
//     0  page header: page number (8), padding (2), flags (2; 0x08 marks a meta page), bounds (4)
//    16  magic number (4): 0xBEEFC0DE
//    20  data format version (4): 1
//    24  fixed map address (8), map size (8)
//    40  the free-page list's database record (48): its first 4 bytes hold the page size
//    88  the main database's record (48): pad (4), flags (2), depth (2), branch pages (8),
//        leaf pages (8), overflow pages (8), records (8, at byte 120), root page (8)
//   136  the last page in use (8)
//   144  the id of the transaction that wrote this meta page (8)
// Only the fields named here are read.
#include "caffe/io/lmdb_header.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace caffe {
namespace db {

namespace {

static_assert(sizeof(size_t) == 8 && sizeof(void*) == 8,
              "the LMDB header layout read here is a 64-bit build's");

constexpr size_t kMetaBytes = 152;  // the meta page's bytes up to the end of its transaction id
constexpr uint16_t kMetaPageFlag = 0x08;
constexpr uint32_t kMagic = 0xBEEFC0DE;
constexpr uint32_t kSwappedMagic = 0xDEC0EFBE;
constexpr uint32_t kDataVersion = 1;
constexpr uint32_t kMinPageSize = 512;
constexpr uint32_t kMaxPageSize = 65536;
constexpr uint64_t kMaxBytes = uint64_t{1} << 48;  // what a 64-bit machine's address space maps

string Hex(uint32_t value) {
  char text[16];
  snprintf(text, sizeof(text), "0x%X", value);
  return text;
}

template <typename T>
T Field(const unsigned char* page, size_t offset) {
  T value;
  std::memcpy(&value, page + offset, sizeof(value));
  return value;
}

struct MetaPage {
  uint32_t page_size;
  uint64_t last_page, transaction, records;
};

class DataFile {
 public:
  explicit DataFile(const string& path) : path_(path) {
    fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    CAFFE_CHECK(fd_ >= 0) << "cannot read '" << path << "': " << std::strerror(errno);
    struct stat info;
    CAFFE_CHECK(fstat(fd_, &info) == 0) << "cannot read '" << path << "': " << std::strerror(errno);
    CAFFE_CHECK(S_ISREG(info.st_mode)) << "'" << path << "' is not a file (LMDB's data.mdb is one)";
    size_ = static_cast<uint64_t>(info.st_size);
  }
  ~DataFile() { close(fd_); }
  uint64_t size() const { return size_; }

  /// Meta page `index` (0 or 1), at byte `offset`, checked.
  MetaPage ReadMeta(int index, uint64_t offset) const {
    unsigned char page[kMetaBytes];
    const ssize_t got = pread(fd_, page, sizeof(page), static_cast<off_t>(offset));
    CAFFE_CHECK(got == static_cast<ssize_t>(sizeof(page)))
        << "cannot read meta page " << index << " of '" << path_
        << "': " << (got < 0 ? std::strerror(errno) : "the file ended");
    const uint32_t magic = Field<uint32_t>(page, 16);
    CAFFE_CHECK(magic != kSwappedMagic)
        << "'" << path_ << "' was written on a machine of the other byte order (its magic number "
        << "reads " << Hex(magic) << "): dump it there with mdb_dump and load it here "
        << "with mdb_load";
    CAFFE_CHECK(magic == kMagic) << "'" << path_ << "' is not an LMDB data file: meta page "
                                 << index << " holds " << Hex(magic)
                                 << " where LMDB's magic number " << Hex(kMagic) << " belongs";
    const uint32_t version = Field<uint32_t>(page, 20);
    CAFFE_CHECK(version == kDataVersion)
        << "'" << path_ << "' has LMDB data format version " << version
        << " but this LMDB reads version " << kDataVersion;
    const uint16_t flags = Field<uint16_t>(page, 10);
    CAFFE_CHECK((flags & kMetaPageFlag) != 0)
        << "'" << path_ << "': page " << index << " should be a meta page (flag 0x8) but its flags "
        << "are " << Hex(flags) << ": the header is damaged";
    MetaPage meta;
    meta.page_size = Field<uint32_t>(page, 40);
    meta.records = Field<uint64_t>(page, 120);
    meta.last_page = Field<uint64_t>(page, 136);
    meta.transaction = Field<uint64_t>(page, 144);
    const bool power_of_two = (meta.page_size & (meta.page_size - 1)) == 0;
    CAFFE_CHECK(power_of_two && meta.page_size >= kMinPageSize && meta.page_size <= kMaxPageSize)
        << "'" << path_ << "': meta page " << index << " names a page size of " << meta.page_size
        << " bytes where LMDB's is a power of two from " << kMinPageSize << " to " << kMaxPageSize
        << ": the header is damaged";
    CAFFE_CHECK(meta.last_page >= 1 && meta.last_page < kMaxBytes / meta.page_size)
        << "'" << path_ << "': meta page " << index << " says page " << meta.last_page
        << " is the last in use, where pages 1 to " << kMaxBytes / meta.page_size - 1
        << " can be: the header is damaged";
    return meta;
  }

 private:
  string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

string Truncated(const string& path, uint64_t size, const string& expected) {
  std::ostringstream message;
  message << "'" << path << "' is "
          << (size == 0 ? "empty (0 bytes)" : std::to_string(size) + " bytes") << " but "
          << expected << ": it is truncated (an unfinished copy?)";
  return message.str();
}

}  // namespace

LMDBHeader ReadLMDBHeader(const string& data_file) {
  const DataFile file(data_file);
  LMDBHeader header;
  header.file_size = file.size();
  CAFFE_CHECK(file.size() >= kMetaBytes)
      << Truncated(data_file, file.size(),
                   "an LMDB data file starts with two meta pages, the first alone " +
                       std::to_string(kMetaBytes) + " bytes long");
  const MetaPage first = file.ReadMeta(0, 0);
  CAFFE_CHECK(file.size() >= first.page_size + kMetaBytes) << Truncated(
      data_file, file.size(),
      "its second meta page ends at byte " + std::to_string(first.page_size + kMetaBytes) +
          " (pages of " + std::to_string(first.page_size) + " bytes)");
  const MetaPage second = file.ReadMeta(1, first.page_size);
  CAFFE_CHECK(second.page_size == first.page_size)
      << "'" << data_file << "': its meta pages name different page sizes (" << first.page_size
      << " and " << second.page_size << " bytes): the header is damaged";
  const bool second_newer = second.transaction > first.transaction;
  const MetaPage& newer = second_newer ? second : first;
  header.meta_page = second_newer ? 1 : 0;
  header.page_size = newer.page_size;
  header.last_page = newer.last_page;
  header.transaction = newer.transaction;
  header.records = newer.records;
  return header;
}

string TruncatedLMDBMessage(const string& data_file, const LMDBHeader& header) {
  return Truncated(data_file, header.file_size,
                   "its header says the database has " + std::to_string(header.last_page + 1) +
                       " pages of " + std::to_string(header.page_size) + " bytes (" +
                       std::to_string(header.bytes_in_use()) + " bytes)");
}

}  // namespace db
}  // namespace caffe
