// BatchNorm's passes on channel-blocked values against a direct evaluation of its formulas, per
// channel over the batch and the positions, at blocks of 8 and 16: batch and stored statistics,
// the Scale and ReLU after it, and the group's backward (the Scale's gradients, dx).
#include <cmath>
#include <vector>

#include "caffe/kernels/batch_norm_blocked.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

constexpr int kNum = 3, kChannels = 32, kSpatial = 7;

// Where (n, c, s) lives in blocks of `block`.
size_t At(int n, int c, int s, int block) {
  return ((static_cast<size_t>(n) * (kChannels / block) + c / block) * kSpatial + s) * block +
         c % block;
}

std::vector<double> Values(int seed) {
  std::vector<double> values(kNum * kChannels * kSpatial);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(seed * 1.7 + i * 0.37) * 2 + 0.3;
  return values;
}

class BatchNormBlockedTest : public ::testing::TestWithParam<int> {};

INSTANTIATE_TEST_SUITE_P(Blocks, BatchNormBlockedTest, ::testing::Values(8, 16));

TEST_P(BatchNormBlockedTest, ForwardAndBackwardFollowTheFormulasPerChannel) {
  const int block = GetParam();
  const std::vector<double> x = Values(1), dy = Values(2);
  std::vector<double> scale(kChannels), bias(kChannels);
  for (int c = 0; c < kChannels; ++c) {
    scale[c] = 0.5 + 0.03 * c;
    bias[c] = 0.1 * (c % 5) - 0.2;
  }
  BatchNormFollowers<double> followers;
  followers.scale = scale.data();
  followers.bias = bias.data();
  followers.relu = true;
  std::vector<double> mean(kChannels), var(kChannels), inv_std(kChannels);
  std::vector<double> y(x.size()), x_norm(x.size());
  const double eps = 1e-5;
  BatchNormForwardBlocked(block, x.data(), kNum, kChannels, kSpatial, /*global=*/false, eps,
                          followers, mean.data(), var.data(), inv_std.data(), y.data(),
                          x_norm.data());
  BatchNormGroupBackward<double> group;
  group.followers = followers;
  group.dy = dy.data();
  group.x_norm = x_norm.data();
  group.inv_std = inv_std.data();
  group.sums = true;
  std::vector<double> scale_diff(kChannels, 1.0), bias_diff(kChannels, -1.0), dx(x.size());
  group.scale_diff = scale_diff.data();
  group.bias_diff = bias_diff.data();
  group.dx = dx.data();
  BatchNormBackwardBlocked<true>(group, kNum, kChannels, kSpatial, block);
  const double m = kNum * kSpatial;
  for (int c = 0; c < kChannels; ++c) {
    double sum = 0, sum_sq = 0;
    for (int n = 0; n < kNum; ++n) {
      for (int s = 0; s < kSpatial; ++s) sum += x[At(n, c, s, block)];
    }
    const double want_mean = sum / m;
    for (int n = 0; n < kNum; ++n) {
      for (int s = 0; s < kSpatial; ++s) {
        sum_sq += std::pow(x[At(n, c, s, block)] - want_mean, 2);
      }
    }
    const double want_inv_std = 1 / std::sqrt(sum_sq / m + eps);
    ASSERT_NEAR(mean[c], want_mean, 1e-12) << "channel " << c;
    ASSERT_NEAR(var[c], sum_sq / m, 1e-12) << "channel " << c;
    double sum_dv = 0, sum_dv_x_norm = 0;
    for (int n = 0; n < kNum; ++n) {
      for (int s = 0; s < kSpatial; ++s) {
        const size_t i = At(n, c, s, block);
        const double normalized = (x[i] - want_mean) * want_inv_std;
        ASSERT_NEAR(x_norm[i], normalized, 1e-12);
        const double z = normalized * scale[c] + bias[c];
        ASSERT_NEAR(y[i], z > 0 ? z : 0, 1e-12) << "channel " << c;
        const double dv = z > 0 ? dy[i] : 0;
        sum_dv += dv;
        sum_dv_x_norm += dv * normalized;
      }
    }
    EXPECT_NEAR(bias_diff[c], -1.0 + sum_dv, 1e-10) << "channel " << c;
    EXPECT_NEAR(scale_diff[c], 1.0 + sum_dv_x_norm, 1e-10) << "channel " << c;
    for (int n = 0; n < kNum; ++n) {
      for (int s = 0; s < kSpatial; ++s) {
        const size_t i = At(n, c, s, block);
        const double normalized = (x[i] - want_mean) * want_inv_std;
        const double dz = (normalized * scale[c] + bias[c] > 0 ? dy[i] : 0) * scale[c];
        const double want =
            (dz - scale[c] * sum_dv / m - scale[c] * sum_dv_x_norm / m * normalized) * want_inv_std;
        ASSERT_NEAR(dx[i], want, 1e-10) << "n " << n << " c " << c << " s " << s;
      }
    }
  }
}

// Stored statistics: an affine map per channel, forward and back, and the input may be the
// output (in place).
TEST_P(BatchNormBlockedTest, StoredStatisticsMapEachChannelInPlace) {
  const int block = GetParam();
  std::vector<double> values = Values(3);
  const std::vector<double> x = values;
  std::vector<double> mean(kChannels), inv_std(kChannels);
  for (int c = 0; c < kChannels; ++c) {
    mean[c] = 0.1 * c - 1;
    inv_std[c] = 1.0 / (1 + 0.05 * c);
  }
  BatchNormForwardBlocked<double>(block, values.data(), kNum, kChannels, kSpatial, /*global=*/true,
                                  0.0, BatchNormFollowers<double>(), mean.data(), nullptr,
                                  inv_std.data(), values.data(), nullptr);
  std::vector<double> diff = Values(4);
  const std::vector<double> dy = diff;
  BatchNormGroupBackward<double> group;  // no followers, no statistics' means
  group.dy = diff.data();
  group.x_norm = values.data();
  group.inv_std = inv_std.data();
  group.means = false;
  group.dx = diff.data();
  BatchNormBackwardBlocked<false>(group, kNum, kChannels, kSpatial, block);
  for (int n = 0; n < kNum; ++n) {
    for (int c = 0; c < kChannels; ++c) {
      for (int s = 0; s < kSpatial; ++s) {
        const size_t i = At(n, c, s, block);
        ASSERT_NEAR(values[i], (x[i] - mean[c]) * inv_std[c], 1e-12);
        ASSERT_NEAR(diff[i], dy[i] * inv_std[c], 1e-12);
      }
    }
  }
}

}  // namespace

}  // namespace caffe
