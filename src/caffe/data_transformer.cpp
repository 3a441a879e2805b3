#include "caffe/data_transformer.hpp"

#include <cstdint>

#include "caffe/io/image_io.hpp"
#include "caffe/io/io.hpp"
#include "caffe/kernels/math_functions.hpp"

namespace caffe {

namespace {

string ShapeText(int channels, int height, int width) {
  return std::to_string(channels) + "x" + std::to_string(height) + "x" + std::to_string(width);
}

/// One output row: (in[w] - mean) * scale, where mean is mean_row[w] (a mean file's row) or
/// channel_mean, written in reverse order when mirrored. The branches are taken once per row, so
/// the loops vectorize.
template <typename In, typename Dtype>
void TransformRow(const In* in, const Dtype* mean_row, Dtype channel_mean, Dtype scale, bool mirror,
                  int width, Dtype* out) {
  if (mean_row) {
    if (mirror) {
      for (int w = 0; w < width; ++w) {
        out[width - 1 - w] = (static_cast<Dtype>(in[w]) - mean_row[w]) * scale;
      }
    } else {
      for (int w = 0; w < width; ++w) out[w] = (static_cast<Dtype>(in[w]) - mean_row[w]) * scale;
    }
  } else {
    if (mirror) {
      for (int w = 0; w < width; ++w) {
        out[width - 1 - w] = (static_cast<Dtype>(in[w]) - channel_mean) * scale;
      }
    } else {
      for (int w = 0; w < width; ++w) out[w] = (static_cast<Dtype>(in[w]) - channel_mean) * scale;
    }
  }
}

}  // namespace

template <typename Dtype>
DataTransformer<Dtype>::DataTransformer(const TransformationParameter& param, Phase phase)
    : param_(param), phase_(phase) {
  CAFFE_CHECK(!(param_.force_color() && param_.force_gray()))
      << "transform_param sets both force_color and force_gray; give at most one of them";
  CAFFE_CHECK(!(param_.has_mean_file() && param_.mean_value_size() > 0))
      << "transform_param sets both mean_file ('" << param_.mean_file()
      << "') and mean_value; give only one of them";
  if (param_.has_mean_file()) {
    BlobProto blob_proto;
    ReadProtoFromBinaryFile(param_.mean_file(), &blob_proto);
    try {
      data_mean_.FromProto(blob_proto);
    } catch (const Error& error) {  // the blob's own message does not know the file
      CAFFE_THROW() << "mean file '" << param_.mean_file() << "': " << error.what();
    }
    CAFFE_CHECK(data_mean_.count() > 0)
        << "mean file '" << param_.mean_file() << "' holds no values";
  }
  for (int c = 0; c < param_.mean_value_size(); ++c) mean_values_.push_back(param_.mean_value(c));
}

template <typename Dtype>
bool DataTransformer<Dtype>::needs_rand() const {
  return phase_ == TRAIN && (param_.mirror() || param_.crop_size() > 0);
}

template <typename Dtype>
void DataTransformer<Dtype>::InitRand() {
  if (needs_rand()) {
    rng_ = std::make_unique<Caffe::RNG>(caffe_rng_rand());
  } else {
    rng_.reset();
  }
}

template <typename Dtype>
string DataTransformer<Dtype>::RandState() const {
  return rng_ ? rng_->SaveState() : string();
}

template <typename Dtype>
void DataTransformer<Dtype>::SetRandState(const string& state) {
  if (!rng_) {
    // Nothing random to restore (e.g. the snapshot came from a TEST net or a net without
    // mirror/crop); a non-empty state means the parameters changed since the snapshot.
    LOG_IF(WARNING, !state.empty())
        << "ignoring a saved transformer random state: these transform_param draw no random "
           "numbers";
    return;
  }
  CAFFE_CHECK(rng_->LoadState(state))
      << "the saved transformer random state is not a valid generator state";
}

template <typename Dtype>
int DataTransformer<Dtype>::Rand(int n) {
  CHECK(rng_) << "DataTransformer::InitRand() must be called before random transforms";
  CHECK_GT(n, 0);
  return static_cast<int>(rng_->generator()() % static_cast<unsigned int>(n));
}

template <typename Dtype>
void DataTransformer<Dtype>::CheckMeanValues(int channels) const {
  CAFFE_CHECK(mean_values_.size() == 1 || static_cast<int>(mean_values_.size()) == channels)
      << "transform_param gives " << mean_values_.size()
      << " mean_value entries; give 1 or one per channel (" << channels << ")";
}

template <typename Dtype>
const Datum& DataTransformer<Dtype>::Decode(const Datum& datum, Datum* decoded) const {
  if (!datum.encoded()) {
    LOG_IF(WARNING, param_.force_color() || param_.force_gray())
        << "force_color and force_gray apply to encoded records only; this record holds raw "
           "values and keeps its channels";
    return datum;
  }
  const ImageColor color = param_.force_color()  ? ImageColor::kColor
                           : param_.force_gray() ? ImageColor::kGray
                                                 : ImageColor::kNative;
  DecodeDatum(datum, color, decoded);
  return *decoded;
}

template <typename Dtype>
int DataTransformer<Dtype>::CheckDatum(const Datum& datum) const {
  CHECK(!datum.encoded()) << "an encoded record must be decoded before it is checked";
  const int size = CheckRawDatum(datum);
  const int channels = datum.channels();
  const int height = datum.height();
  const int width = datum.width();
  const int crop_size = param_.crop_size();
  CAFFE_CHECK(crop_size <= height && crop_size <= width)
      << "crop_size " << crop_size << " is larger than the record's " << height << "x" << width
      << " image";
  if (param_.has_mean_file()) {
    CAFFE_CHECK(data_mean_.channels() == channels && data_mean_.height() == height &&
                data_mean_.width() == width && data_mean_.count() == size)
        << "mean file '" << param_.mean_file() << "' has shape " << data_mean_.shape_string()
        << " but the records are " << ShapeText(channels, height, width)
        << " (channels x height x width)";
  }
  if (!mean_values_.empty()) CheckMeanValues(channels);
  return size;
}

template <typename Dtype>
vector<int> DataTransformer<Dtype>::RawBlobShape(const Datum& datum) const {
  CheckDatum(datum);
  const int crop_size = param_.crop_size();
  return {1, datum.channels(), crop_size ? crop_size : datum.height(),
          crop_size ? crop_size : datum.width()};
}

template <typename Dtype>
vector<int> DataTransformer<Dtype>::InferBlobShape(const Datum& datum) const {
  Datum decoded;
  return RawBlobShape(Decode(datum, &decoded));
}

template <typename Dtype>
vector<int> DataTransformer<Dtype>::InferBlobShape(const vector<Datum>& datum_vector) const {
  CAFFE_CHECK(!datum_vector.empty()) << "cannot infer a blob shape from no records";
  vector<int> shape = InferBlobShape(datum_vector[0]);
  shape[0] = static_cast<int>(datum_vector.size());
  return shape;
}

template <typename Dtype>
typename DataTransformer<Dtype>::Choice DataTransformer<Dtype>::DrawChoice(int height, int width) {
  const int crop_size = param_.crop_size();
  Choice choice;
  // Draw order as in BVLC: the flip, then the row offset, then the column offset.
  choice.mirror = param_.mirror() && phase_ == TRAIN && Rand(2);
  if (crop_size && crop_size <= height && crop_size <= width) {
    if (phase_ == TRAIN) {
      choice.h_off = Rand(height - crop_size + 1);
      choice.w_off = Rand(width - crop_size + 1);
    } else {
      choice.h_off = (height - crop_size) / 2;
      choice.w_off = (width - crop_size) / 2;
    }
  }
  return choice;
}

template <typename Dtype>
void DataTransformer<Dtype>::Transform(const Datum& datum, Dtype* transformed_data) {
  Datum decoded;
  const Datum& raw = Decode(datum, &decoded);
  CheckDatum(raw);
  Transform(raw, DrawChoice(raw.height(), raw.width()), transformed_data);
}

template <typename Dtype>
void DataTransformer<Dtype>::Transform(const Datum& datum, const Choice& choice,
                                       Dtype* transformed_data) const {
  CheckDatum(datum);
  const int datum_channels = datum.channels();
  const int datum_height = datum.height();
  const int datum_width = datum.width();
  const int crop_size = param_.crop_size();
  const Dtype scale = param_.scale();
  const bool do_mirror = choice.mirror;
  const bool has_mean_file = param_.has_mean_file();
  const bool has_uint8 = !datum.data().empty();

  const int height = crop_size ? crop_size : datum_height;
  const int width = crop_size ? crop_size : datum_width;
  const int h_off = choice.h_off;
  const int w_off = choice.w_off;
  CHECK(h_off >= 0 && w_off >= 0 && h_off + height <= datum_height && w_off + width <= datum_width)
      << "a crop choice outside the image";

  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(datum.data().data());
  const float* floats = datum.float_data().data();
  const Dtype* mean = has_mean_file ? data_mean_.cpu_data() : nullptr;
  for (int c = 0; c < datum_channels; ++c) {
    // Subtracting 0 leaves every value exactly as BVLC's "value * scale" branch computes it.
    const Dtype channel_mean = mean_values_.empty() ? Dtype(0) : mean_value(c);
    for (int h = 0; h < height; ++h) {
      const int source_row = (c * datum_height + h_off + h) * datum_width + w_off;
      Dtype* top_row = transformed_data + (c * height + h) * width;
      const Dtype* mean_row = has_mean_file ? mean + source_row : nullptr;
      if (has_uint8) {
        TransformRow(bytes + source_row, mean_row, channel_mean, scale, do_mirror, width, top_row);
      } else {
        TransformRow(floats + source_row, mean_row, channel_mean, scale, do_mirror, width, top_row);
      }
    }
  }
}

template <typename Dtype>
void DataTransformer<Dtype>::Transform(const Datum& datum, Blob<Dtype>* transformed_blob) {
  Datum decoded;
  const Datum& raw = Decode(datum, &decoded);
  const vector<int> shape = RawBlobShape(raw);
  if (transformed_blob->count() == 0) transformed_blob->Reshape(shape);
  CAFFE_CHECK(transformed_blob->num_axes() == 4 && transformed_blob->num() >= 1 &&
              transformed_blob->channels() == shape[1] && transformed_blob->height() == shape[2] &&
              transformed_blob->width() == shape[3])
      << "the transformed blob has shape " << transformed_blob->shape_string()
      << " but a transformed record is " << ShapeString(shape);
  Transform(raw, DrawChoice(raw.height(), raw.width()), transformed_blob->mutable_cpu_data());
}

template <typename Dtype>
void DataTransformer<Dtype>::Transform(const vector<Datum>& datum_vector,
                                       Blob<Dtype>* transformed_blob) {
  const vector<int> shape = InferBlobShape(datum_vector);
  if (transformed_blob->count() == 0) transformed_blob->Reshape(shape);
  CAFFE_CHECK(transformed_blob->num_axes() == 4 && transformed_blob->num() >= shape[0] &&
              transformed_blob->channels() == shape[1] && transformed_blob->height() == shape[2] &&
              transformed_blob->width() == shape[3])
      << "the transformed blob has shape " << transformed_blob->shape_string() << " but "
      << datum_vector.size() << " transformed records are " << ShapeString(shape);
  Dtype* data = transformed_blob->mutable_cpu_data();
  const int image_size = shape[1] * shape[2] * shape[3];
  for (size_t item = 0; item < datum_vector.size(); ++item) {
    Datum decoded;
    const Datum& raw = Decode(datum_vector[item], &decoded);
    const vector<int> item_shape = RawBlobShape(raw);
    CAFFE_CHECK(item_shape[1] == shape[1] && item_shape[2] == shape[2] && item_shape[3] == shape[3])
        << "record " << item << " transforms to " << ShapeString(item_shape)
        << " but the first record to " << ShapeString(shape);
    Transform(raw, DrawChoice(raw.height(), raw.width()), data + item * image_size);
  }
}

template <typename Dtype>
void DataTransformer<Dtype>::Transform(Blob<Dtype>* input_blob, Blob<Dtype>* transformed_blob) {
  CAFFE_CHECK(input_blob->num_axes() == 4)
      << "the input blob must be (N, C, H, W); it is " << input_blob->shape_string();
  const int input_num = input_blob->num();
  const int input_channels = input_blob->channels();
  const int input_height = input_blob->height();
  const int input_width = input_blob->width();
  const int crop_size = param_.crop_size();
  CAFFE_CHECK(crop_size <= input_height && crop_size <= input_width)
      << "crop_size " << crop_size << " is larger than the input's " << input_height << "x"
      << input_width << " images";
  if (transformed_blob->count() == 0) {
    transformed_blob->Reshape(input_num, input_channels, crop_size ? crop_size : input_height,
                              crop_size ? crop_size : input_width);
  }
  const int num = transformed_blob->num();
  const int channels = transformed_blob->channels();
  const int height = transformed_blob->height();
  const int width = transformed_blob->width();
  CAFFE_CHECK(transformed_blob->num_axes() == 4 && num >= input_num && channels == input_channels &&
              height == (crop_size ? crop_size : input_height) &&
              width == (crop_size ? crop_size : input_width))
      << "the transformed blob has shape " << transformed_blob->shape_string() << " but the input "
      << input_blob->shape_string() << " transforms to "
      << ShapeText(input_channels, crop_size ? crop_size : input_height,
                   crop_size ? crop_size : input_width)
      << " per image";

  const Dtype scale = param_.scale();
  const bool do_mirror = param_.mirror() && phase_ == TRAIN && Rand(2);
  int h_off = 0;
  int w_off = 0;
  if (crop_size) {
    if (phase_ == TRAIN) {
      h_off = Rand(input_height - crop_size + 1);
      w_off = Rand(input_width - crop_size + 1);
    } else {
      h_off = (input_height - crop_size) / 2;
      w_off = (input_width - crop_size) / 2;
    }
  }

  Dtype* input_data = input_blob->mutable_cpu_data();
  const int image_size = input_channels * input_height * input_width;
  const int plane = input_height * input_width;
  if (param_.has_mean_file()) {
    CAFFE_CHECK(data_mean_.channels() == input_channels && data_mean_.height() == input_height &&
                data_mean_.width() == input_width && data_mean_.count() == image_size)
        << "mean file '" << param_.mean_file() << "' has shape " << data_mean_.shape_string()
        << " but the input images are " << ShapeText(input_channels, input_height, input_width);
    for (int n = 0; n < input_num; ++n) {
      Dtype* image = input_data + n * image_size;
      caffe_sub(image_size, image, data_mean_.cpu_data(), image);
    }
  }
  if (!mean_values_.empty()) {
    CheckMeanValues(input_channels);
    for (int n = 0; n < input_num; ++n) {
      for (int c = 0; c < input_channels; ++c) {
        caffe_add_scalar(plane, -mean_value(c), input_data + n * image_size + c * plane);
      }
    }
  }

  Dtype* transformed_data = transformed_blob->mutable_cpu_data();
  for (int n = 0; n < input_num; ++n) {
    for (int c = 0; c < channels; ++c) {
      for (int h = 0; h < height; ++h) {
        const Dtype* source = input_data +
                              ((n * input_channels + c) * input_height + h + h_off) * input_width +
                              w_off;
        Dtype* top_row = transformed_data + ((n * channels + c) * height + h) * width;
        if (do_mirror) {
          for (int w = 0; w < width; ++w) top_row[width - 1 - w] = source[w];
        } else {
          for (int w = 0; w < width; ++w) top_row[w] = source[w];
        }
      }
    }
  }
  if (scale != Dtype(1)) caffe_scal(num * channels * height * width, scale, transformed_data);
}

INSTANTIATE_CLASS(DataTransformer);

}  // namespace caffe
