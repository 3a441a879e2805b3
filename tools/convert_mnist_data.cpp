// convert_mnist_data: MNIST idx files (images and labels) -> an LMDB of Datum records, one per
// image (1 x rows x cols uint8 pixels and the label), keyed "%08d" by index, as BVLC writes them.
// Both files are checked in full (magic numbers, counts, sizes) before anything is written.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/proto/caffe.pb.h"
#include "caffe/util/db.hpp"

DEFINE_string(backend, "lmdb", "The backend {lmdb, leveldb} for storing the result");

namespace {

using caffe::string;

constexpr uint32_t kImageMagic = 2051;  // idx3: unsigned byte, 3 dimensions
constexpr uint32_t kLabelMagic = 2049;  // idx1: unsigned byte, 1 dimension
constexpr int kCommitEvery = 1000;

/// An open idx file and its header.
struct IdxFile {
  string path;
  std::ifstream stream;
  uint32_t magic = 0;
  uint32_t count = 0;
  uint32_t rows = 0;  // images only
  uint32_t cols = 0;
};

uint32_t ReadBigEndian(IdxFile* file, const char* field) {
  unsigned char bytes[4];
  file->stream.read(reinterpret_cast<char*>(bytes), 4);
  CAFFE_CHECK(file->stream.gcount() == 4)
      << "'" << file->path << "' is too short to be an MNIST idx file (no " << field << ")";
  return (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) |
         uint32_t{bytes[3]};
}

uint64_t FileSize(const string& path) {
  std::ifstream stream(path, std::ios::binary | std::ios::ate);
  return static_cast<uint64_t>(stream.tellg());
}

/// Opens an idx file and reads its header; throws when it is not the expected kind of file or
/// holds fewer bytes than its header announces.
void OpenIdx(const string& path, uint32_t expected_magic, const char* kind, IdxFile* file) {
  file->path = path;
  file->stream.open(path, std::ios::binary);
  CAFFE_CHECK(file->stream.is_open())
      << "cannot open " << kind << " file '" << path << "': " << std::strerror(errno);
  file->magic = ReadBigEndian(file, "magic number");
  CAFFE_CHECK(file->magic == expected_magic)
      << "'" << path << "' is not an MNIST " << kind << " file: its magic number is " << file->magic
      << ", expected " << expected_magic
      << ((file->magic >> 16) == 0x1f8b ? " (it is gzip-compressed: gunzip it first)" : "");
  file->count = ReadBigEndian(file, "item count");
  uint64_t item_bytes = 1;
  uint64_t header_bytes = 8;
  if (expected_magic == kImageMagic) {
    file->rows = ReadBigEndian(file, "row count");
    file->cols = ReadBigEndian(file, "column count");
    CAFFE_CHECK(file->rows > 0 && file->cols > 0 && file->rows <= 65536 && file->cols <= 65536)
        << "'" << path << "' declares images of " << file->rows << " x " << file->cols
        << " pixels; expected sizes between 1 and 65536";
    item_bytes = uint64_t{file->rows} * file->cols;
    header_bytes = 16;
  }
  const uint64_t needed = header_bytes + item_bytes * file->count;
  const uint64_t size = FileSize(path);
  CAFFE_CHECK(size >= needed) << "'" << path << "' is truncated: its header announces "
                              << file->count << " items (" << needed << " bytes) but it has "
                              << size << " bytes";
}

void ConvertDataset(const string& image_filename, const string& label_filename,
                    const string& db_path, const string& backend) {
  IdxFile images, labels;
  OpenIdx(image_filename, kImageMagic, "image", &images);
  OpenIdx(label_filename, kLabelMagic, "label", &labels);
  CAFFE_CHECK(images.count == labels.count)
      << "image file '" << image_filename << "' holds " << images.count
      << " images but label file '" << label_filename << "' holds " << labels.count << " labels";

  // Appears at db_path only when complete.
  caffe::db::AtomicDBWriter writer(backend, db_path);
  caffe::db::Transaction* txn = writer.transaction();

  const size_t image_size = size_t{images.rows} * images.cols;
  std::vector<char> pixels(image_size);
  caffe::Datum datum;
  datum.set_channels(1);
  datum.set_height(static_cast<int>(images.rows));
  datum.set_width(static_cast<int>(images.cols));
  LOG(INFO) << "A total of " << images.count << " items.";
  LOG(INFO) << "Rows: " << images.rows << " Cols: " << images.cols;
  string value;
  char key[32];
  uint32_t count = 0;
  for (uint32_t item_id = 0; item_id < images.count; ++item_id) {
    images.stream.read(pixels.data(), static_cast<std::streamsize>(image_size));
    char label = 0;
    labels.stream.read(&label, 1);
    CAFFE_CHECK(images.stream && labels.stream)
        << "reading item " << item_id << " of '" << image_filename << "' / '" << label_filename
        << "' failed";
    datum.set_data(pixels.data(), image_size);
    datum.set_label(static_cast<unsigned char>(label));
    std::snprintf(key, sizeof(key), "%08u", item_id);
    datum.SerializeToString(&value);
    txn->Put(key, value);
    if (++count % kCommitEvery == 0) txn->Commit();
  }
  writer.Finish();
  LOG(INFO) << "Processed " << count << " files.";
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "This script converts the MNIST dataset to\n"
      "the lmdb format used by Caffe to load data.\n"
      "Usage:\n"
      "    convert_mnist_data [FLAGS] input_image_file input_label_file output_db_file\n"
      "The MNIST dataset could be downloaded at\n"
      "    http://yann.lecun.com/exdb/mnist/\n"
      "You should gunzip them after downloading, or directly use data/mnist/get_mnist.sh\n");
  try {
    caffe::GlobalInit(&argc, &argv);
    if (argc != 4) {
      gflags::ShowUsageWithFlagsRestrict(argv[0], "tools/convert_mnist_data");
      return 1;
    }
    ConvertDataset(argv[1], argv[2], argv[3], FLAGS_backend);
  } catch (const caffe::Error& error) {
    std::cerr << "convert_mnist_data: " << error.what() << std::endl;
    return 1;
  }
  return 0;
}
