// BVLC's siamese-network data converter, where BVLC's build puts it:
//
//   build/examples/siamese/convert_mnist_siamese_data.bin IMAGES LABELS OUTPUT_DB
//
// MNIST idx files -> a database of image pairs: as many records as images, record i holding two
// images drawn at random (with replacement) in one 2 x rows x cols Datum, image a in channel 0 and
// image b in channel 1, and the label 1 when both show the same digit, else 0 (about one pair in
// ten for MNIST). Keys are "%08d" by record. mnist_siamese_train_test.prototxt slices the channels
// apart and feeds the label to ContrastiveLoss as the similarity.
//
// BVLC wrote a LevelDB, which its prototxt reads (no backend: LevelDB, the proto's default). Here
// --backend chooses; by default LevelDB where this build has it, else LMDB, which the Data layer
// reads whatever the prototxt's backend says. Unlike BVLC, whose pairs changed from run to run,
// the pairs follow --seed.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/io/db.hpp"
#include "caffe/io/mnist_idx.hpp"
#include "caffe/proto/caffe.pb.h"
#include "data_tool_main.hpp"

DEFINE_string(backend, "",
              "The backend {lmdb, leveldb} for storing the result; empty: leveldb where this build "
              "has LevelDB, else lmdb");
DEFINE_uint64(seed, 1701, "Seed of the random choice of pairs");

namespace {

using caffe::string;

constexpr int kCommitEvery = 1000;

void ConvertPairs(const string& image_filename, const string& label_filename, const string& db_path,
                  const string& backend, uint64_t seed) {
  caffe::IdxFile images(image_filename, caffe::IdxFile::kImages);
  caffe::IdxFile labels(label_filename, caffe::IdxFile::kLabels);
  caffe::CheckImagesMatchLabels(images, labels);
  CAFFE_CHECK(images.count() > 0) << "'" << image_filename << "' holds no images";

  caffe::db::AtomicDBWriter writer(backend, db_path);
  caffe::db::Transaction* txn = writer.transaction();

  const size_t image_bytes = images.item_bytes();
  std::vector<char> pixels(2 * image_bytes);
  caffe::Datum datum;
  datum.set_channels(2);  // one pair of images
  datum.set_height(static_cast<int>(images.rows()));
  datum.set_width(static_cast<int>(images.cols()));
  LOG(INFO) << "A total of " << images.count() << " items.";
  LOG(INFO) << "Rows: " << images.rows() << " Cols: " << images.cols();
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint32_t> pick(0, images.count() - 1);
  string value;
  char key[32];
  for (uint32_t item_id = 0; item_id < images.count(); ++item_id) {
    const uint32_t a = pick(rng);
    const uint32_t b = pick(rng);
    char label_a = 0, label_b = 0;
    images.Read(a, pixels.data());
    labels.Read(a, &label_a);
    images.Read(b, pixels.data() + image_bytes);
    labels.Read(b, &label_b);
    datum.set_data(pixels.data(), pixels.size());
    datum.set_label(label_a == label_b ? 1 : 0);
    std::snprintf(key, sizeof(key), "%08u", item_id);
    datum.SerializeToString(&value);
    txn->Put(key, value);
    if ((item_id + 1) % kCommitEvery == 0) txn->Commit();
  }
  writer.Finish();
  LOG(INFO) << "Processed " << images.count() << " pairs into " << db_path << " (" << backend
            << ").";
}

}  // namespace

int main(int argc, char** argv) {
  return caffe::RunDataTool(
      argc, argv,
      {"examples/siamese/convert_mnist_siamese_data",
       "This script converts the MNIST dataset to pairs of images\n"
       "in the database format used by Caffe to load data.\n"
       "Usage:\n"
       "    convert_mnist_siamese_data [FLAGS] input_image_file input_label_file output_db_file\n"
       "The MNIST dataset could be downloaded at\n"
       "    http://yann.lecun.com/exdb/mnist/\n"
       "You should gunzip them after downloading, or directly use data/mnist/get_mnist.sh\n",
       4, 4},
      [](int, char** argv) {
        const string backend = !FLAGS_backend.empty()     ? FLAGS_backend
                               : caffe::db::HaveLevelDB() ? "leveldb"
                                                          : "lmdb";
        ConvertPairs(argv[1], argv[2], argv[3], backend, FLAGS_seed);
      });
}
