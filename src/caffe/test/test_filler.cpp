// The fillers: each one's values checked against its formula (bounds, mean and variance of a large
// fill from a fixed seed, the fan chosen by variance_norm), reproducibility from the seed, and the
// caffe::Error for an unknown type or bad parameters.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "caffe/filler.hpp"
#include "caffe/io/io.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

namespace {

FillerParameter ParseFiller(const std::string& text) {
  FillerParameter param;
  ParseProtoFromText(text, "test filler", &param);
  return param;
}

struct Moments {
  double mean = 0, variance = 0, min = 0, max = 0;
};

template <typename Dtype>
Moments ComputeMoments(const Blob<Dtype>& blob) {
  Moments m;
  const Dtype* data = blob.cpu_data();
  m.min = m.max = data[0];
  for (int i = 0; i < blob.count(); ++i) {
    m.mean += data[i];
    m.min = std::min<double>(m.min, data[i]);
    m.max = std::max<double>(m.max, data[i]);
  }
  m.mean /= blob.count();
  for (int i = 0; i < blob.count(); ++i) m.variance += (data[i] - m.mean) * (data[i] - m.mean);
  m.variance /= blob.count();
  return m;
}

}  // namespace

template <typename Dtype>
class FillerTest : public ::testing::Test {
 protected:
  FillerTest() { Caffe::set_random_seed(1701); }
  // Fills a fresh blob of `shape` with the filler `text` describes.
  void Fill(const std::string& text, const std::vector<int>& shape) {
    blob_.Reshape(shape);
    GetFiller<Dtype>(ParseFiller(text))->Fill(&blob_);
  }
  Blob<Dtype> blob_;
};
TYPED_TEST_SUITE(FillerTest, TestDtypes);

TYPED_TEST(FillerTest, ConstantSetsEveryValue) {
  this->Fill("type: 'constant' value: -2.5", {2, 3, 4, 5});
  for (int i = 0; i < this->blob_.count(); ++i) ASSERT_EQ(this->blob_.cpu_data()[i], -2.5) << i;
  // The default is 0, for any number of axes (biases are 1-D, scalars 0-D).
  this->Fill("", {7});
  for (int i = 0; i < 7; ++i) EXPECT_EQ(this->blob_.cpu_data()[i], 0);
  this->Fill("type: 'constant' value: 3", {});
  EXPECT_EQ(this->blob_.cpu_data()[0], 3);
}

TYPED_TEST(FillerTest, UniformStaysInRangeWithTheUniformMoments) {
  this->Fill("type: 'uniform' min: -1 max: 3", {100, 20, 5});
  const Moments m = ComputeMoments(this->blob_);
  EXPECT_GE(m.min, -1);
  EXPECT_LE(m.max, 3);
  // Spread over the whole range: the extremes come near both ends.
  EXPECT_LT(m.min, -0.99);
  EXPECT_GT(m.max, 2.99);
  // Mean (a + b) / 2 = 1 with standard error 4 / sqrt(12 * 10000) ~ 0.012; variance 16 / 12.
  EXPECT_NEAR(m.mean, 1.0, 0.05);
  EXPECT_NEAR(m.variance, 16.0 / 12, 0.05 * 16.0 / 12);
}

TYPED_TEST(FillerTest, UniformWithEqualBoundsIsConstant) {
  this->Fill("type: 'uniform' min: 0.5 max: 0.5", {50});
  for (int i = 0; i < 50; ++i) EXPECT_EQ(this->blob_.cpu_data()[i], 0.5);
}

TYPED_TEST(FillerTest, GaussianHasTheRequestedMeanAndStd) {
  this->Fill("type: 'gaussian' mean: 10 std: 0.5", {100, 200});
  const Moments m = ComputeMoments(this->blob_);
  // Standard errors: mean 0.5 / sqrt(20000) ~ 0.0035, variance 0.25 * sqrt(2 / 20000) = 0.0025.
  EXPECT_NEAR(m.mean, 10, 0.02);
  EXPECT_NEAR(m.variance, 0.25, 0.0125);
  // Some values lie beyond two std (about 4.6 % of them), none absurdly far.
  EXPECT_LT(m.min, 9);
  EXPECT_GT(m.max, 11);
  EXPECT_GT(m.min, 10 - 0.5 * 7);
  EXPECT_LT(m.max, 10 + 0.5 * 7);
}

TYPED_TEST(FillerTest, SparseGaussianKeepsSparseOverNumOutputsOfTheValues) {
  // 20 outputs, sparse 5: each value is non-zero with probability 5 / 20 = 0.25.
  this->Fill("type: 'gaussian' std: 1 sparse: 5", {20, 1000});
  int non_zero = 0;
  double sum_squares = 0;
  for (int i = 0; i < this->blob_.count(); ++i) {
    const double value = this->blob_.cpu_data()[i];
    if (value != 0) {
      ++non_zero;
      sum_squares += value * value;
    }
  }
  // Binomial(20000, 0.25): mean 5000, std ~61.
  EXPECT_NEAR(non_zero, 5000, 250);
  // The values kept are still N(0, 1).
  EXPECT_NEAR(sum_squares / non_zero, 1.0, 0.06);
  // Each output keeps about `sparse` of every 20 inputs: in 1000 columns, ~250 each.
  for (int row = 0; row < 20; ++row) {
    int row_non_zero = 0;
    for (int j = 0; j < 1000; ++j) row_non_zero += this->blob_.cpu_data()[row * 1000 + j] != 0;
    EXPECT_NEAR(row_non_zero, 250, 70) << "row " << row;
  }
}

TYPED_TEST(FillerTest, SparseZeroGivesAllZerosAndSparseEqualToOutputsKeepsAll) {
  this->Fill("type: 'gaussian' sparse: 0", {4, 50});
  EXPECT_EQ(this->blob_.asum_data(), 0);
  this->Fill("type: 'gaussian' sparse: 4", {4, 50});
  for (int i = 0; i < this->blob_.count(); ++i) EXPECT_NE(this->blob_.cpu_data()[i], 0) << i;
}

TYPED_TEST(FillerTest, PositiveUnitballRowsArePositiveAndSumToOne) {
  this->Fill("type: 'positive_unitball'", {10, 3, 4});
  for (int row = 0; row < 10; ++row) {
    double sum = 0;
    for (int j = 0; j < 12; ++j) {
      const double value = this->blob_.cpu_data()[row * 12 + j];
      EXPECT_GE(value, 0);
      EXPECT_LE(value, 1);
      sum += value;
    }
    EXPECT_NEAR(sum, 1.0, 1e-5) << "row " << row;
  }
  // Not all equal: the values are random before the normalisation.
  const Moments m = ComputeMoments(this->blob_);
  EXPECT_GT(m.max - m.min, 0.05);
}

// Xavier: U(-sqrt(3 / n), sqrt(3 / n)), variance 1 / n. For (200, 100, 2, 2): fan_in = count /
// shape(0) = 400, fan_out = count / shape(1) = 800, average 600.
TYPED_TEST(FillerTest, XavierScalesByTheFanVarianceNormChooses) {
  const std::vector<int> shape{200, 100, 2, 2};
  const struct {
    const char* norm;
    double n;
  } cases[] = {{"", 400},
               {"variance_norm: FAN_IN", 400},
               {"variance_norm: FAN_OUT", 800},
               {"variance_norm: AVERAGE", 600}};
  for (const auto& c : cases) {
    this->Fill(std::string("type: 'xavier' ") + c.norm, shape);
    const Moments m = ComputeMoments(this->blob_);
    const double scale = std::sqrt(3.0 / c.n);
    EXPECT_GE(m.min, -scale - 1e-7) << c.norm;
    EXPECT_LE(m.max, scale + 1e-7) << c.norm;
    EXPECT_GT(m.max, 0.99 * scale) << c.norm;
    EXPECT_NEAR(m.mean, 0, 0.05 * scale) << c.norm;
    // 80000 values: the variance's relative standard error is sqrt(0.8 / 80000) = 0.3 %.
    EXPECT_NEAR(m.variance, 1.0 / c.n, 0.03 / c.n) << c.norm;
  }
}

// MSRA: N(0, 2 / n), n as for xavier.
TYPED_TEST(FillerTest, MsraScalesByTheFanVarianceNormChooses) {
  const std::vector<int> shape{200, 100, 2, 2};
  const struct {
    const char* norm;
    double n;
  } cases[] = {{"", 400},
               {"variance_norm: FAN_IN", 400},
               {"variance_norm: FAN_OUT", 800},
               {"variance_norm: AVERAGE", 600}};
  for (const auto& c : cases) {
    this->Fill(std::string("type: 'msra' ") + c.norm, shape);
    const Moments m = ComputeMoments(this->blob_);
    const double variance = 2.0 / c.n;
    EXPECT_NEAR(m.mean, 0, 0.05 * std::sqrt(variance)) << c.norm;
    // Relative standard error sqrt(2 / 80000) = 0.5 %.
    EXPECT_NEAR(m.variance, variance, 0.03 * variance) << c.norm;
  }
}

TYPED_TEST(FillerTest, FansOfInnerProductAndOneAxisBlobs) {
  // InnerProduct weights (num_output, inputs) = (300, 50): fan_in 50, fan_out 300.
  this->Fill("type: 'msra' variance_norm: FAN_IN", {300, 50});
  EXPECT_NEAR(ComputeMoments(this->blob_).variance, 2.0 / 50, 0.05 * 2.0 / 50);
  this->Fill("type: 'msra' variance_norm: FAN_OUT", {300, 50});
  EXPECT_NEAR(ComputeMoments(this->blob_).variance, 2.0 / 300, 0.05 * 2.0 / 300);
  // A 1-D blob of 20000: fan_in = 1, fan_out = count.
  this->Fill("type: 'xavier' variance_norm: FAN_IN", {20000});
  EXPECT_NEAR(ComputeMoments(this->blob_).variance, 1.0, 0.05);
  this->Fill("type: 'xavier' variance_norm: FAN_OUT", {20000});
  EXPECT_NEAR(ComputeMoments(this->blob_).variance, 1.0 / 20000, 0.05 / 20000);
}

// Bilinear: w(x, y) = (1 - |x / f - c|) (1 - |y / f - c|), f = ceil(k / 2), c = (k - 1) / (2 f),
// the same kernel in every (output, input) slice.
TYPED_TEST(FillerTest, BilinearKernelsMatchHandComputedValues) {
  const std::vector<std::vector<double>> expected_1d = {
      {1},                                                       // k = 1
      {0.5, 1, 0.5},                                             // k = 3
      {0.25, 0.75, 0.75, 0.25},                                  // k = 4: upsampling by 2
      {1.0 / 3, 2.0 / 3, 1, 2.0 / 3, 1.0 / 3},                   // k = 5
      {0.25, 0.5, 0.75, 1, 0.75, 0.5, 0.25},                     // k = 7
      {0.125, 0.375, 0.625, 0.875, 0.875, 0.625, 0.375, 0.125},  // k = 8: upsampling by 4
  };
  for (const auto& weights : expected_1d) {
    const int k = static_cast<int>(weights.size());
    this->Fill("type: 'bilinear'", {2, 3, k, k});
    for (int slice = 0; slice < 6; ++slice) {
      for (int y = 0; y < k; ++y) {
        for (int x = 0; x < k; ++x) {
          EXPECT_NEAR(this->blob_.cpu_data()[(slice * k + y) * k + x], weights[y] * weights[x],
                      1e-6)
              << "k " << k << " slice " << slice << " at (" << y << ", " << x << ")";
        }
      }
    }
  }
}

TYPED_TEST(FillerTest, BilinearKernelsAreSymmetric) {
  for (int k = 1; k <= 12; ++k) {
    this->Fill("type: 'bilinear'", {1, 1, k, k});
    const auto* data = this->blob_.cpu_data();
    for (int y = 0; y < k; ++y) {
      for (int x = 0; x < k; ++x) {
        EXPECT_NEAR(data[y * k + x], data[(k - 1 - y) * k + (k - 1 - x)], 1e-6)
            << "k " << k << " at (" << y << ", " << x << ")";
        EXPECT_NEAR(data[y * k + x], data[x * k + y], 1e-6) << "k " << k;
      }
    }
  }
}

TYPED_TEST(FillerTest, SameSeedGivesTheSameFillAndAnotherSeedAnother) {
  for (const char* type : {"uniform", "gaussian", "positive_unitball", "xavier", "msra"}) {
    const std::string text = std::string("type: '") + type + "'";
    Caffe::set_random_seed(42);
    this->Fill(text, {8, 5});
    std::vector<double> first(this->blob_.cpu_data(), this->blob_.cpu_data() + 40);
    Caffe::set_random_seed(42);
    this->Fill(text, {8, 5});
    for (int i = 0; i < 40; ++i) ASSERT_EQ(this->blob_.cpu_data()[i], first[i]) << type << " " << i;
    Caffe::set_random_seed(43);
    this->Fill(text, {8, 5});
    int same = 0;
    for (int i = 0; i < 40; ++i) same += this->blob_.cpu_data()[i] == first[i];
    EXPECT_LT(same, 40) << type;
  }
}

TYPED_TEST(FillerTest, UnknownTypeIsAnErrorListingTheKnownOnes) {
  try {
    GetFiller<TypeParam>(ParseFiller("type: 'he_normal'"));
    FAIL() << "expected caffe::Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("\"he_normal\""), std::string::npos) << message;
    for (const char* known :
         {"constant", "uniform", "gaussian", "positive_unitball", "xavier", "msra", "bilinear"}) {
      EXPECT_NE(message.find(known), std::string::npos) << known << " in: " << message;
    }
  }
}

TYPED_TEST(FillerTest, BadParametersAreErrors) {
  auto fill = [this](const std::string& text, const std::vector<int>& shape) {
    this->Fill(text, shape);
  };
  EXPECT_THROW(fill("type: 'uniform' min: 2 max: 1", {4}), Error);
  EXPECT_THROW(fill("type: 'gaussian' std: 0", {4}), Error);
  EXPECT_THROW(fill("type: 'gaussian' std: -1", {4}), Error);
  EXPECT_THROW(fill("type: 'gaussian' sparse: -2", {4, 4}), Error);
  EXPECT_THROW(fill("type: 'gaussian' sparse: 5", {4, 4}), Error);  // more than 4 outputs
  EXPECT_THROW(fill("type: 'gaussian' sparse: 1", {}), Error);      // no output axis
  for (const char* type :
       {"constant", "uniform", "positive_unitball", "xavier", "msra", "bilinear"}) {
    EXPECT_THROW(fill(std::string("type: '") + type + "' sparse: 1", {2, 2, 2, 2}), Error)
        << type << " does not support sparse";
  }
  EXPECT_THROW(fill("type: 'xavier'", {}), Error);
  EXPECT_THROW(fill("type: 'msra'", {0, 5}), Error);
  EXPECT_THROW(fill("type: 'bilinear'", {2, 3, 3}), Error);     // not 4-D
  EXPECT_THROW(fill("type: 'bilinear'", {2, 3, 3, 4}), Error);  // not square
  try {
    fill("type: 'bilinear'", {2, 3, 3, 4});
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("2 3 3 4"), std::string::npos) << e.what();
  }
}

}  // namespace caffe
