#include "caffe/io/mnist_idx.hpp"

#include <cerrno>
#include <cstring>

#include "caffe/util/error.hpp"

namespace caffe {
namespace {

constexpr uint32_t kImageMagic = 2051;  // idx3: unsigned byte, 3 dimensions
constexpr uint32_t kLabelMagic = 2049;  // idx1: unsigned byte, 1 dimension

uint64_t FileSize(const string& path) {
  std::ifstream stream(path, std::ios::binary | std::ios::ate);
  return static_cast<uint64_t>(stream.tellg());
}

}  // namespace

IdxFile::IdxFile(const string& path, Kind kind) : path_(path) {
  const char* what = kind == kImages ? "image" : "label";
  stream_.open(path, std::ios::binary);
  CAFFE_CHECK(stream_.is_open()) << "cannot open " << what << " file '" << path
                                 << "': " << std::strerror(errno);
  const uint32_t expected_magic = kind == kImages ? kImageMagic : kLabelMagic;
  const uint32_t magic = ReadHeaderField("magic number");
  CAFFE_CHECK(magic == expected_magic)
      << "'" << path << "' is not an MNIST " << what << " file: its magic number is " << magic
      << ", expected " << expected_magic
      << ((magic >> 16) == 0x1f8b ? " (it is gzip-compressed: gunzip it first)" : "");
  count_ = ReadHeaderField("item count");
  header_bytes_ = 8;
  if (kind == kImages) {
    rows_ = ReadHeaderField("row count");
    cols_ = ReadHeaderField("column count");
    CAFFE_CHECK(rows_ > 0 && cols_ > 0 && rows_ <= 65536 && cols_ <= 65536)
        << "'" << path << "' declares images of " << rows_ << " x " << cols_
        << " pixels; expected sizes between 1 and 65536";
    header_bytes_ = 16;
  }
  const uint64_t needed = header_bytes_ + uint64_t{item_bytes()} * count_;
  const uint64_t size = FileSize(path);
  CAFFE_CHECK(size >= needed) << "'" << path << "' is truncated: its header announces " << count_
                              << " items (" << needed << " bytes) but it has " << size << " bytes";
}

uint32_t IdxFile::ReadHeaderField(const char* field) {
  unsigned char bytes[4];
  stream_.read(reinterpret_cast<char*>(bytes), 4);
  CAFFE_CHECK(stream_.gcount() == 4)
      << "'" << path_ << "' is too short to be an MNIST idx file (no " << field << ")";
  return (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) |
         uint32_t{bytes[3]};
}

void IdxFile::Read(uint32_t index, char* out) {
  CHECK_LT(index, count_);
  const std::streamoff offset = header_bytes_ + static_cast<std::streamoff>(index) *
                                                    static_cast<std::streamoff>(item_bytes());
  if (stream_.tellg() != offset) stream_.seekg(offset);
  stream_.read(out, static_cast<std::streamsize>(item_bytes()));
  CAFFE_CHECK(stream_) << "reading item " << index << " of '" << path_ << "' failed";
}

void CheckImagesMatchLabels(const IdxFile& images, const IdxFile& labels) {
  CAFFE_CHECK(images.count() == labels.count())
      << "image file '" << images.path() << "' holds " << images.count()
      << " images but label file '" << labels.path() << "' holds " << labels.count() << " labels";
}

}  // namespace caffe
