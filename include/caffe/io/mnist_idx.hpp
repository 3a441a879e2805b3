// MNIST's idx files (http://yann.lecun.com/exdb/mnist/): a big-endian header, then the items as
// unsigned bytes. An image file (magic 2051) holds count x rows x cols pixels; a label file
// (magic 2049) holds count labels. Opening one checks its header and its size in full, so a
// converter fails before it writes anything.
#ifndef CAFFE_IO_MNIST_IDX_HPP_
#define CAFFE_IO_MNIST_IDX_HPP_

#include <cstdint>
#include <fstream>
#include <string>

#include "caffe/common.hpp"

namespace caffe {

class IdxFile {
 public:
  enum Kind { kImages, kLabels };

  /// Throws caffe::Error naming `path` when it cannot be read, is not an idx file of `kind`
  /// (a gzip-compressed one is named as such), or holds fewer bytes than its header announces.
  IdxFile(const string& path, Kind kind);

  const string& path() const { return path_; }
  uint32_t count() const { return count_; }
  uint32_t rows() const { return rows_; }  // 1 for labels
  uint32_t cols() const { return cols_; }
  size_t item_bytes() const { return size_t{rows_} * cols_; }

  /// Copies item `index` (< count()) into `out`, item_bytes() bytes.
  void Read(uint32_t index, char* out);

 private:
  uint32_t ReadHeaderField(const char* field);

  string path_;
  std::ifstream stream_;
  uint32_t header_bytes_ = 0;
  uint32_t count_ = 0;
  uint32_t rows_ = 1;
  uint32_t cols_ = 1;

  DISABLE_COPY_AND_ASSIGN(IdxFile);
};

/// Throws caffe::Error naming both files when they hold different numbers of items.
void CheckImagesMatchLabels(const IdxFile& images, const IdxFile& labels);

}  // namespace caffe

#endif  // CAFFE_IO_MNIST_IDX_HPP_
