// BatchNormLayer: batch statistics and the running sums BVLC keeps (moving average with the
// unbiased variance), stored statistics (use_global_stats, its phase default, a zero normaliser),
// lr_mult masking of the statistics, backward for both modes (by hand and by finite differences),
// in-place operation, large blobs (the threaded paths) against a direct evaluation, repeatability
// bit for bit, and bad shapes or parameters.
// BatchNormLayerGpuTest: the GPU path against the CPU path (skips without a GPU).
// Legend: N batch, C channels, S spatial positions per channel.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/batch_norm_layer.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#include "caffe/test/gradient_check_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {

template <typename TypeParam>
class BatchNormLayerTest : public MultiDeviceTest<TypeParam> {
 protected:
  using Dtype = typename TypeParam::Dtype;
  // (N, C, S) = (2, 2, 2). Channel 0 holds 1, 3, 5, 7 (mean 4, variance 5); channel 1 holds
  // 2, 2, 4, 8 (mean 4, variance 6).
  BatchNormLayerTest() : bottom_(vector<int>{2, 2, 2}) {
    const Dtype values[] = {1, 3, 2, 2, 5, 7, 4, 8};
    caffe_copy(8, values, bottom_.mutable_cpu_data());
  }
  static constexpr double kEps = 1e-5;
  Blob<Dtype> bottom_, top_;
  Blobs<Dtype> bottom_vec_{&bottom_};
  Blobs<Dtype> top_vec_{&top_};
};
TYPED_TEST_SUITE(BatchNormLayerTest, TestDtypesAndDevices);

TYPED_TEST(BatchNormLayerTest, SetUpCreatesZeroStatisticsAndTopOfBottomShape) {
  using Dtype = typename TypeParam::Dtype;
  BatchNormLayer<Dtype> layer(ParseLayerParam("name: 'bn' type: 'BatchNorm'"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), this->bottom_.shape());
  ASSERT_EQ(layer.blobs().size(), 3u);
  EXPECT_EQ(layer.blobs()[0]->shape(), vector<int>{2});
  EXPECT_EQ(layer.blobs()[1]->shape(), vector<int>{2});
  EXPECT_EQ(layer.blobs()[2]->shape(), vector<int>{1});
  for (auto& blob : layer.blobs()) {
    for (int i = 0; i < blob->count(); ++i) EXPECT_EQ(blob->cpu_data()[i], Dtype(0));
  }
}

TYPED_TEST(BatchNormLayerTest, TrainingNormalizesWithBatchStatistics) {
  using Dtype = typename TypeParam::Dtype;
  BatchNormLayer<Dtype> layer(ParseLayerParam("name: 'bn' type: 'BatchNorm'"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  const double mean[] = {4, 4}, var[] = {5, 6};
  const Dtype* x = this->bottom_.cpu_data();
  for (int i = 0; i < 8; ++i) {
    const int c = (i / 2) % 2;
    const double expected = (x[i] - mean[c]) / std::sqrt(var[c] + this->kEps);
    EXPECT_NEAR(this->top_.cpu_data()[i], expected, 1e-5) << i;
  }
}

TYPED_TEST(BatchNormLayerTest, TrainingUpdatesTheRunningSumsLikeBvlc) {
  using Dtype = typename TypeParam::Dtype;
  BatchNormLayer<Dtype> layer(ParseLayerParam(
      "name: 'bn' type: 'BatchNorm' batch_norm_param { moving_average_fraction: 0.9 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  // m = N * S = 4 values per channel; the stored variance is unbiased: var * 4 / 3.
  EXPECT_NEAR(layer.blobs()[2]->cpu_data()[0], 1, 1e-6);
  EXPECT_NEAR(layer.blobs()[0]->cpu_data()[0], 4, 1e-5);
  EXPECT_NEAR(layer.blobs()[0]->cpu_data()[1], 4, 1e-5);
  EXPECT_NEAR(layer.blobs()[1]->cpu_data()[0], 5 * 4.0 / 3, 1e-5);
  EXPECT_NEAR(layer.blobs()[1]->cpu_data()[1], 6 * 4.0 / 3, 1e-5);
  // A second batch (the first plus 1 everywhere: same variance, mean 5).
  for (int i = 0; i < 8; ++i) this->bottom_.mutable_cpu_data()[i] += 1;
  layer.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_NEAR(layer.blobs()[2]->cpu_data()[0], 0.9 * 1 + 1, 1e-6);
  EXPECT_NEAR(layer.blobs()[0]->cpu_data()[0], 0.9 * 4 + 5, 1e-5);
  EXPECT_NEAR(layer.blobs()[1]->cpu_data()[1], 0.9 * 8 + 8, 1e-5);
  // The output still uses the batch's statistics, not the running ones.
  EXPECT_NEAR(this->top_.cpu_data()[0], (2 - 5) / std::sqrt(5 + this->kEps), 1e-5);
}

TYPED_TEST(BatchNormLayerTest, GlobalStatsDivideTheStoredSumsByTheNormaliser) {
  using Dtype = typename TypeParam::Dtype;
  BatchNormLayer<Dtype> layer(ParseLayerParam(
      "name: 'bn' type: 'BatchNorm' batch_norm_param { use_global_stats: true eps: 0.01 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  // Stored sums with normaliser 2: mean (4, 6), variance (5, 12).
  const Dtype sums[] = {8, 12, 10, 24};
  caffe_copy(2, sums, layer.blobs()[0]->mutable_cpu_data());
  caffe_copy(2, sums + 2, layer.blobs()[1]->mutable_cpu_data());
  layer.blobs()[2]->mutable_cpu_data()[0] = Dtype(2);
  layer.Forward(this->bottom_vec_, this->top_vec_);
  const double mean[] = {4, 6}, var[] = {5, 12};
  const Dtype* x = this->bottom_.cpu_data();
  for (int i = 0; i < 8; ++i) {
    const int c = (i / 2) % 2;
    EXPECT_NEAR(this->top_.cpu_data()[i], (x[i] - mean[c]) / std::sqrt(var[c] + 0.01), 1e-5);
  }
  // The statistics are read, never updated.
  EXPECT_EQ(layer.blobs()[2]->cpu_data()[0], Dtype(2));
  EXPECT_EQ(layer.blobs()[0]->cpu_data()[1], Dtype(12));
  // Backward is the per-channel affine map's: dy / sqrt(var + eps).
  for (int i = 0; i < 8; ++i) this->top_.mutable_cpu_diff()[i] = Dtype(i - 3);
  layer.Backward(this->top_vec_, {true}, this->bottom_vec_);
  for (int i = 0; i < 8; ++i) {
    const int c = (i / 2) % 2;
    EXPECT_NEAR(this->bottom_.cpu_diff()[i], (i - 3) / std::sqrt(var[c] + 0.01), 1e-5);
  }
}

TYPED_TEST(BatchNormLayerTest, ZeroNormaliserMeansZeroStatistics) {
  using Dtype = typename TypeParam::Dtype;
  BatchNormLayer<Dtype> layer(ParseLayerParam(
      "name: 'bn' type: 'BatchNorm' batch_norm_param { use_global_stats: true eps: 0.25 }"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  caffe_set(2, Dtype(3), layer.blobs()[0]->mutable_cpu_data());
  caffe_set(2, Dtype(3), layer.blobs()[1]->mutable_cpu_data());
  layer.Forward(this->bottom_vec_, this->top_vec_);
  for (int i = 0; i < 8; ++i) {
    EXPECT_NEAR(this->top_.cpu_data()[i], this->bottom_.cpu_data()[i] * 2, 1e-5);  // / sqrt(0.25)
  }
}

TYPED_TEST(BatchNormLayerTest, UseGlobalStatsDefaultsToTestPhase) {
  using Dtype = typename TypeParam::Dtype;
  BatchNormLayer<Dtype> test_phase(ParseLayerParam("name: 'bn' type: 'BatchNorm' phase: TEST"));
  test_phase.SetUp(this->bottom_vec_, this->top_vec_);
  test_phase.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(test_phase.blobs()[2]->cpu_data()[0], Dtype(0));  // not updated
  BatchNormLayer<Dtype> overridden(ParseLayerParam(
      "name: 'bn' type: 'BatchNorm' phase: TEST batch_norm_param { use_global_stats: false }"));
  overridden.SetUp(this->bottom_vec_, this->top_vec_);
  overridden.Forward(this->bottom_vec_, this->top_vec_);
  EXPECT_EQ(overridden.blobs()[2]->cpu_data()[0], Dtype(1));  // updated
}

TYPED_TEST(BatchNormLayerTest, StatisticsAreMaskedFromTheSolver) {
  using Dtype = typename TypeParam::Dtype;
  BatchNormLayer<Dtype> plain(ParseLayerParam("name: 'bn' type: 'BatchNorm'"));
  plain.SetUp(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(plain.layer_param().param_size(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(plain.layer_param().param(i).lr_mult(), 0.f);

  BatchNormLayer<Dtype> partial(
      ParseLayerParam("name: 'bn' type: 'BatchNorm' param { lr_mult: 0 decay_mult: 0 }"));
  partial.SetUp(this->bottom_vec_, this->top_vec_);
  ASSERT_EQ(partial.layer_param().param_size(), 3);
  EXPECT_EQ(partial.layer_param().param(0).decay_mult(), 0.f);
  EXPECT_EQ(partial.layer_param().param(2).lr_mult(), 0.f);

  BatchNormLayer<Dtype> learned(
      ParseLayerParam("name: 'bn1' type: 'BatchNorm' param { lr_mult: 0 } param { lr_mult: 1 }"));
  try {
    learned.SetUp(this->bottom_vec_, this->top_vec_);
    FAIL() << "expected caffe::Error";
  } catch (const caffe::Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("BatchNorm layer 'bn1'"), std::string::npos) << message;
    EXPECT_NE(message.find("lr_mult"), std::string::npos) << message;
  }
}

// A BatchNorm layer run from `bottom` to `top`, and another run in place on `shared`, a copy of
// `bottom`: both set up and through one forward pass.
template <typename Dtype>
struct InPlacePair {
  explicit InPlacePair(Blob<Dtype>* bottom)
      : bottoms{bottom},
        tops{&top},
        in_place{&shared},
        layer(ParseLayerParam("name: 'bn' type: 'BatchNorm'")),
        in_place_layer(ParseLayerParam("name: 'bn' type: 'BatchNorm'")) {
    shared.CopyFrom(*bottom, false, true);
    layer.SetUp(bottoms, tops);
    in_place_layer.SetUp(in_place, in_place);
    layer.Forward(bottoms, tops);
    in_place_layer.Forward(in_place, in_place);
  }
  Blob<Dtype> top, shared;
  Blobs<Dtype> bottoms, tops, in_place;
  BatchNormLayer<Dtype> layer, in_place_layer;
};

TYPED_TEST(BatchNormLayerTest, InPlaceMatchesOutOfPlace) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{3, 2, 2, 3});
  FillGaussian(&bottom, 5);
  InPlacePair<Dtype> run(&bottom);
  auto& [top, shared, bottoms, tops, in_place, layer, in_place_layer] = run;
  FillGaussian(&top, 6);
  caffe_copy(top.count(), top.cpu_data(), top.mutable_cpu_diff());
  caffe_copy(top.count(), top.cpu_diff(), shared.mutable_cpu_diff());
  // A later in-place layer may overwrite the top; backward must not depend on it.
  caffe_set(shared.count(), Dtype(0), shared.mutable_cpu_data());
  layer.Forward(bottoms, tops);
  layer.Backward(tops, {true}, bottoms);
  in_place_layer.Backward(in_place, {true}, in_place);
  for (int i = 0; i < bottom.count(); ++i) {
    EXPECT_NEAR(shared.cpu_diff()[i], bottom.cpu_diff()[i], 1e-5) << i;
  }
}

// Blobs of at least kParallelMinElements values take the threaded paths (per channel, per plane);
// they must match a direct evaluation in double, in place too. (N, C, S) and (N, C) bottoms.
TYPED_TEST(BatchNormLayerTest, LargeBlobsMatchADirectEvaluation) {
  using Dtype = typename TypeParam::Dtype;
  for (const vector<int>& shape : {vector<int>{4, 6, 40, 40}, vector<int>{700, 50}}) {
    SCOPED_TRACE(Blob<Dtype>(shape).shape_string());
    Blob<Dtype> bottom(shape), top_diff(shape);
    FillGaussian(&bottom, 21, Dtype(2));
    // An offset per channel, so that a one-pass variance would lose digits.
    const int num = shape[0], channels = shape[1], spatial = bottom.count(2);
    for (int i = 0; i < bottom.count(); ++i) {
      bottom.mutable_cpu_data()[i] += Dtype(3 * ((i / spatial) % channels));
    }
    FillGaussian(&top_diff, 22);
    InPlacePair<Dtype> run(&bottom);
    auto& [top, shared, bottoms, tops, in_place, layer, in_place_layer] = run;
    caffe_copy(top.count(), top_diff.cpu_data(), top.mutable_cpu_diff());
    caffe_copy(top.count(), top_diff.cpu_data(), shared.mutable_cpu_diff());
    layer.Backward(tops, {true}, bottoms);
    in_place_layer.Backward(in_place, {true}, in_place);
    const int m = num * spatial;
    const Dtype* x = bottom.cpu_data();
    const Dtype* dy = top_diff.cpu_data();
    for (int c = 0; c < channels; ++c) {
      double sum = 0;
      for (int n = 0; n < num; ++n) {
        for (int s = 0; s < spatial; ++s) sum += x[(n * channels + c) * spatial + s];
      }
      const double mean = sum / m;
      double sum_sq = 0;
      for (int n = 0; n < num; ++n) {
        for (int s = 0; s < spatial; ++s) {
          sum_sq += std::pow(x[(n * channels + c) * spatial + s] - mean, 2);
        }
      }
      const double var = sum_sq / m, inv_std = 1 / std::sqrt(var + this->kEps);
      EXPECT_NEAR(layer.blobs()[0]->cpu_data()[c], mean, 1e-4) << c;
      EXPECT_NEAR(layer.blobs()[1]->cpu_data()[c], var * m / (m - 1), 1e-4) << c;
      double sum_dy = 0, sum_dy_y = 0;
      for (int n = 0; n < num; ++n) {
        for (int s = 0; s < spatial; ++s) {
          const int j = (n * channels + c) * spatial + s;
          sum_dy += dy[j];
          sum_dy_y += dy[j] * (x[j] - mean) * inv_std;
        }
      }
      for (int n = 0; n < num; ++n) {
        for (int s = 0; s < spatial; ++s) {
          const int j = (n * channels + c) * spatial + s;
          const double y = (x[j] - mean) * inv_std;
          const double dx = (dy[j] - sum_dy / m - sum_dy_y / m * y) * inv_std;
          ASSERT_NEAR(top.cpu_data()[j], y, 1e-4) << j;
          ASSERT_NEAR(shared.cpu_data()[j], top.cpu_data()[j], 1e-6) << j;
          ASSERT_NEAR(bottom.cpu_diff()[j], dx, 1e-4) << j;
          ASSERT_NEAR(shared.cpu_diff()[j], bottom.cpu_diff()[j], 1e-6) << j;
        }
      }
    }
    // The stored statistics, now in the global-stats mode: an affine map per channel.
    BatchNormLayer<Dtype> global(ParseLayerParam(
        "name: 'bn' type: 'BatchNorm' batch_norm_param { use_global_stats: true }"));
    global.SetUp(bottoms, tops);
    for (int b = 0; b < 3; ++b) global.blobs()[b]->CopyFrom(*layer.blobs()[b]);
    global.Forward(bottoms, tops);
    caffe_copy(top.count(), top_diff.cpu_data(), top.mutable_cpu_diff());
    global.Backward(tops, {true}, bottoms);
    for (int j = 0; j < bottom.count(); ++j) {
      const int c = (j / spatial) % channels;
      const double inv_std = 1 / std::sqrt(layer.blobs()[1]->cpu_data()[c] + this->kEps);
      ASSERT_NEAR(top.cpu_data()[j], (x[j] - layer.blobs()[0]->cpu_data()[c]) * inv_std, 1e-4) << j;
      ASSERT_NEAR(bottom.cpu_diff()[j], dy[j] * inv_std, 1e-5) << j;
    }
  }
}

// Sums run in a fixed order (on the GPU: slices of each channel added by one thread, no
// atomics), so two layers given the same input agree bit for bit: top, bottom diff, statistics.
TYPED_TEST(BatchNormLayerTest, RepeatedRunsAgreeBitForBit) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{3, 5, 40, 37}), top_diff(vector<int>{3, 5, 40, 37});
  FillGaussian(&bottom, 41, Dtype(3));
  FillGaussian(&top_diff, 42);
  vector<std::unique_ptr<Blob<Dtype>>> tops, bottom_diffs, variances;
  for (int run = 0; run < 2; ++run) {
    Blob<Dtype> input, top;
    input.CopyFrom(bottom, false, true);
    Blobs<Dtype> bottoms{&input}, top_vec{&top};
    BatchNormLayer<Dtype> layer(ParseLayerParam("name: 'bn' type: 'BatchNorm'"));
    layer.SetUp(bottoms, top_vec);
    layer.Forward(bottoms, top_vec);
    caffe_copy(top.count(), top_diff.cpu_data(), top.mutable_cpu_diff());
    layer.Backward(top_vec, {true}, bottoms);
    tops.push_back(std::make_unique<Blob<Dtype>>());
    tops.back()->CopyFrom(top, false, true);
    bottom_diffs.push_back(std::make_unique<Blob<Dtype>>());
    bottom_diffs.back()->CopyFrom(input, true, true);
    variances.push_back(std::make_unique<Blob<Dtype>>());
    variances.back()->CopyFrom(*layer.blobs()[1], false, true);
  }
  for (int j = 0; j < bottom.count(); ++j) {
    ASSERT_EQ(tops[0]->cpu_data()[j], tops[1]->cpu_data()[j]) << j;
    ASSERT_EQ(bottom_diffs[0]->cpu_diff()[j], bottom_diffs[1]->cpu_diff()[j]) << j;
  }
  for (int c = 0; c < variances[0]->count(); ++c) {
    EXPECT_EQ(variances[0]->cpu_data()[c], variances[1]->cpu_data()[c]) << c;
  }
}

TYPED_TEST(BatchNormLayerTest, TrainingGradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{2, 3, 2, 2});
  FillGaussian(&bottom, 7);
  Blobs<Dtype> bottoms{&bottom};
  BatchNormLayer<Dtype> layer(ParseLayerParam("name: 'bn' type: 'BatchNorm'"));
  GradientChecker<Dtype> checker(/*stepsize=*/1e-2, /*threshold=*/2e-3);
  checker.CheckGradientExhaustive(&layer, bottoms, this->top_vec_);
}

TYPED_TEST(BatchNormLayerTest, TwoAxisBottomGradientsMatchFiniteDifferences) {
  using Dtype = typename TypeParam::Dtype;
  Blob<Dtype> bottom(vector<int>{5, 3});
  FillGaussian(&bottom, 8);
  Blobs<Dtype> bottoms{&bottom};
  BatchNormLayer<Dtype> layer(ParseLayerParam("name: 'bn' type: 'BatchNorm'"));
  GradientChecker<Dtype> checker(/*stepsize=*/1e-2, /*threshold=*/2e-3);
  checker.CheckGradientExhaustive(&layer, bottoms, this->top_vec_);
  EXPECT_EQ(this->top_.shape(), (vector<int>{5, 3}));
}

TYPED_TEST(BatchNormLayerTest, RejectsChannelChangeAndBadStoredBlobs) {
  using Dtype = typename TypeParam::Dtype;
  BatchNormLayer<Dtype> layer(ParseLayerParam("name: 'bn1' type: 'BatchNorm'"));
  layer.SetUp(this->bottom_vec_, this->top_vec_);
  this->bottom_.Reshape({2, 3, 2});
  EXPECT_THROW(layer.Forward(this->bottom_vec_, this->top_vec_), caffe::Error);
  // Stored statistics (from a model) for 3 channels, fed a 3-channel bottom... of 2 channels.
  Blob<Dtype> two_channels(vector<int>{2, 2, 2});
  Blobs<Dtype> bottoms{&two_channels};
  BatchNormLayer<Dtype> loaded(ParseLayerParam(
      "name: 'bn1' type: 'BatchNorm' blobs { shape { dim: 3 } data: 0 data: 0 data: 0 } "
      "blobs { shape { dim: 3 } data: 1 data: 1 data: 1 } blobs { shape { dim: 1 } data: 1 }"));
  EXPECT_THROW(loaded.SetUp(bottoms, this->top_vec_), caffe::Error);
}

// ---- The GPU path against the CPU path (caffe/test/gpu_layer_check.hpp; skips without a GPU) ----

namespace {

/// BatchNorm's three stored blobs for `channels` channels as prototxt: running sums of means
/// and variances that differ per channel, and the running normaliser `scale`.
std::string BatchNormBlobs(int channels, double scale) {
  std::string mean = "blobs { shape { dim: " + std::to_string(channels) + " }";
  std::string var = mean;
  for (int c = 0; c < channels; ++c) {
    mean += " data: " + std::to_string(0.2 * c - 0.5);
    var += " data: " + std::to_string(0.5 + 0.25 * c);
  }
  return mean + " } " + var + " } blobs { shape { dim: 1 } data: " + std::to_string(scale) + " }";
}

}  // namespace

template <typename Dtype>
class BatchNormLayerGpuTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(BatchNormLayerGpuTest, TestDtypes);

TYPED_TEST(BatchNormLayerGpuTest, BatchNormTrainUpdatesRunningStatistics) {
  GpuLayerCase<TypeParam> c;
  c.layer =
      "name: 'bn' type: 'BatchNorm' phase: TRAIN "
      "batch_norm_param { moving_average_fraction: 0.9 eps: 0.0001 } " +
      BatchNormBlobs(7, 2.5) + " bottom: 'x' top: 'y'";
  c.bottom_shapes = {{5, 7, 9, 11}};
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(BatchNormLayerGpuTest, BatchNormTrainFromZeroStatisticsOnMatrix) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'bn' type: 'BatchNorm' bottom: 'x' top: 'y'";
  c.bottom_shapes = {{64, 13}};
  ExpectGpuMatchesCpu(c);
}

// Channels of 4440 values (two slices each for ChannelSumsKernel) far from zero: channel c holds
// offset * (c + 1) plus and minus 1, 2 and 3 in equal numbers, exactly representable, so that both
// paths get mean offset * (c + 1) and variance 14 / 3. In double the offset is 1e8, where a
// one-pass E[x^2] - E[x]^2 (1e16 + 4.7 is not a double) would lose the variance altogether.
TYPED_TEST(BatchNormLayerGpuTest, BatchNormChannelsFarFromZero) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'bn' type: 'BatchNorm' bottom: 'x' top: 'y'";
  c.bottom_shapes = {{3, 5, 40, 37}};
  c.tolerance = GpuSumTolerance<TypeParam>();
  c.fill = [](const Blobs<TypeParam>& bottoms) {
    const double offset = sizeof(TypeParam) == sizeof(double) ? 1e8 : 1e4;
    const int channels = bottoms[0]->shape(1), spatial = bottoms[0]->count(2);
    TypeParam* x = bottoms[0]->mutable_cpu_data();
    for (int j = 0; j < bottoms[0]->count(); ++j) {
      const int channel = (j / spatial) % channels;
      const int k = (j / (channels * spatial)) * spatial + j % spatial;  // index in the channel
      const int magnitude = 1 + (k / 2) % 3;
      x[j] = static_cast<TypeParam>(offset * (channel + 1) + (k % 2 ? magnitude : -magnitude));
    }
  };
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(BatchNormLayerGpuTest, BatchNormUseGlobalStats) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'bn' type: 'BatchNorm' batch_norm_param { use_global_stats: true } " +
            BatchNormBlobs(7, 2.5) + " bottom: 'x' top: 'y'";
  c.bottom_shapes = {{5, 7, 9, 11}};
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(BatchNormLayerGpuTest, BatchNormTestPhaseWithZeroNormaliser) {
  // use_global_stats follows the phase; a zero normaliser makes the stored statistics 0.
  GpuLayerCase<TypeParam> c;
  c.layer =
      "name: 'bn' type: 'BatchNorm' phase: TEST " + BatchNormBlobs(3, 0) + " bottom: 'x' top: 'y'";
  c.bottom_shapes = {{4, 3, 17}};
  ExpectGpuMatchesCpu(c);
}

}  // namespace caffe
