// Nets for the tests of layers that run as one (test_fused_layers, test_blocked_layout,
// test_dnnl_convolution_fusion): each builds one net twice, fused and apart (or blocked and
// plain), and the two must start from the same weights, inputs and statistics.
#ifndef CAFFE_TEST_FUSION_TEST_UTIL_HPP_
#define CAFFE_TEST_FUSION_TEST_UTIL_HPP_

#include <memory>
#include <string>

#include "caffe/io/io.hpp"
#include "caffe/net.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

/// The net of prototxt `text` (`what` names it in a parse error), its weights drawn from the
/// random seed 1701 (the same in every net so made), its "data" input from N(0, 2^2) and its
/// "target" input from N(0, 1), each with a seed of its own. The environment variables the net
/// reads at construction (CAFFE_FUSION, ...) are the caller's.
inline std::unique_ptr<Net<float>> SeededNet(const std::string& text, const std::string& what) {
  NetParameter param;
  ParseProtoFromText(text, what, &param);
  Caffe::set_random_seed(1701);
  auto net = std::make_unique<Net<float>>(param);
  FillGaussian(net->blob_by_name("data").get(), 11, 2.0f);
  FillGaussian(net->blob_by_name("target").get(), 12);
  return net;
}

/// A BatchNorm's running statistics as training leaves them, which use_global_stats normalizes
/// with: sums of means from N(0, 2^2) and of variances from U(0.5, 6), over a normaliser of 2.5.
inline void FillStoredStatistics(Layer<float>* batch_norm) {
  const auto& stats = batch_norm->blobs();
  FillGaussian(stats[0].get(), 13, 2.0f);
  FillUniform(stats[1].get(), 14, 0.5f, 6.0f);
  stats[2]->mutable_cpu_data()[0] = 2.5f;
}

}  // namespace caffe

#endif  // CAFFE_TEST_FUSION_TEST_UTIL_HPP_
