// extract_features: runs a trained net over its input (usually a Data layer in the TEST phase)
// for a number of mini-batches and stores the values of chosen blobs, one Datum per image
// (float_data, C x H x W of the blob), keyed "%010d" by image index, into one new database per
// blob; BVLC's command line. Each database appears only when complete.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/common.hpp"
#include "caffe/io/db.hpp"
#include "caffe/net.hpp"
#include "caffe/proto/caffe.pb.h"

namespace {

using caffe::string;

constexpr int kCommitEvery = 1000;

const char kUsage[] =
    "This program takes in a trained network and an input data layer, and then extract features "
    "of the input data produced by the net.\n"
    "Usage: extract_features  pretrained_net_param  feature_extraction_proto_file  "
    "extract_feature_blob_name1[,name2,...]  save_feature_dataset_name1[,name2,...]  "
    "num_mini_batches  db_type  [CPU/GPU] [DEVICE_ID=0]\n"
    "Note: you can extract multiple features in one pass by specifying multiple feature blob "
    "names and dataset names separated by ','. The names cannot contain white space characters "
    "and the number of blobs and datasets must be equal.";

std::vector<string> SplitCommas(const string& text) {
  std::vector<string> parts;
  std::stringstream stream(text);
  string part;
  while (std::getline(stream, part, ',')) parts.push_back(part);
  return parts;
}

/// `text` as an integer >= `minimum`.
int ParseInteger(const string& text, int minimum, const char* what) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  CAFFE_CHECK(!text.empty() && *end == '\0' && errno == 0 && value >= minimum && value <= INT32_MAX)
      << what << " is '" << text << "'; expected an integer of at least " << minimum;
  return static_cast<int>(value);
}

void ExtractFeatures(int argc, char** argv) {
  if (argc > 7 && std::strcmp(argv[7], "GPU") == 0) {
    const int device_id = argc > 8 ? ParseInteger(argv[8], 0, "DEVICE_ID") : 0;
    LOG(ERROR) << "Using GPU";
    LOG(ERROR) << "Using Device_id=" << device_id;
    caffe::Caffe::SetDevice(device_id);
    caffe::Caffe::set_mode(caffe::Caffe::GPU);
  } else {
    CAFFE_CHECK(argc <= 7 || std::strcmp(argv[7], "CPU") == 0)
        << "the 7th argument is '" << argv[7] << "'; expected CPU or GPU";
    LOG(ERROR) << "Using CPU";
    caffe::Caffe::set_mode(caffe::Caffe::CPU);
  }
  const string pretrained_weights = argv[1];
  const string proto_file = argv[2];
  const std::vector<string> blob_names = SplitCommas(argv[3]);
  const std::vector<string> dataset_names = SplitCommas(argv[4]);
  const int num_mini_batches = ParseInteger(argv[5], 1, "num_mini_batches");
  const string db_type = argv[6];
  CAFFE_CHECK(!blob_names.empty() && blob_names.size() == dataset_names.size())
      << "the number of blob names (" << blob_names.size() << ", '" << argv[3]
      << "') and dataset names (" << dataset_names.size() << ", '" << argv[4] << "') must be equal";

  caffe::db::GetDB(db_type);  // an unsupported type is refused before anything is written

  caffe::Net<float> net(proto_file, caffe::TEST);
  net.CopyTrainedLayersFrom(pretrained_weights);
  for (const string& name : blob_names) {
    CAFFE_CHECK(net.has_blob(name))
        << "Unknown feature blob name " << name << " in the network " << proto_file;
  }
  std::vector<std::unique_ptr<caffe::db::AtomicDBWriter>> writers;
  for (const string& name : dataset_names) {
    LOG(INFO) << "Opening dataset " << name;
    writers.push_back(std::make_unique<caffe::db::AtomicDBWriter>(db_type, name));
  }

  LOG(ERROR) << "Extracting Features";
  caffe::Datum datum;
  string value;
  char key[16];
  std::vector<int> image_indices(blob_names.size(), 0);
  for (int batch = 0; batch < num_mini_batches; ++batch) {
    net.Forward();
    for (size_t i = 0; i < blob_names.size(); ++i) {
      const caffe::Blob<float>& blob = *net.blob_by_name(blob_names[i]);
      const int batch_size = blob.num();
      const int dim = blob.count() / batch_size;
      for (int n = 0; n < batch_size; ++n) {
        datum.set_channels(blob.channels());
        datum.set_height(blob.height());
        datum.set_width(blob.width());
        datum.clear_data();
        datum.clear_float_data();
        const float* values = blob.cpu_data() + blob.offset(n);
        for (int d = 0; d < dim; ++d) datum.add_float_data(values[d]);
        std::snprintf(key, sizeof(key), "%010d", image_indices[i]);
        datum.SerializeToString(&value);
        writers[i]->transaction()->Put(key, value);
        if (++image_indices[i] % kCommitEvery == 0) {
          writers[i]->transaction()->Commit();
          LOG(ERROR) << "Extracted features of " << image_indices[i]
                     << " query images for feature blob " << blob_names[i];
        }
      }
    }
  }
  for (size_t i = 0; i < blob_names.size(); ++i) {
    writers[i]->Finish();
    LOG(ERROR) << "Extracted features of " << image_indices[i] << " query images for feature blob "
               << blob_names[i];
  }
  LOG(ERROR) << "Successfully extracted the features!";
}

}  // namespace

int main(int argc, char** argv) {
  gflags::SetUsageMessage(kUsage);
  try {
    caffe::GlobalInit(&argc, &argv);
    if (argc < 7) {
      std::cerr << kUsage << std::endl;
      return 1;
    }
    ExtractFeatures(argc, argv);
  } catch (const caffe::Error& error) {
    std::cerr << "extract_features: " << error.what() << std::endl;
    return 1;
  }
  return 0;
}
