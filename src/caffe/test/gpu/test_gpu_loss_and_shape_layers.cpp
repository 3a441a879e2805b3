// GPU against CPU for the loss layers (SoftmaxWithLoss in every normalization mode and with
// ignored labels, EuclideanLoss, SigmoidCrossEntropyLoss, ContrastiveLoss), Softmax, Accuracy,
// the layers that move values around without arithmetic (Concat, Slice, Split, Crop, Tile,
// BatchReindex, Filter, Silence) and the reducing ones (Reduction, MVN, BatchNorm, LSTMUnit).
// Shapes are odd-sized and, where it matters, span several thread blocks (> 512 values, rows of
// more than 256 values for the block-per-row kernels). The finite-difference gradient checks of
// the differentiable ones already run on the GPU in test/layers/ (typed over CPU and GPU).
#include <string>
#include <vector>

#include "caffe/test/gpu_layer_check.hpp"

namespace caffe {

namespace {

/// Integer labels in [0, num_classes), in a pattern that reaches every class; with ignore_every
/// > 0, every ignore_every-th label is ignore_value instead.
template <typename Dtype>
void FillLabels(Blob<Dtype>* labels, int num_classes, int ignore_every = 0,
                int ignore_value = -1) {
  Dtype* data = labels->mutable_cpu_data();
  for (int i = 0; i < labels->count(); ++i) {
    data[i] = Dtype((i * 7 + i / 3) % num_classes);
    if (ignore_every > 0 && i % ignore_every == 0) data[i] = Dtype(ignore_value);
  }
}

/// 0/1 values (every third one 0), e.g. similarity labels, selectors, sequence indicators.
template <typename Dtype>
void FillZeroOne(Blob<Dtype>* blob) {
  Dtype* data = blob->mutable_cpu_data();
  for (int i = 0; i < blob->count(); ++i) data[i] = Dtype(i % 3 == 1 ? 0 : 1);
}

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
class GpuLossAndShapeLayersTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(GpuLossAndShapeLayersTest, TestDtypes);

// ---- Softmax ----

// These cases test Caffe's own softmax kernels: in cuDNN builds the DEFAULT engine is cuDNN's
// (tested with the cuDNN layers). SoftmaxWithLoss passes the engine to its inner Softmax layer.
const std::string kCaffeSoftmax = "softmax_param { engine: CAFFE }";

TYPED_TEST(GpuLossAndShapeLayersTest, SoftmaxOverContiguousRowsOfManyClasses) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'prob' type: 'Softmax' " + kCaffeSoftmax + " bottom: 'x' top: 'y'";
  c.bottom_shapes = {{37, 1003}};  // inner == 1: one block per row, several values per thread
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(GpuLossAndShapeLayersTest, SoftmaxOverChannelsOfSpatialBlob) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'prob' type: 'Softmax' " + kCaffeSoftmax + " bottom: 'x' top: 'y'";
  c.bottom_shapes = {{3, 7, 13, 17}};  // 663 positions of 7 classes, 221 apart
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(GpuLossAndShapeLayersTest, SoftmaxOverLastAxis) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'prob' type: 'Softmax' softmax_param { engine: CAFFE axis: -1 } "
            "bottom: 'x' top: 'y'";
  c.bottom_shapes = {{5, 11, 13}};
  ExpectGpuMatchesCpu(c);
}

// ---- SoftmaxWithLoss ----

// Scores (10, 7, 3, 5): 150 positions of 7 classes; labels one per position.
template <typename Dtype>
GpuLayerCase<Dtype> SoftmaxLossCase(const std::string& loss_param, int ignore_every = 0,
                                    int ignore_value = -1) {
  GpuLayerCase<Dtype> c;
  c.layer = "name: 'loss' type: 'SoftmaxWithLoss' " + kCaffeSoftmax + " " + loss_param +
            " bottom: 'score' bottom: 'label' top: 'loss'";
  c.bottom_shapes = {{10, 7, 3, 5}, {10, 1, 3, 5}};
  c.fill = [=](const Blobs<Dtype>& bottom) {
    FillGaussian(bottom[0], 11, Dtype(2));
    FillLabels(bottom[1], 7, ignore_every, ignore_value);
  };
  c.propagate_down = {true, false};
  return c;
}

TYPED_TEST(GpuLossAndShapeLayersTest, SoftmaxWithLossDefaultValidNormalization) {
  ExpectGpuMatchesCpu(SoftmaxLossCase<TypeParam>(""));
}

TYPED_TEST(GpuLossAndShapeLayersTest, SoftmaxWithLossEachNormalizationMode) {
  for (const char* mode : {"FULL", "VALID", "BATCH_SIZE", "NONE"}) {
    SCOPED_TRACE(mode);
    ExpectGpuMatchesCpu(
        SoftmaxLossCase<TypeParam>(std::string("loss_param { normalization: ") + mode + " }"));
  }
}

TYPED_TEST(GpuLossAndShapeLayersTest, SoftmaxWithLossLegacyNormalizeFlag) {
  for (const char* normalize : {"true", "false"}) {
    SCOPED_TRACE(normalize);
    ExpectGpuMatchesCpu(
        SoftmaxLossCase<TypeParam>(std::string("loss_param { normalize: ") + normalize + " }"));
  }
}

TYPED_TEST(GpuLossAndShapeLayersTest, SoftmaxWithLossIgnoreLabelInEachMode) {
  // Label 1 is a real class here: the ignored positions are its own and every fourth one.
  for (const char* mode : {"FULL", "VALID", "BATCH_SIZE", "NONE"}) {
    SCOPED_TRACE(mode);
    ExpectGpuMatchesCpu(SoftmaxLossCase<TypeParam>(
        std::string("loss_param { ignore_label: 1 normalization: ") + mode + " }", 4, 1));
  }
}

TYPED_TEST(GpuLossAndShapeLayersTest, SoftmaxWithLossNegativeIgnoreLabelAndLossWeight) {
  GpuLayerCase<TypeParam> c = SoftmaxLossCase<TypeParam>("loss_param { ignore_label: -1 }", 3);
  c.layer = "loss_weight: 2.5 " + c.layer;
  ExpectGpuMatchesCpu(c);
}

// The default engine here: cuDNN's softmax inside, where the build has it.
TYPED_TEST(GpuLossAndShapeLayersTest, SoftmaxWithLossClassifierWithProbabilityTop) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'loss' type: 'SoftmaxWithLoss' loss_weight: 1 loss_weight: 0 "
            "bottom: 'score' bottom: 'label' top: 'loss' top: 'prob'";
  c.bottom_shapes = {{64, 1000}, {64}};
  c.fill = [](const Blobs<TypeParam>& bottom) {
    FillGaussian(bottom[0], 12, TypeParam(3));
    FillLabels(bottom[1], 1000);
  };
  c.propagate_down = {true, false};
  ExpectGpuMatchesCpu(c);
}

// ---- EuclideanLoss ----

TYPED_TEST(GpuLossAndShapeLayersTest, EuclideanLossGradientsToBothBottoms) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'loss' type: 'EuclideanLoss' loss_weight: 0.7 bottom: 'a' bottom: 'b'"
            " top: 'loss'";
  c.bottom_shapes = {{13, 7, 11}, {13, 77}};
  ExpectGpuMatchesCpu(c);
}

// ---- SigmoidCrossEntropyLoss ----

// Scores (9, 131); targets 0/1 (every fifth -1 when ignoring), or fractions in [0, 1].
template <typename Dtype>
GpuLayerCase<Dtype> SigmoidLossCase(const std::string& loss_param, bool ignore,
                                    bool fractional_targets = false) {
  GpuLayerCase<Dtype> c;
  c.layer = "name: 'loss' type: 'SigmoidCrossEntropyLoss' " + loss_param +
            " bottom: 'score' bottom: 'target' top: 'loss'";
  c.bottom_shapes = {{9, 131}, {9, 131}};
  c.fill = [=](const Blobs<Dtype>& bottom) {
    FillGaussian(bottom[0], 13, Dtype(4));  // large scores of both signs
    if (fractional_targets) {
      FillUniform(bottom[1], 14, Dtype(0), Dtype(1));
    } else {
      FillLabels(bottom[1], 2, ignore ? 5 : 0, -1);
    }
  };
  c.propagate_down = {true, false};
  return c;
}

TYPED_TEST(GpuLossAndShapeLayersTest, SigmoidCrossEntropyLossDefaultBatchSize) {
  ExpectGpuMatchesCpu(SigmoidLossCase<TypeParam>("", false));
  ExpectGpuMatchesCpu(SigmoidLossCase<TypeParam>("", false, true));
}

TYPED_TEST(GpuLossAndShapeLayersTest, SigmoidCrossEntropyLossIgnoreLabelInEachMode) {
  for (const char* mode : {"FULL", "VALID", "BATCH_SIZE", "NONE"}) {
    SCOPED_TRACE(mode);
    ExpectGpuMatchesCpu(SigmoidLossCase<TypeParam>(
        std::string("loss_param { ignore_label: -1 normalization: ") + mode + " }", true));
  }
}

TYPED_TEST(GpuLossAndShapeLayersTest, SigmoidCrossEntropyLossLegacyNormalize) {
  ExpectGpuMatchesCpu(
      SigmoidLossCase<TypeParam>("loss_param { ignore_label: -1 normalize: true }", true));
}

// ---- ContrastiveLoss ----

// 29 pairs of 17 features, similarity 0/1; the margin is near the typical distance (squared
// distance when legacy), so dissimilar pairs fall on both sides of it.
template <typename Dtype>
GpuLayerCase<Dtype> ContrastiveCase(const std::string& param) {
  GpuLayerCase<Dtype> c;
  c.layer = "name: 'loss' type: 'ContrastiveLoss' contrastive_loss_param { " + param +
            " } bottom: 'a' bottom: 'b' bottom: 'similar' top: 'loss'";
  c.bottom_shapes = {{29, 17}, {29, 17, 1, 1}, {29}};
  c.fill = [](const Blobs<Dtype>& bottom) {
    FillGaussian(bottom[0], 15);
    FillGaussian(bottom[1], 16);
    FillZeroOne(bottom[2]);
  };
  c.propagate_down = {true, true, false};
  return c;
}

TYPED_TEST(GpuLossAndShapeLayersTest, ContrastiveLoss) {
  ExpectGpuMatchesCpu(ContrastiveCase<TypeParam>("margin: 6"));
}

TYPED_TEST(GpuLossAndShapeLayersTest, ContrastiveLossLegacyVersion) {
  ExpectGpuMatchesCpu(ContrastiveCase<TypeParam>("margin: 34 legacy_version: true"));
}

// ---- Accuracy ----

TYPED_TEST(GpuLossAndShapeLayersTest, AccuracyTop1) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'acc' type: 'Accuracy' bottom: 'score' bottom: 'label' top: 'acc'";
  c.bottom_shapes = {{600, 10}, {600}};
  c.fill = [](const Blobs<TypeParam>& bottom) {
    FillGaussian(bottom[0], 17);
    FillLabels(bottom[1], 10);
  };
  c.backward = false;
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(GpuLossAndShapeLayersTest, AccuracyTopKWithPerClassTop) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'acc' type: 'Accuracy' accuracy_param { top_k: 3 } bottom: 'score' "
            "bottom: 'label' top: 'acc' top: 'per_class'";
  c.bottom_shapes = {{700, 11}, {700}};
  c.fill = [](const Blobs<TypeParam>& bottom) {
    FillGaussian(bottom[0], 18);
    FillLabels(bottom[1], 11);
  };
  c.backward = false;
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(GpuLossAndShapeLayersTest, AccuracySpatialWithIgnoreLabel) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'acc' type: 'Accuracy' accuracy_param { top_k: 2 ignore_label: 2 } "
            "bottom: 'score' bottom: 'label' top: 'acc' top: 'per_class'";
  c.bottom_shapes = {{4, 6, 15, 11}, {4, 1, 15, 11}};  // 660 positions of 6 classes
  c.fill = [](const Blobs<TypeParam>& bottom) {
    FillGaussian(bottom[0], 19);
    FillLabels(bottom[1], 6, 7, 2);
  };
  c.backward = false;
  ExpectGpuMatchesCpu(c);
}

// ---- Concat and Slice ----

TYPED_TEST(GpuLossAndShapeLayersTest, ConcatAlongAxis0) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'cat' type: 'Concat' concat_param { axis: 0 } bottom: 'a' bottom: 'b' "
            "top: 'y'";
  c.bottom_shapes = {{2, 3, 8, 9}, {3, 3, 8, 9}};
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(GpuLossAndShapeLayersTest, ConcatAlongAxis1) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'cat' type: 'Concat' bottom: 'a' bottom: 'b' bottom: 'c' top: 'y'";
  c.bottom_shapes = {{3, 3, 8, 9}, {3, 5, 8, 9}, {3, 1, 8, 9}};
  ExpectGpuMatchesCpu(c);
  c.propagate_down = {true, false, true};
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(GpuLossAndShapeLayersTest, SliceAlongAxis0Equally) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'slice' type: 'Slice' slice_param { axis: 0 } bottom: 'x' top: 'a' "
            "top: 'b' top: 'c'";
  c.bottom_shapes = {{6, 3, 8, 9}};
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(GpuLossAndShapeLayersTest, SliceAlongAxis1AtSlicePoints) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'slice' type: 'Slice' slice_param { slice_point: 1 slice_point: 4 } "
            "bottom: 'x' top: 'a' top: 'b' top: 'c'";
  c.bottom_shapes = {{3, 9, 8, 9}};
  ExpectGpuMatchesCpu(c);
}

// ---- Split ----

TYPED_TEST(GpuLossAndShapeLayersTest, SplitSumsThreeTopDiffs) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'split' type: 'Split' bottom: 'x' top: 'a' top: 'b' top: 'c'";
  c.bottom_shapes = {{5, 7, 11, 3}};
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(GpuLossAndShapeLayersTest, SplitOneTop) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'split' type: 'Split' bottom: 'x' top: 'a'";
  c.bottom_shapes = {{5, 7, 11, 3}};
  ExpectGpuMatchesCpu(c);
}

// ---- Crop ----

TYPED_TEST(GpuLossAndShapeLayersTest, CropSpatialAxesWithTwoOffsets) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'crop' type: 'Crop' crop_param { axis: 2 offset: 3 offset: 5 } "
            "bottom: 'x' bottom: 'ref' top: 'y'";
  c.bottom_shapes = {{2, 4, 13, 17}, {2, 4, 7, 9}};
  c.propagate_down = {true, false};
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(GpuLossAndShapeLayersTest, CropFromAxis1WithOneOffsetAndReferenceDiff) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'crop' type: 'Crop' crop_param { axis: 1 offset: 1 } "
            "bottom: 'x' bottom: 'ref' top: 'y'";
  c.bottom_shapes = {{3, 6, 10, 12}, {3, 4, 7, 8}};
  ExpectGpuMatchesCpu(c);  // bottom[1] asks for a gradient too: it must come back zero
}

// ---- Tile ----

TYPED_TEST(GpuLossAndShapeLayersTest, TileAlongAxis1) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'tile' type: 'Tile' tile_param { axis: 1 tiles: 4 } bottom: 'x' top: 'y'";
  c.bottom_shapes = {{3, 5, 37}};
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(GpuLossAndShapeLayersTest, TileAlongAxis0) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'tile' type: 'Tile' tile_param { axis: 0 tiles: 3 } bottom: 'x' top: 'y'";
  c.bottom_shapes = {{4, 101}};
  ExpectGpuMatchesCpu(c);
}

// ---- BatchReindex ----

TYPED_TEST(GpuLossAndShapeLayersTest, BatchReindexWithRepeatsAndUnpickedItems) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'reindex' type: 'BatchReindex' bottom: 'x' bottom: 'index' top: 'y'";
  c.bottom_shapes = {{8, 3, 5, 11}, {12}};
  c.fill = [](const Blobs<TypeParam>& bottom) {
    FillGaussian(bottom[0], 20);
    const int picks[] = {6, 0, 3, 3, 1, 6, 6, 2, 5, 0, 4, 3};  // item 7 is never picked
    for (int m = 0; m < 12; ++m) bottom[1]->mutable_cpu_data()[m] = TypeParam(picks[m]);
  };
  c.propagate_down = {true, false};
  ExpectGpuMatchesCpu(c);
}

// ---- Reduction ----

TYPED_TEST(GpuLossAndShapeLayersTest, ReductionSumOverEverything) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'sum' type: 'Reduction' bottom: 'x' top: 'y'";
  c.bottom_shapes = {{5, 7, 33}};
  c.tolerance = GpuSumTolerance<TypeParam>();
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(GpuLossAndShapeLayersTest, ReductionEachOperationAndAxis) {
  const char* cases[] = {
      "operation: ASUM axis: 1",
      "operation: SUMSQ axis: 2",
      "operation: MEAN axis: 1 coeff: 2.5",
      "operation: SUM axis: -1 coeff: -0.5",
  };
  for (const char* param : cases) {
    SCOPED_TRACE(param);
    GpuLayerCase<TypeParam> c;
    c.layer = std::string("name: 'reduce' type: 'Reduction' reduction_param { ") + param +
              " } bottom: 'x' top: 'y'";
    c.bottom_shapes = {{11, 7, 3, 13}};
    c.tolerance = GpuSumTolerance<TypeParam>();
    ExpectGpuMatchesCpu(c);
  }
}

// ---- Filter ----

TYPED_TEST(GpuLossAndShapeLayersTest, FilterTwoBottomsBySelector) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'filter' type: 'Filter' bottom: 'a' bottom: 'b' bottom: 'select' "
            "top: 'fa' top: 'fb'";
  c.bottom_shapes = {{9, 3, 5, 13}, {9, 4}, {9, 1}};
  c.fill = [](const Blobs<TypeParam>& bottom) {
    FillGaussian(bottom[0], 21);
    FillGaussian(bottom[1], 22);
    FillZeroOne(bottom[2]);
  };
  c.propagate_down = {true, true, false};
  ExpectGpuMatchesCpu(c);
}

// ---- MVN ----

TYPED_TEST(GpuLossAndShapeLayersTest, MVNEachMode) {
  const char* cases[] = {
      "",
      "across_channels: true",
      "normalize_variance: false",
      "across_channels: true normalize_variance: false",
      "eps: 0.001",
  };
  for (const char* param : cases) {
    SCOPED_TRACE(param);
    GpuLayerCase<TypeParam> c;
    c.layer = std::string("name: 'mvn' type: 'MVN' mvn_param { ") + param +
              " } bottom: 'x' top: 'y'";
    c.bottom_shapes = {{3, 5, 9, 7}};
    ExpectGpuMatchesCpu(c);
  }
}

TYPED_TEST(GpuLossAndShapeLayersTest, MVNRowsLongerThanABlock) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'mvn' type: 'MVN' bottom: 'x' top: 'y'";
  c.bottom_shapes = {{2, 3, 40, 37}};  // rows of 1480 values
  c.tolerance = GpuSumTolerance<TypeParam>();
  ExpectGpuMatchesCpu(c);
}

// ---- BatchNorm ----

TYPED_TEST(GpuLossAndShapeLayersTest, BatchNormTrainUpdatesRunningStatistics) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'bn' type: 'BatchNorm' phase: TRAIN "
            "batch_norm_param { moving_average_fraction: 0.9 eps: 0.0001 } " +
            BatchNormBlobs(7, 2.5) + " bottom: 'x' top: 'y'";
  c.bottom_shapes = {{5, 7, 9, 11}};
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(GpuLossAndShapeLayersTest, BatchNormTrainFromZeroStatisticsOnMatrix) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'bn' type: 'BatchNorm' bottom: 'x' top: 'y'";
  c.bottom_shapes = {{64, 13}};
  ExpectGpuMatchesCpu(c);
}

// Channels of 4440 values (two slices each for ChannelSumsKernel) far from zero: channel c holds
// offset * (c + 1) plus and minus 1, 2 and 3 in equal numbers, exactly representable, so that both
// paths get mean offset * (c + 1) and variance 14 / 3. In double the offset is 1e8, where a
// one-pass E[x^2] - E[x]^2 (1e16 + 4.7 is not a double) would lose the variance altogether.
TYPED_TEST(GpuLossAndShapeLayersTest, BatchNormChannelsFarFromZero) {
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

TYPED_TEST(GpuLossAndShapeLayersTest, BatchNormUseGlobalStats) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'bn' type: 'BatchNorm' batch_norm_param { use_global_stats: true } " +
            BatchNormBlobs(7, 2.5) + " bottom: 'x' top: 'y'";
  c.bottom_shapes = {{5, 7, 9, 11}};
  ExpectGpuMatchesCpu(c);
}

TYPED_TEST(GpuLossAndShapeLayersTest, BatchNormTestPhaseWithZeroNormaliser) {
  // use_global_stats follows the phase; a zero normaliser makes the stored statistics 0.
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'bn' type: 'BatchNorm' phase: TEST " + BatchNormBlobs(3, 0) +
            " bottom: 'x' top: 'y'";
  c.bottom_shapes = {{4, 3, 17}};
  ExpectGpuMatchesCpu(c);
}

// ---- LSTMUnit ----

TYPED_TEST(GpuLossAndShapeLayersTest, LSTMUnitWithSequenceStarts) {
  GpuLayerCase<TypeParam> c;
  c.layer = "name: 'lstm' type: 'LSTMUnit' bottom: 'c_prev' bottom: 'gates' bottom: 'cont' "
            "top: 'c' top: 'h'";
  c.bottom_shapes = {{1, 13, 37}, {1, 13, 148}, {1, 13}};
  c.fill = [](const Blobs<TypeParam>& bottom) {
    FillGaussian(bottom[0], 23);
    FillGaussian(bottom[1], 24, TypeParam(2));
    FillZeroOne(bottom[2]);
  };
  c.propagate_down = {true, true, false};
  ExpectGpuMatchesCpu(c);
}

// ---- Silence (no top, so not through ExpectGpuMatchesCpu) ----

TYPED_TEST(GpuLossAndShapeLayersTest, SilenceZeroesOnlyTheAskedForDiffs) {
  Caffe::set_mode(Caffe::GPU);
  auto layer = LayerRegistry<TypeParam>::CreateLayer(
      ParseLayerParam("name: 'silence' type: 'Silence' bottom: 'a' bottom: 'b'"));
  Blob<TypeParam> a(vector<int>{3, 5, 71}), b(vector<int>{1100});
  FillGaussian(&a, 25);
  FillGaussian(&b, 26);
  caffe_copy(a.count(), a.cpu_data(), a.mutable_cpu_diff());
  caffe_copy(b.count(), b.cpu_data(), b.mutable_cpu_diff());
  const Blobs<TypeParam> bottom{&a, &b};
  const Blobs<TypeParam> top;
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  layer->Backward(top, {true, false}, bottom);
  Caffe::set_mode(Caffe::CPU);
  for (int i = 0; i < a.count(); ++i) ASSERT_EQ(a.cpu_diff()[i], TypeParam(0)) << i;
  for (int i = 0; i < b.count(); ++i) ASSERT_EQ(b.cpu_diff()[i], b.cpu_data()[i]) << i;
}

}  // namespace caffe
