// For the tests of a layer engine against Caffe's own (test_dnnl_convolution_layer,
// test_dnnl_convolution_winograd): the two layers start from the same weights and the same
// non-zero param diffs, and their blobs agree relative to the largest value, as engines whose
// sums run in other orders (or by other algorithms) can.
#ifndef CAFFE_TEST_ENGINE_TEST_UTIL_HPP_
#define CAFFE_TEST_ENGINE_TEST_UTIL_HPP_

#include <algorithm>
#include <cmath>
#include <string>

#include "caffe/blob.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/layer.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

/// max |actual - expected| <= tolerance x max |expected| over the blobs' data (or diffs), and
/// something to compare (expected not all zero).
inline void ExpectCloseToLargest(const Blob<float>& actual, const Blob<float>& expected, bool diff,
                                 float tolerance, const std::string& what) {
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  const float* a = diff ? actual.cpu_diff() : actual.cpu_data();
  const float* e = diff ? expected.cpu_diff() : expected.cpu_data();
  float scale = 0, error = 0;
  for (int i = 0; i < expected.count(); ++i) {
    scale = std::max(scale, std::abs(e[i]));
    error = std::max(error, std::abs(a[i] - e[i]));
  }
  EXPECT_GT(scale, 0) << what << ": nothing to compare";
  EXPECT_LE(error, tolerance * scale) << what << ": max error " << error << " of " << scale;
}

/// Gives `layer` the reference's weights (both set up), and both the same param diffs drawn from
/// seeds 20, 21, ...: a backward then shows whether they accumulate, as Caffe's do.
inline void ShareWeightsAndParamDiffs(Layer<float>* reference, Layer<float>* layer) {
  for (size_t i = 0; i < reference->blobs().size(); ++i) {
    Blob<float>& ref = *reference->blobs()[i];
    layer->blobs()[i]->CopyFrom(ref);
    FillGaussian(&ref, 20 + static_cast<int>(i));
    caffe_copy(ref.count(), ref.cpu_data(), ref.mutable_cpu_diff());
    caffe_copy(ref.count(), ref.cpu_diff(), layer->blobs()[i]->mutable_cpu_diff());
    ref.CopyFrom(*layer->blobs()[i]);
  }
}

}  // namespace caffe

#endif  // CAFFE_TEST_ENGINE_TEST_UTIL_HPP_
