// convert_cifar_data: the CIFAR-10 binary batches (data_batch_1.bin ... data_batch_5.bin and
// test_batch.bin from cifar-10-binary.tar.gz) -> two LMDBs of Datum records, as BVLC writes them:
// OUTPUT_FOLDER/cifar10_train_<db_type> (the five training batches in order) and
// OUTPUT_FOLDER/cifar10_test_<db_type>, keyed "%05d" by index. Each record of a batch file is
// 3073 bytes: the label (0-9), then 32 x 32 red, green and blue planes, stored as they are
// (3 x 32 x 32, R, G, B). A batch may hold any whole number of records (the real ones hold 10000).
// Every file is checked before anything is written, and each database appears only complete.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/io/db.hpp"
#include "caffe/io/io.hpp"
#include "caffe/proto/caffe.pb.h"
#include "data_tool_main.hpp"

namespace {

using caffe::string;

constexpr int kImageSide = 32;
constexpr int kImageBytes = 3 * kImageSide * kImageSide;
constexpr int kRecordBytes = 1 + kImageBytes;
constexpr int kTrainBatches = 5;
constexpr int kLabels = 10;
constexpr int kCommitEvery = 1000;

/// A batch file's records, checked: a whole number of records, each label in 0..9.
string ReadBatch(const string& path) {
  std::ifstream stream(path, std::ios::binary);
  CAFFE_CHECK(stream.is_open()) << "cannot open CIFAR-10 batch '" << path
                                << "': " << std::strerror(errno)
                                << " (data/cifar10/get_cifar10.sh downloads the batches)";
  string content((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  CAFFE_CHECK(!content.empty() && content.size() % kRecordBytes == 0)
      << "'" << path << "' has " << content.size() << " bytes, not a whole number of "
      << kRecordBytes << "-byte CIFAR-10 records (label + 3x32x32 pixels)";
  for (size_t offset = 0; offset < content.size(); offset += kRecordBytes) {
    const int label = static_cast<unsigned char>(content[offset]);
    CAFFE_CHECK(label < kLabels) << "record " << offset / kRecordBytes << " of '" << path
                                 << "' has label " << label
                                 << "; CIFAR-10 labels are 0 to 9 (is this a CIFAR-100 file?)";
  }
  return content;
}

void WriteDatabase(const std::vector<string>& batches, const string& db_path,
                   const string& db_type) {
  caffe::db::AtomicDBWriter writer(db_type, db_path);
  caffe::Datum datum;
  datum.set_channels(3);
  datum.set_height(kImageSide);
  datum.set_width(kImageSide);
  string value;
  char key[16];
  int index = 0;
  for (const string& batch : batches) {
    for (size_t offset = 0; offset < batch.size(); offset += kRecordBytes) {
      datum.set_label(static_cast<unsigned char>(batch[offset]));
      datum.set_data(batch.data() + offset + 1, kImageBytes);
      datum.SerializeToString(&value);
      std::snprintf(key, sizeof(key), "%05d", index);
      writer.transaction()->Put(key, value);
      if (++index % kCommitEvery == 0) writer.transaction()->Commit();
    }
  }
  writer.Finish();
  LOG(INFO) << "Wrote " << index << " images to '" << db_path << "'.";
}

void ConvertDataset(const string& input_folder, const string& output_folder,
                    const string& db_type) {
  std::vector<string> train;
  for (int batch = 1; batch <= kTrainBatches; ++batch) {
    train.push_back(ReadBatch(input_folder + "/data_batch_" + std::to_string(batch) + ".bin"));
  }
  std::vector<string> test{ReadBatch(input_folder + "/test_batch.bin")};
  const string train_path = output_folder + "/cifar10_train_" + db_type;
  const string test_path = output_folder + "/cifar10_test_" + db_type;
  caffe::db::GetDB(db_type);  // an unsupported type is refused before anything is written
  for (const string& path : {train_path, test_path}) {
    CAFFE_CHECK(!caffe::FileExists(path))
        << "cannot create database '" << path << "': it already exists (remove it first)";
  }
  LOG(INFO) << "Writing Training data";
  WriteDatabase(train, train_path, db_type);
  LOG(INFO) << "Writing Testing data";
  WriteDatabase(test, test_path, db_type);
}

}  // namespace

int main(int argc, char** argv) {
  return caffe::RunDataTool(argc, argv,
                            {"tools/convert_cifar_data",
                             "This script converts the CIFAR dataset to the leveldb format used\n"
                             "by caffe to perform classification.\n"
                             "Usage:\n"
                             "    convert_cifar_data input_folder output_folder db_type\n"
                             "Where the input folder should contain the binary batch files.\n"
                             "The CIFAR dataset could be downloaded at\n"
                             "    http://www.cs.toronto.edu/~kriz/cifar.html\n"
                             "You should gunzip them after downloading.\n",
                             4, 4},
                            [](int, char** argv) { ConvertDataset(argv[1], argv[2], argv[3]); });
}
