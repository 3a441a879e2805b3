// DataTransformer: the pre-processing the data layers apply to each image
// (TransformationParameter): crop, mirror, mean subtraction, scaling. Per value, in BVLC's order:
//   top[c][h][w'] = (x[c][h + h_off][w + w_off] - mean) * scale,   w' = mirror ? W' - 1 - w : w
// where mean is the mean file's value at the same *uncropped* position (c, h + h_off, w + w_off),
// or mean_value[c] (one value serves every channel), or 0. Crop offsets are random in TRAIN and
// centred in TEST; the mirror is a coin flip in TRAIN only. Random choices come from the
// transformer's own generator, seeded from the thread's Caffe RNG by InitRand, whose state can be
// saved and restored so a resumed run draws the same crops and flips. Encoded records (JPEG/PNG)
// are decoded first (io/image_io.hpp; needs OpenCV): as stored, or to 3 channels with
// force_color, 1 with force_gray.
// The data layers split the work for parallel workers: Decode and the Transform that takes a
// Choice only read the transformer, so several threads may run them at once, while DrawChoice
// draws every record's crop and flip in record order on one thread, so the output never depends
// on the number of workers.
// Legend: C channels, H/W image height/width, H'/W' output height/width (crop_size if set).
#ifndef CAFFE_DATA_TRANSFORMER_HPP_
#define CAFFE_DATA_TRANSFORMER_HPP_

#include <memory>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/common.hpp"
#include "caffe/proto/caffe.pb.h"

namespace caffe {

/// Applies a TransformationParameter to Datum records or blobs. The methods that draw random
/// numbers (DrawChoice and the Transform overloads without a Choice) are for one thread at a time
/// (a data layer's prefetch thread); the const methods may run on several threads at once.
template <typename Dtype>
class DataTransformer {
 public:
  /// Where one record is cropped and whether it is flipped.
  struct Choice {
    bool mirror = false;
    int h_off = 0;  // first row of the crop
    int w_off = 0;  // first column of the crop
  };

  /// Reads the mean file if one is given; throws caffe::Error when it cannot be read or when
  /// both mean_file and mean_value are set.
  DataTransformer(const TransformationParameter& param, Phase phase);

  /// Seeds the generator with one draw from this thread's Caffe RNG, when the parameters need
  /// randomness (mirror or crop_size in TRAIN); otherwise there is no generator and no draw.
  void InitRand();
  /// Whether crops and flips are random (InitRand creates a generator).
  bool needs_rand() const;

  /// The generator's state ("" without a generator); SetRandState restores it, and throws
  /// caffe::Error for a string that is not a generator state.
  string RandState() const;
  void SetRandState(const string& state);

  /// `datum` itself when it holds raw values; an encoded record decoded into `*decoded` (which is
  /// returned). Throws caffe::Error when it cannot be decoded, or in a build without OpenCV.
  const Datum& Decode(const Datum& datum, Datum* decoded) const;
  /// Draws the choices for one image of height x width: in TRAIN the flip and then the crop's row
  /// and column offsets (BVLC's order); in TEST no flip and the centred crop.
  Choice DrawChoice(int height, int width);
  /// Transforms a raw record with the given choices into C x H' x W' values at
  /// `transformed_data`; checks the record like InferBlobShape.
  void Transform(const Datum& datum, const Choice& choice, Dtype* transformed_data) const;

  /// The shape of one transformed record: (1, C, H', W'). Checks the record's sizes; an encoded
  /// record is decoded to find them.
  vector<int> InferBlobShape(const Datum& datum) const;
  /// (N, C, H', W') for N records, shaped after the first.
  vector<int> InferBlobShape(const vector<Datum>& datum_vector) const;

  /// Transforms one record into the first image of `transformed_blob`, which is reshaped to
  /// InferBlobShape if empty and must otherwise be (N >= 1, C, H', W').
  void Transform(const Datum& datum, Blob<Dtype>* transformed_blob);
  /// Transforms one record (decoded first if encoded) into C x H' x W' values at
  /// `transformed_data`, drawing its choices.
  void Transform(const Datum& datum, Dtype* transformed_data);
  /// Transforms records into the first N images of `transformed_blob`.
  void Transform(const vector<Datum>& datum_vector, Blob<Dtype>* transformed_blob);
  /// Transforms a whole (N, C, H, W) blob with one crop and one flip for all N images, as BVLC
  /// does. The mean is subtracted from `input_blob` in place (it is modified).
  void Transform(Blob<Dtype>* input_blob, Blob<Dtype>* transformed_blob);

 protected:
  /// A random integer in [0, n).
  int Rand(int n);

  TransformationParameter param_;
  Phase phase_;
  Blob<Dtype> data_mean_;
  vector<Dtype> mean_values_;
  std::unique_ptr<Caffe::RNG> rng_;

 private:
  /// Checks a raw record's sizes and the mean against it; returns C x H x W.
  int CheckDatum(const Datum& datum) const;
  /// The shape of one transformed raw record.
  vector<int> RawBlobShape(const Datum& datum) const;
  /// Checks that mean_value gives one value or one per channel.
  void CheckMeanValues(int channels) const;
  /// The mean_value of channel c (a single mean_value serves every channel).
  Dtype mean_value(int c) const {
    return mean_values_.size() == 1 ? mean_values_[0] : mean_values_[c];
  }

  DISABLE_COPY_AND_ASSIGN(DataTransformer);
};

}  // namespace caffe

#endif  // CAFFE_DATA_TRANSFORMER_HPP_
