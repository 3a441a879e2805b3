// Data and nets for DDL's tests (test_ddl_sync under mpirun, test_caffe_ddl through the tool): a
// small LMDB of 28x28 images (MNIST's size), a LeNet solver reading it, and the comparison of
// weights as "largest |a - b| over the largest |b|" per blob.
#ifndef CAFFE_TEST_DDL_TEST_UTIL_HPP_
#define CAFFE_TEST_DDL_TEST_UTIL_HPP_

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "caffe/io/db.hpp"
#include "caffe/proto/caffe.pb.h"

namespace caffe {

/// The records WriteTestImages writes.
struct TestImages {
  int side = 28;                // one channel, side x side pixels
  int classes = 10;             // label k % classes ...
  bool label_is_index = false;  // ... or k itself
  int corrupt = -1;             // this record (if >= 0) holds bytes that are not a Datum
};

/// Writes records k = 0..count-1 to a new LMDB: one-channel images whose pixels depend on k, with
/// the labels `images` says.
inline void WriteTestImages(const std::string& source, int count, const TestImages& images) {
  std::unique_ptr<db::DB> database = db::GetDB("lmdb");
  database->Open(source, db::NEW);
  std::unique_ptr<db::Transaction> transaction = database->NewTransaction();
  const int pixels_per_image = images.side * images.side;
  for (int k = 0; k < count; ++k) {
    Datum datum;
    datum.set_channels(1);
    datum.set_height(images.side);
    datum.set_width(images.side);
    std::string pixels(pixels_per_image, '\0');
    for (int p = 0; p < pixels_per_image; ++p) {
      pixels[p] = static_cast<char>((k * 37 + p * 11 + (k % images.classes) * p) % 256);
    }
    datum.set_data(pixels);
    datum.set_label(images.label_is_index ? k : k % images.classes);
    char key[16];
    std::snprintf(key, sizeof(key), "%08d", k);
    transaction->Put(
        key, k == images.corrupt ? std::string("\xff\xff\xff", 3) : datum.SerializeAsString());
  }
  transaction->Commit();
  database->Close();
}

/// DDL's LMDB: 28x28 images (MNIST's size), label k % 10 (or k itself).
inline void WriteDdlTestImages(const std::string& source, int count, bool label_is_index) {
  TestImages images;
  images.label_is_index = label_is_index;
  WriteTestImages(source, count, images);
}

/// A TRAIN-phase Data layer reading `source` (tops data, label).
inline std::string DdlTestDataLayer(const std::string& source, int batch) {
  return R"(layer { name: "data" type: "Data" top: "data" top: "label"
      include { phase: TRAIN }
      transform_param { scale: 0.00390625 }
      data_param { source: ")" +
         source + R"(" backend: LMDB batch_size: )" + std::to_string(batch) + " } }\n";
}

/// BVLC's LeNet (examples/mnist/lenet_train_test.prototxt: conv 5x5 (20) / max pool / conv 5x5
/// (50) / max pool / ip 500 / relu / ip 10 / softmax loss; 431 K parameters) trained with SGD,
/// momentum and weight decay for `iterations` iterations; `extra` adds solver fields.
inline std::string DdlTestSolver(const std::string& source, int batch, int iterations,
                                 const std::string& extra) {
  return "base_lr: 0.01 lr_policy: \"fixed\" momentum: 0.9 weight_decay: 0.0005 "
         "random_seed: 1701 solver_mode: CPU max_iter: " +
         std::to_string(iterations) + " " + extra + R"(
      net_param { name: "LeNet" )" +
         DdlTestDataLayer(source, batch) + R"(
        layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
          convolution_param { num_output: 20 kernel_size: 5 stride: 1
            weight_filler { type: "xavier" } bias_filler { type: "constant" } } }
        layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1"
          pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
        layer { name: "conv2" type: "Convolution" bottom: "pool1" top: "conv2"
          convolution_param { num_output: 50 kernel_size: 5 stride: 1
            weight_filler { type: "xavier" } bias_filler { type: "constant" } } }
        layer { name: "pool2" type: "Pooling" bottom: "conv2" top: "pool2"
          pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
        layer { name: "ip1" type: "InnerProduct" bottom: "pool2" top: "ip1"
          inner_product_param { num_output: 500
            weight_filler { type: "xavier" } bias_filler { type: "constant" } } }
        layer { name: "relu1" type: "ReLU" bottom: "ip1" top: "ip1" }
        layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
          inner_product_param { num_output: 10
            weight_filler { type: "xavier" } bias_filler { type: "constant" } } }
        layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
      })";
}

/// The largest over blobs of max|a - b| / max|b|; `worst_blob` gets the blob it came from.
inline double RelativeDifference(const std::vector<std::vector<float>>& a,
                                 const std::vector<std::vector<float>>& b, size_t* worst_blob) {
  double worst = a.size() == b.size() ? 0 : 1e30;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    double largest = 1e-12, difference = a[i].size() == b[i].size() ? 0 : 1e30;
    for (size_t j = 0; j < std::min(a[i].size(), b[i].size()); ++j) {
      largest = std::max(largest, std::fabs(double(b[i][j])));
      difference = std::max(difference, std::fabs(double(a[i][j]) - b[i][j]));
    }
    if (difference / largest > worst) {
      worst = difference / largest;
      *worst_blob = i;
    }
  }
  return worst;
}

}  // namespace caffe

#endif  // CAFFE_TEST_DDL_TEST_UTIL_HPP_
