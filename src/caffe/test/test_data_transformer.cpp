// DataTransformer: scale, mean_value, mean_file, centre crop in TEST, random crop and mirror in
// TRAIN (BVLC's draw order, reproducible from a seed), saving and restoring the random state,
// float records, encoded (PNG) records decoded as stored or as forced, drawing the choices apart
// from transforming (as the data layers' workers do), and the errors for inconsistent records and
// parameters.
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/data_transformer.hpp"
#include "caffe/io/io.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/test/file_test_util.hpp"
#include "caffe/test/image_test_util.hpp"
#include "caffe/test/test_caffe_main.hpp"

namespace caffe {
namespace {

/// A C x H x W uint8 record whose value at index i is (first + i) % 256.
Datum MakeDatum(int channels, int height, int width, int first = 0, int label = 0) {
  Datum datum;
  datum.set_channels(channels);
  datum.set_height(height);
  datum.set_width(width);
  datum.set_label(label);
  string data(channels * height * width, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((first + i) % 256);
  datum.set_data(data);
  return datum;
}

TransformationParameter MakeParam(const string& text) {
  TransformationParameter param;
  ParseProtoFromText(text, "test transform_param", &param);
  return param;
}

/// The value of `datum` at (c, h, w).
double At(const Datum& datum, int c, int h, int w) {
  const int index = (c * datum.height() + h) * datum.width() + w;
  return datum.data().empty() ? datum.float_data(index) : static_cast<uint8_t>(datum.data()[index]);
}

template <typename Dtype>
class DataTransformerTest : public ::testing::Test {
 protected:
  DataTransformerTest() : dir_(MakeTempDir("caffe_test_transformer")) {
    Caffe::set_random_seed(1701);
  }

  /// Transforms `datum` once with a fresh transformer and returns the values.
  vector<Dtype> TransformOnce(const string& param_text, Phase phase, const Datum& datum) {
    DataTransformer<Dtype> transformer(MakeParam(param_text), phase);
    transformer.InitRand();
    Blob<Dtype> blob;
    transformer.Transform(datum, &blob);
    return vector<Dtype>(blob.cpu_data(), blob.cpu_data() + blob.count());
  }

  /// Writes a 1 x C x H x W mean file whose value at index i is `first` + i / 4.
  string WriteMeanFile(int channels, int height, int width, double first) {
    Blob<float> mean(1, channels, height, width);
    for (int i = 0; i < mean.count(); ++i) mean.mutable_cpu_data()[i] = first + i / 4.0;
    BlobProto proto;
    mean.ToProto(&proto);
    const string path = dir_.path() + "/mean.binaryproto";
    WriteProtoToBinaryFile(proto, path);
    return path;
  }

  ScopedTempDir dir_;
};

TYPED_TEST_SUITE(DataTransformerTest, TestDtypes);

TYPED_TEST(DataTransformerTest, WithoutParametersCopiesTheValues) {
  const Datum datum = MakeDatum(2, 3, 4, 250);  // values wrap past 255 to 0
  for (Phase phase : {TRAIN, TEST}) {
    const vector<TypeParam> out = this->TransformOnce("", phase, datum);
    ASSERT_EQ(out.size(), 24u);
    for (int i = 0; i < 24; ++i) EXPECT_EQ(out[i], (250 + i) % 256) << i;
  }
}

TYPED_TEST(DataTransformerTest, ScaleMultipliesEveryValue) {
  const Datum datum = MakeDatum(1, 2, 3, 10);
  const vector<TypeParam> out = this->TransformOnce("scale: 0.00390625", TEST, datum);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], TypeParam(10 + i) * TypeParam(0.00390625));
}

TYPED_TEST(DataTransformerTest, SingleMeanValueServesEveryChannelBeforeScaling) {
  const Datum datum = MakeDatum(3, 2, 2, 100);
  const vector<TypeParam> out = this->TransformOnce("mean_value: 104 scale: 2", TEST, datum);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(out[i], (TypeParam(100 + i) - 104) * 2) << i;
}

TYPED_TEST(DataTransformerTest, MeanValuePerChannel) {
  const Datum datum = MakeDatum(3, 2, 2, 100);
  const vector<TypeParam> out =
      this->TransformOnce("mean_value: 1 mean_value: 2.5 mean_value: 3", TEST, datum);
  const TypeParam means[3] = {1, 2.5, 3};
  for (int i = 0; i < 12; ++i) EXPECT_EQ(out[i], TypeParam(100 + i) - means[i / 4]) << i;
}

TYPED_TEST(DataTransformerTest, MeanValueCountMustMatchChannels) {
  DataTransformer<TypeParam> transformer(MakeParam("mean_value: 1 mean_value: 2"), TEST);
  Blob<TypeParam> blob;
  try {
    transformer.Transform(MakeDatum(3, 2, 2), &blob);
    FAIL() << "2 mean values for 3 channels were accepted";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("one per channel (3)"), string::npos) << error.what();
  }
}

TYPED_TEST(DataTransformerTest, MeanFileIsSubtractedPerPixelBeforeScaling) {
  const string mean_file = this->WriteMeanFile(2, 2, 3, 5.0);
  const Datum datum = MakeDatum(2, 2, 3, 40);
  const vector<TypeParam> out =
      this->TransformOnce("mean_file: '" + mean_file + "' scale: 0.5", TEST, datum);
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(out[i], (TypeParam(40 + i) - TypeParam(float(5.0 + i / 4.0))) * TypeParam(0.5)) << i;
  }
}

TYPED_TEST(DataTransformerTest, MeanFileAndMeanValueTogetherAreRefused) {
  const string mean_file = this->WriteMeanFile(1, 2, 2, 0);
  try {
    DataTransformer<TypeParam> transformer(
        MakeParam("mean_file: '" + mean_file + "' mean_value: 3"), TRAIN);
    FAIL() << "mean_file and mean_value together were accepted";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("both mean_file"), string::npos) << error.what();
  }
}

TYPED_TEST(DataTransformerTest, MissingMeanFileIsAnErrorNamingIt) {
  const string missing = this->dir_.path() + "/missing.binaryproto";
  try {
    DataTransformer<TypeParam> transformer(MakeParam("mean_file: '" + missing + "'"), TEST);
    FAIL() << "a missing mean file was accepted";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find(missing), string::npos) << error.what();
  }
}

// A mean file whose blob holds fewer values than its shape says (truncated, or another kind of
// file that parses as a BlobProto): the error names the file and both counts.
TYPED_TEST(DataTransformerTest, MeanFileWithTooFewValuesIsAnErrorNamingIt) {
  BlobProto proto;
  proto.mutable_shape()->add_dim(2);
  proto.mutable_shape()->add_dim(3);
  proto.add_data(1);
  const string mean_file = this->dir_.path() + "/short.binaryproto";
  WriteProtoToBinaryFile(proto, mean_file);
  const string error = ErrorOf(
      [&] { DataTransformer<TypeParam>(MakeParam("mean_file: '" + mean_file + "'"), TEST); });
  EXPECT_NE(error.find("mean file '" + mean_file +
                       "': the file's blob of shape 2 3 (6) holds 1 "
                       "values, not the 6 its shape has"),
            string::npos)
      << error;
}

TYPED_TEST(DataTransformerTest, MeanFileOfAnotherShapeIsRefused) {
  const string mean_file = this->WriteMeanFile(1, 3, 3, 0);
  DataTransformer<TypeParam> transformer(MakeParam("mean_file: '" + mean_file + "'"), TEST);
  Blob<TypeParam> blob;
  try {
    transformer.Transform(MakeDatum(1, 4, 4), &blob);
    FAIL() << "a 3x3 mean for 4x4 records was accepted";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find(mean_file), string::npos) << error.what();
    EXPECT_NE(string(error.what()).find("1x4x4"), string::npos) << error.what();
  }
}

TYPED_TEST(DataTransformerTest, TestPhaseCropsTheCentre) {
  // 5x6 image, crop 3: rows (5-3)/2 = 1.., columns (6-3)/2 = 1.. (rounding down).
  const Datum datum = MakeDatum(2, 5, 6);
  DataTransformer<TypeParam> transformer(MakeParam("crop_size: 3"), TEST);
  transformer.InitRand();
  EXPECT_FALSE(transformer.needs_rand());
  EXPECT_EQ(transformer.InferBlobShape(datum), (vector<int>{1, 2, 3, 3}));
  Blob<TypeParam> blob;
  transformer.Transform(datum, &blob);
  for (int c = 0; c < 2; ++c) {
    for (int h = 0; h < 3; ++h) {
      for (int w = 0; w < 3; ++w) EXPECT_EQ(blob.data_at(0, c, h, w), At(datum, c, h + 1, w + 1));
    }
  }
}

TYPED_TEST(DataTransformerTest, CropSubtractsTheMeanOfTheUncroppedPosition) {
  const string mean_file = this->WriteMeanFile(1, 4, 4, 0.5);
  const Datum datum = MakeDatum(1, 4, 4, 30);
  DataTransformer<TypeParam> transformer(MakeParam("crop_size: 2 mean_file: '" + mean_file + "'"),
                                         TEST);
  Blob<TypeParam> blob;
  transformer.Transform(datum, &blob);
  for (int h = 0; h < 2; ++h) {
    for (int w = 0; w < 2; ++w) {
      const int source = (h + 1) * 4 + (w + 1);
      EXPECT_EQ(blob.data_at(0, 0, h, w),
                TypeParam(30 + source) - TypeParam(float(0.5 + source / 4.0)));
    }
  }
}

TYPED_TEST(DataTransformerTest, MirrorIsOffInTestPhase) {
  const Datum datum = MakeDatum(1, 2, 5);
  for (int trial = 0; trial < 20; ++trial) {
    const vector<TypeParam> out = this->TransformOnce("mirror: true", TEST, datum);
    for (int i = 0; i < 10; ++i) ASSERT_EQ(out[i], i);
  }
}

TYPED_TEST(DataTransformerTest, TrainPhaseFollowsBVLCDrawOrderFromTheSeed) {
  // The transformer's seed is one draw from the thread's generator; then per record: the flip
  // (draw % 2), the row offset (draw % (H - crop + 1)), the column offset (draw % (W - crop + 1)).
  const int height = 6, width = 7, crop = 3;
  const Datum datum = MakeDatum(2, height, width);
  Caffe::set_random_seed(4242);
  DataTransformer<TypeParam> transformer(MakeParam("crop_size: 3 mirror: true"), TRAIN);
  transformer.InitRand();
  std::mt19937 thread_generator(4242);
  std::mt19937 expected(thread_generator());
  std::set<int> flips, rows, cols;
  Blob<TypeParam> blob;
  for (int trial = 0; trial < 200; ++trial) {
    transformer.Transform(datum, &blob);
    const bool mirror = expected() % 2;
    const int h_off = expected() % (height - crop + 1);
    const int w_off = expected() % (width - crop + 1);
    flips.insert(mirror);
    rows.insert(h_off);
    cols.insert(w_off);
    for (int c = 0; c < 2; ++c) {
      for (int h = 0; h < crop; ++h) {
        for (int w = 0; w < crop; ++w) {
          const int top_w = mirror ? crop - 1 - w : w;
          ASSERT_EQ(blob.data_at(0, c, h, top_w), At(datum, c, h + h_off, w + w_off))
              << "trial " << trial << " at " << c << "," << h << "," << w;
        }
      }
    }
  }
  // Every flip and offset occurs, so the check above saw them all.
  EXPECT_EQ(flips.size(), 2u);
  EXPECT_EQ(rows.size(), static_cast<size_t>(height - crop + 1));
  EXPECT_EQ(cols.size(), static_cast<size_t>(width - crop + 1));
}

TYPED_TEST(DataTransformerTest, SameSeedGivesSameCropsAndFlips) {
  const Datum datum = MakeDatum(1, 8, 8);
  vector<vector<TypeParam>> runs[2];
  for (auto& run : runs) {
    Caffe::set_random_seed(77);
    DataTransformer<TypeParam> transformer(MakeParam("crop_size: 4 mirror: true"), TRAIN);
    transformer.InitRand();
    Blob<TypeParam> blob;
    for (int trial = 0; trial < 20; ++trial) {
      transformer.Transform(datum, &blob);
      run.emplace_back(blob.cpu_data(), blob.cpu_data() + blob.count());
    }
  }
  EXPECT_EQ(runs[0], runs[1]);
  // ... and not one crop over and over.
  EXPECT_NE(std::set<vector<TypeParam>>(runs[0].begin(), runs[0].end()).size(), 1u);
}

TYPED_TEST(DataTransformerTest, RestoredRandomStateRepeatsTheSequence) {
  const Datum datum = MakeDatum(1, 8, 8);
  DataTransformer<TypeParam> transformer(MakeParam("crop_size: 5 mirror: true"), TRAIN);
  transformer.InitRand();
  Blob<TypeParam> blob;
  for (int trial = 0; trial < 5; ++trial) transformer.Transform(datum, &blob);
  const string state = transformer.RandState();
  ASSERT_FALSE(state.empty());
  auto run = [&](DataTransformer<TypeParam>* t) {
    vector<vector<TypeParam>> outputs;
    for (int trial = 0; trial < 10; ++trial) {
      t->Transform(datum, &blob);
      outputs.emplace_back(blob.cpu_data(), blob.cpu_data() + blob.count());
    }
    return outputs;
  };
  const vector<vector<TypeParam>> first = run(&transformer);
  transformer.SetRandState(state);
  EXPECT_EQ(run(&transformer), first);
  // A transformer seeded differently continues identically once given the state.
  Caffe::set_random_seed(999);
  DataTransformer<TypeParam> other(MakeParam("crop_size: 5 mirror: true"), TRAIN);
  other.InitRand();
  other.SetRandState(state);
  EXPECT_EQ(run(&other), first);
  EXPECT_THROW(other.SetRandState("not a generator state"), Error);
}

TYPED_TEST(DataTransformerTest, FloatRecordsAreTransformedLikeBytes) {
  Datum datum;
  datum.set_channels(1);
  datum.set_height(2);
  datum.set_width(2);
  for (float value : {-1.5f, 0.25f, 300.0f, 7.0f}) datum.add_float_data(value);
  const vector<TypeParam> out = this->TransformOnce("mean_value: 1 scale: 2", TEST, datum);
  EXPECT_EQ(out, (vector<TypeParam>{-5, -1.5, 598, 12}));
}

TYPED_TEST(DataTransformerTest, InconsistentRecordsAreRefused) {
  DataTransformer<TypeParam> transformer(MakeParam("crop_size: 3"), TEST);
  Blob<TypeParam> blob;
  auto expect_error = [&](const Datum& datum, const string& fragment) {
    try {
      transformer.Transform(datum, &blob);
      ADD_FAILURE() << "accepted a record that should give \"" << fragment << "\"";
    } catch (const Error& error) {
      EXPECT_NE(string(error.what()).find(fragment), string::npos) << error.what();
    }
  };
  Datum short_data = MakeDatum(1, 4, 4);
  short_data.set_data("abc");
  expect_error(short_data, "holds 3 bytes");
  expect_error(MakeDatum(1, 2, 4), "crop_size 3 is larger");
  Datum encoded = MakeDatum(1, 4, 4);
  encoded.set_encoded(true);
  expect_error(encoded, "OpenCV");
  Datum no_shape = MakeDatum(1, 4, 4);
  no_shape.set_channels(0);
  expect_error(no_shape, "at least 1");
}

TYPED_TEST(DataTransformerTest, RecordsFillConsecutiveImagesOfABlob) {
  const vector<Datum> datums = {MakeDatum(1, 2, 2, 0), MakeDatum(1, 2, 2, 50)};
  DataTransformer<TypeParam> transformer(MakeParam("scale: 2"), TEST);
  Blob<TypeParam> blob;
  transformer.Transform(datums, &blob);
  EXPECT_EQ(blob.shape(), (vector<int>{2, 1, 2, 2}));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(blob.cpu_data()[i], 2 * i);
    EXPECT_EQ(blob.cpu_data()[4 + i], 2 * (50 + i));
  }
}

TYPED_TEST(DataTransformerTest, BlobInputGetsMeanCropAndScale) {
  // (2, 2, 4, 4) input; TEST: centre crop 2 (offset 1), per-channel mean, then scale.
  Blob<TypeParam> input(2, 2, 4, 4);
  for (int i = 0; i < input.count(); ++i) input.mutable_cpu_data()[i] = i;
  DataTransformer<TypeParam> transformer(
      MakeParam("crop_size: 2 mean_value: 1 mean_value: 2 scale: 0.5"), TEST);
  Blob<TypeParam> output;
  transformer.Transform(&input, &output);
  EXPECT_EQ(output.shape(), (vector<int>{2, 2, 2, 2}));
  for (int n = 0; n < 2; ++n) {
    for (int c = 0; c < 2; ++c) {
      for (int h = 0; h < 2; ++h) {
        for (int w = 0; w < 2; ++w) {
          const TypeParam original = ((n * 2 + c) * 4 + h + 1) * 4 + w + 1;
          EXPECT_EQ(output.data_at(n, c, h, w), (original - (c + 1)) * TypeParam(0.5));
        }
      }
    }
  }
}

TYPED_TEST(DataTransformerTest, BlobInputIsFlippedAsAWholeInTrain) {
  Blob<TypeParam> input(3, 1, 1, 4);
  bool saw[2] = {false, false};
  DataTransformer<TypeParam> transformer(MakeParam("mirror: true"), TRAIN);
  transformer.InitRand();
  for (int trial = 0; trial < 40; ++trial) {
    for (int i = 0; i < input.count(); ++i) input.mutable_cpu_data()[i] = i;
    Blob<TypeParam> output;
    transformer.Transform(&input, &output);
    const bool flipped = output.data_at(0, 0, 0, 0) == 3;
    saw[flipped] = true;
    for (int n = 0; n < 3; ++n) {
      for (int w = 0; w < 4; ++w) {
        ASSERT_EQ(output.data_at(n, 0, 0, w), n * 4 + (flipped ? 3 - w : w));
      }
    }
  }
  EXPECT_TRUE(saw[0] && saw[1]);
}

TYPED_TEST(DataTransformerTest, DrawnChoicesReproduceTheDrawingTransform) {
  // What the data layers' workers do (choices drawn in order, then transformed) gives exactly
  // what Transform gives.
  const Datum datum = MakeDatum(2, 6, 7);
  const string param = "crop_size: 4 mirror: true mean_value: 3 scale: 0.5";
  vector<vector<TypeParam>> drawing, split;
  Caffe::set_random_seed(9);
  {
    DataTransformer<TypeParam> transformer(MakeParam(param), TRAIN);
    transformer.InitRand();
    Blob<TypeParam> blob;
    for (int trial = 0; trial < 10; ++trial) {
      transformer.Transform(datum, &blob);
      drawing.emplace_back(blob.cpu_data(), blob.cpu_data() + blob.count());
    }
  }
  Caffe::set_random_seed(9);
  DataTransformer<TypeParam> transformer(MakeParam(param), TRAIN);
  transformer.InitRand();
  for (int trial = 0; trial < 10; ++trial) {
    const auto choice = transformer.DrawChoice(6, 7);
    EXPECT_GE(choice.h_off, 0);
    EXPECT_LE(choice.h_off, 2);
    EXPECT_LE(choice.w_off, 3);
    vector<TypeParam> values(2 * 4 * 4);
    transformer.Transform(datum, choice, values.data());
    split.push_back(values);
  }
  EXPECT_EQ(split, drawing);
  // TEST: no flip, the centred crop, no draws.
  DataTransformer<TypeParam> test(MakeParam(param), TEST);
  const auto centred = test.DrawChoice(6, 7);
  EXPECT_FALSE(centred.mirror);
  EXPECT_EQ(centred.h_off, 1);
  EXPECT_EQ(centred.w_off, 1);
}

TYPED_TEST(DataTransformerTest, ForceColorAndForceGrayTogetherAreRefused) {
  try {
    DataTransformer<TypeParam> transformer(MakeParam("force_color: true force_gray: true"), TRAIN);
    FAIL() << "both were accepted";
  } catch (const Error& error) {
    EXPECT_NE(string(error.what()).find("both force_color and force_gray"), string::npos)
        << error.what();
  }
}

#ifdef USE_OPENCV
TYPED_TEST(DataTransformerTest, EncodedRecordsAreDecodedAsStoredOrAsForced) {
  const cv::Mat gray = PatternImage(5, 6, 1, 3);
  std::vector<uchar> bytes;
  cv::imencode(".png", gray, bytes);
  Datum encoded;
  encoded.set_encoded(true);
  encoded.set_data(bytes.data(), bytes.size());
  encoded.set_label(4);
  const vector<int> gray_values = ImageValues(gray);

  DataTransformer<TypeParam> native(MakeParam(""), TEST);
  EXPECT_EQ(native.InferBlobShape(encoded), (vector<int>{1, 1, 5, 6}));
  Blob<TypeParam> blob;
  native.Transform(encoded, &blob);
  EXPECT_EQ(vector<int>(blob.cpu_data(), blob.cpu_data() + blob.count()), gray_values);
  Datum decoded;
  const Datum& raw = native.Decode(encoded, &decoded);
  EXPECT_EQ(&raw, &decoded);
  EXPECT_EQ(raw.label(), 4);
  EXPECT_FALSE(raw.encoded());
  EXPECT_EQ(&native.Decode(raw, &decoded), &raw) << "raw records are returned as they are";

  DataTransformer<TypeParam> color(MakeParam("force_color: true"), TEST);
  EXPECT_EQ(color.InferBlobShape(encoded), (vector<int>{1, 3, 5, 6}));
  Blob<TypeParam> color_blob;
  color.Transform(encoded, &color_blob);
  for (int c = 0; c < 3; ++c) {
    for (int i = 0; i < 30; ++i) ASSERT_EQ(color_blob.cpu_data()[c * 30 + i], gray_values[i]);
  }
  DataTransformer<TypeParam> gray_forced(MakeParam("force_gray: true"), TEST);
  EXPECT_EQ(gray_forced.InferBlobShape(encoded), (vector<int>{1, 1, 5, 6}));
}
#endif  // USE_OPENCV

}  // namespace
}  // namespace caffe
