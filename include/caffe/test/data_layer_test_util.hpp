// Helpers shared by the tests of the data layers (Data, ImageData): run one Forward and read the
// batch back as numbers, and check that any number of worker threads gives the same batches.
// The layers' tops are (data, label).
#ifndef CAFFE_TEST_DATA_LAYER_TEST_UTIL_HPP_
#define CAFFE_TEST_DATA_LAYER_TEST_UTIL_HPP_

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/common.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// Runs one Forward of a data layer with tops `top` = (data, label) and returns the labels.
template <typename Dtype>
std::vector<int> ForwardBatchLabels(Layer<Dtype>* layer, const Blobs<Dtype>& top) {
  layer->Forward({}, top);
  const Blob<Dtype>& label = *top[1];
  std::vector<int> labels;
  for (int i = 0; i < label.count(); ++i) labels.push_back(static_cast<int>(label.cpu_data()[i]));
  return labels;
}

/// Runs one Forward of a data layer with tops `top` = (data, label) and returns the data followed
/// by the labels.
template <typename Dtype>
std::vector<Dtype> ForwardBatchValues(Layer<Dtype>* layer, const Blobs<Dtype>& top) {
  layer->Forward({}, top);
  const Blob<Dtype>& data = *top[0];
  const Blob<Dtype>& label = *top[1];
  std::vector<Dtype> values(data.cpu_data(), data.cpu_data() + data.count());
  values.insert(values.end(), label.cpu_data(), label.cpu_data() + label.count());
  return values;
}

/// For each count in `thread_counts`: seeds the random generator with `seed`, builds a layer with
/// `make_layer(threads)` (set up on `top`) and runs `batches` forwards; expects every count to give
/// exactly the batches of the first.
template <typename Dtype>
void ExpectSameBatchesForAnyThreadCount(
    const std::vector<int>& thread_counts, int batches, unsigned int seed,
    const std::function<std::unique_ptr<Layer<Dtype>>(int threads)>& make_layer,
    const Blobs<Dtype>& top) {
  std::vector<std::vector<Dtype>> reference;
  for (int threads : thread_counts) {
    Caffe::set_random_seed(seed);
    std::unique_ptr<Layer<Dtype>> layer = make_layer(threads);
    for (int batch = 0; batch < batches; ++batch) {
      const std::vector<Dtype> values = ForwardBatchValues(layer.get(), top);
      if (threads == thread_counts.front()) {
        reference.push_back(values);
      } else {
        EXPECT_EQ(values, reference[batch]) << threads << " threads, batch " << batch;
      }
    }
  }
}

}  // namespace caffe

#endif  // CAFFE_TEST_DATA_LAYER_TEST_UTIL_HPP_
