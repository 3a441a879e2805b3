// LMDBs for the tests of damaged databases: a small LMDB of raw Datum records, and the damage a
// bad copy or disk does to its data.mdb, made knowing the few fields of LMDB 0.9's page layout it
// touches (read here on their own, not through the code under test). Meta page 0 holds the page
// size at byte 40 (src/caffe/io/lmdb_header.cpp describes the meta pages). Every page starts with
// a 16-byte header whose bytes 10-11 hold its flags (0x01: a branch page, 0x02: a leaf page,
// holding records) and bytes 12-13 the end of its node offsets, 2 bytes each, which follow the
// header. A leaf page's node starts with its value's size (two 16-bit halves, low first), its
// flags (2 bytes) and its key's size (2 bytes), then the key and the value.
#ifndef CAFFE_TEST_LMDB_TEST_UTIL_HPP_
#define CAFFE_TEST_LMDB_TEST_UTIL_HPP_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "caffe/io/db.hpp"
#include "caffe/proto/caffe.pb.h"
#include "caffe/test/file_test_util.hpp"

namespace caffe {

/// The key of record i of WriteDatumLMDB: "%08d".
inline std::string DatumLMDBKey(int i) {
  char key[16];
  snprintf(key, sizeof(key), "%08d", i);
  return key;
}

/// A new LMDB at `path` of `count` raw records of channels x height x width bytes: byte j of
/// record i is pixel(i, j), its label label(i), its key DatumLMDBKey(i). The record at `corrupt`
/// (if >= 0) holds three bytes that are not a Datum.
inline void WriteDatumLMDB(const std::string& path, int count, int channels, int height, int width,
                           const std::function<unsigned char(int, int)>& pixel,
                           const std::function<int(int)>& label, int corrupt = -1) {
  std::unique_ptr<db::DB> database = db::GetDB("lmdb");
  database->Open(path, db::NEW);
  std::unique_ptr<db::Transaction> txn = database->NewTransaction();
  for (int i = 0; i < count; ++i) {
    Datum datum;
    datum.set_channels(channels);
    datum.set_height(height);
    datum.set_width(width);
    datum.set_label(label(i));
    std::string data(channels * height * width, '\0');
    for (int j = 0; j < static_cast<int>(data.size()); ++j)
      data[j] = static_cast<char>(pixel(i, j));
    datum.set_data(data);
    txn->Put(DatumLMDBKey(i),
             i == corrupt ? std::string("\xff\xff\xff", 3) : datum.SerializeAsString());
  }
  txn->Commit();
}

/// A new LMDB at `path` of `count` raw 1 x 2 x 4 records: record i holds bytes i + j and label
/// i % 3.
inline void WriteDatumLMDB(const std::string& path, int count) {
  WriteDatumLMDB(
      path, count, 1, 2, 4, [](int i, int j) { return static_cast<unsigned char>(i + j); },
      [](int i) { return i % 3; });
}

/// The page size of the LMDB data file `data_file`, from its first meta page.
inline uint32_t LMDBPageSize(const std::string& data_file) {
  const std::string bytes = ReadWholeFile(data_file);
  uint32_t page_size = 0;
  EXPECT_GE(bytes.size(), 44u) << data_file;
  if (bytes.size() >= 44) std::memcpy(&page_size, bytes.data() + 40, sizeof(page_size));
  return page_size;
}

/// The leaf pages of `data_file`, in page order.
inline std::vector<uint64_t> LMDBLeafPages(const std::string& data_file) {
  const std::string bytes = ReadWholeFile(data_file);
  const uint32_t page_size = LMDBPageSize(data_file);
  std::vector<uint64_t> leaves;
  for (uint64_t page = 2; (page + 1) * page_size <= bytes.size(); ++page) {
    uint16_t flags;
    std::memcpy(&flags, bytes.data() + page * page_size + 10, sizeof(flags));
    if (flags == 0x02) leaves.push_back(page);
  }
  return leaves;
}

/// The leaf page in the middle of `data_file` (one of the 3 or more it must have).
inline uint64_t MiddleLMDBLeafPage(const std::string& data_file) {
  const std::vector<uint64_t> leaves = LMDBLeafPages(data_file);
  EXPECT_GE(leaves.size(), 3u) << data_file << " has too few leaf pages to damage one inside";
  return leaves.empty() ? 2 : leaves[leaves.size() / 2];
}

/// The key of the first record on leaf page `page` of `data_file`.
inline std::string FirstKeyOnLMDBPage(const std::string& data_file, uint64_t page) {
  const std::string bytes = ReadWholeFile(data_file);
  const size_t start = page * LMDBPageSize(data_file);
  uint16_t node, key_size;
  std::memcpy(&node, bytes.data() + start + 16, sizeof(node));
  std::memcpy(&key_size, bytes.data() + start + node + 6, sizeof(key_size));
  return bytes.substr(start + node + 8, key_size);
}

/// Writes `content` over `data_file` at byte `offset`, keeping the rest.
inline void OverwriteBytes(const std::string& data_file, uint64_t offset,
                           const std::string& content) {
  std::FILE* file = std::fopen(data_file.c_str(), "r+b");
  ASSERT_NE(file, nullptr) << data_file;
  ASSERT_EQ(std::fseek(file, static_cast<long>(offset), SEEK_SET), 0);
  ASSERT_EQ(std::fwrite(content.data(), 1, content.size(), file), content.size());
  std::fclose(file);
}

/// Fills page `page` of `data_file` with zeros, as a lost disk block reads.
inline void ZeroLMDBPage(const std::string& data_file, uint64_t page) {
  const uint32_t page_size = LMDBPageSize(data_file);
  OverwriteBytes(data_file, page * page_size, std::string(page_size, '\0'));
}

/// Sets the value size of the first record on leaf page `page` of `data_file` to `size`.
inline void SetFirstLMDBValueSize(const std::string& data_file, uint64_t page, uint32_t size) {
  const std::string bytes = ReadWholeFile(data_file);
  const size_t start = page * LMDBPageSize(data_file);
  uint16_t node;
  std::memcpy(&node, bytes.data() + start + 16, sizeof(node));
  const uint16_t halves[2] = {static_cast<uint16_t>(size & 0xffff),
                              static_cast<uint16_t>(size >> 16)};
  OverwriteBytes(data_file, start + node, std::string(reinterpret_cast<const char*>(halves), 4));
}

/// Makes every branch page of `data_file` (flags 0x01; its node offsets end at the 2-byte field
/// at byte 12) forget its last child: the records under those children can no longer be reached.
inline void DropLastChildOfLMDBBranchPages(const std::string& data_file) {
  const std::string bytes = ReadWholeFile(data_file);
  const uint32_t page_size = LMDBPageSize(data_file);
  for (uint64_t page = 2; (page + 1) * page_size <= bytes.size(); ++page) {
    const size_t start = page * page_size;
    uint16_t flags, lower;
    std::memcpy(&flags, bytes.data() + start + 10, sizeof(flags));
    std::memcpy(&lower, bytes.data() + start + 12, sizeof(lower));
    if (flags != 0x01) continue;
    lower -= 2;
    OverwriteBytes(data_file, start + 12, std::string(reinterpret_cast<const char*>(&lower), 2));
  }
}

/// Cuts `data_file` to `size` bytes, as a copy that stopped does.
inline void TruncateFile(const std::string& data_file, uint64_t size) {
  std::filesystem::resize_file(data_file, size);
}

}  // namespace caffe

#endif  // CAFFE_TEST_LMDB_TEST_UTIL_HPP_
