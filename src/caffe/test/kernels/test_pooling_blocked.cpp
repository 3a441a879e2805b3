// Pooling on channel-blocked values (kernels/pooling_blocked.hpp) through PoolingLayer: for each
// geometry the classic nets use, a bottom handed over in blocks of 8 or 16 gives the outputs,
// the argmax routing and the gradients of the same bottom handed over plain, to the bit (the
// same windows, sums in the same order), and the top stays blocked.
#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "caffe/io/io.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/layers/pooling_layer.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

struct Geometry {
  const char* name;
  const char* pooling_param;
  int height, width;
};

const Geometry kGeometries[] = {
    {"MaxThreeByThreeStrideTwoCeil", "pool: MAX kernel_size: 3 stride: 2", 13, 13},
    {"MaxThreeByThreeStrideTwoPadded", "pool: MAX kernel_size: 3 stride: 2 pad: 1", 14, 11},
    {"MaxTwoByTwo", "pool: MAX kernel_size: 2 stride: 2", 8, 6},
    {"MaxStrideOne", "pool: MAX kernel_size: 3 stride: 1 pad: 1", 7, 7},
    {"AveThreeByThreeStrideOne", "pool: AVE kernel_size: 3 stride: 1 pad: 1", 7, 9},
    {"AveFiveByFiveStrideThree", "pool: AVE kernel_size: 5 stride: 3", 14, 14},
    {"AveGlobal", "pool: AVE global_pooling: true", 7, 7},
};

class PoolingBlockedTest : public ::testing::TestWithParam<std::tuple<Geometry, int>> {
 protected:
  void SetUp() override { Caffe::set_mode(Caffe::CPU); }
};

// Ties too: rounded values repeat within windows, so the first maximum must win in both.
void FillRounded(Blob<float>* blob, unsigned int seed) {
  FillGaussian(blob, seed, 2.0f);
  float* values = blob->mutable_cpu_data();
  for (int i = 0; i < blob->count(); ++i) values[i] = std::round(values[i] * 2) / 2;
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Geometries, PoolingBlockedTest,
                         ::testing::Combine(::testing::ValuesIn(kGeometries),
                                            ::testing::Values(8, 16)),
                         [](const ::testing::TestParamInfo<std::tuple<Geometry, int>>& info) {
                           return std::string(std::get<0>(info.param).name) + "Block" +
                                  std::to_string(std::get<1>(info.param));
                         });

TEST_P(PoolingBlockedTest, BlockedValuesPoolAsPlainOnes) {
  const Geometry& geometry = std::get<0>(GetParam());
  const int block = std::get<1>(GetParam());
  LayerParameter param;
  ParseProtoFromText(std::string("pooling_param { ") + geometry.pooling_param + " }",
                     "pooling layer", &param);
  Blob<float> plain_bottom(std::vector<int>{3, 32, geometry.height, geometry.width});
  FillRounded(&plain_bottom, 5);
  Blob<float> blocked_bottom(plain_bottom.shape());
  blocked_bottom.CopyFrom(plain_bottom);
  Blob<float> plain_top, blocked_top;
  Blobs<float> plain_bottoms{&plain_bottom}, plain_tops{&plain_top};
  Blobs<float> blocked_bottoms{&blocked_bottom}, blocked_tops{&blocked_top};
  PoolingLayer<float> plain(param), blocked(param);
  plain.SetUp(plain_bottoms, plain_tops);
  blocked.SetUp(blocked_bottoms, blocked_tops);
  for (int pass = 0; pass < 2; ++pass) {
    blocked_bottom.mutable_cpu_data_in(block, /*keep_values=*/true);
    plain.Forward(plain_bottoms, plain_tops);
    blocked.Forward(blocked_bottoms, blocked_tops);
    EXPECT_EQ(block, blocked_top.cpu_data_block());
    for (int i = 0; i < plain_top.count(); ++i) {
      ASSERT_EQ(plain_top.cpu_data()[i], blocked_top.cpu_data()[i])
          << "top at " << i << ", pass " << pass;
    }
    blocked_top.mutable_cpu_data_in(block, /*keep_values=*/true);  // as a blocked consumer
    Blob<float> gradient(plain_top.shape());
    FillGaussian(&gradient, 20 + pass);
    caffe_copy(gradient.count(), gradient.cpu_data(), plain_top.mutable_cpu_diff());
    caffe_copy(gradient.count(), gradient.cpu_data(), blocked_top.mutable_cpu_diff());
    plain.Backward(plain_tops, {true}, plain_bottoms);
    blocked.Backward(blocked_tops, {true}, blocked_bottoms);
    EXPECT_EQ(block, blocked_bottom.cpu_diff_block());
    for (int i = 0; i < plain_bottom.count(); ++i) {
      ASSERT_EQ(plain_bottom.cpu_diff()[i], blocked_bottom.cpu_diff()[i])
          << "bottom gradient at " << i << ", pass " << pass;
    }
  }
}

}  // namespace caffe
