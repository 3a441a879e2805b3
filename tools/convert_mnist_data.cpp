// convert_mnist_data: MNIST idx files (images and labels) -> an LMDB of Datum records, one per
// image (1 x rows x cols uint8 pixels and the label), keyed "%08d" by index, as BVLC writes them.
// Both files are checked in full (magic numbers, counts, sizes) before anything is written.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/io/db.hpp"
#include "caffe/io/mnist_idx.hpp"
#include "caffe/proto/caffe.pb.h"
#include "data_tool_main.hpp"

DEFINE_string(backend, "lmdb", "The backend {lmdb, leveldb} for storing the result");

namespace {

using caffe::string;

constexpr int kCommitEvery = 1000;

void ConvertDataset(const string& image_filename, const string& label_filename,
                    const string& db_path, const string& backend) {
  caffe::IdxFile images(image_filename, caffe::IdxFile::kImages);
  caffe::IdxFile labels(label_filename, caffe::IdxFile::kLabels);
  caffe::CheckImagesMatchLabels(images, labels);

  // Appears at db_path only when complete.
  caffe::db::AtomicDBWriter writer(backend, db_path);
  caffe::db::Transaction* txn = writer.transaction();

  std::vector<char> pixels(images.item_bytes());
  caffe::Datum datum;
  datum.set_channels(1);
  datum.set_height(static_cast<int>(images.rows()));
  datum.set_width(static_cast<int>(images.cols()));
  LOG(INFO) << "A total of " << images.count() << " items.";
  LOG(INFO) << "Rows: " << images.rows() << " Cols: " << images.cols();
  string value;
  char key[32];
  uint32_t count = 0;
  for (uint32_t item_id = 0; item_id < images.count(); ++item_id) {
    images.Read(item_id, pixels.data());
    char label = 0;
    labels.Read(item_id, &label);
    datum.set_data(pixels.data(), pixels.size());
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
  return caffe::RunDataTool(
      argc, argv,
      {"tools/convert_mnist_data",
       "This script converts the MNIST dataset to\n"
       "the lmdb format used by Caffe to load data.\n"
       "Usage:\n"
       "    convert_mnist_data [FLAGS] input_image_file input_label_file output_db_file\n"
       "The MNIST dataset could be downloaded at\n"
       "    http://yann.lecun.com/exdb/mnist/\n"
       "You should gunzip them after downloading, or directly use data/mnist/get_mnist.sh\n",
       4, 4},
      [](int, char** argv) { ConvertDataset(argv[1], argv[2], argv[3], FLAGS_backend); });
}
