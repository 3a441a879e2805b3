// The OpenCV half of util/image_io: reading, resizing, encoding, decoding and writing images.
// Built as its own module, libcaffe_image_opencv.so, which libcaffe loads on first use (see
// io/image_codec.hpp for why); the functions' contracts are those of io/image_io.hpp.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <sstream>
#include <vector>

#include "caffe/io/image_codec.hpp"

namespace caffe {

namespace {

string ShapeText(int channels, int height, int width) {
  return std::to_string(channels) + "x" + std::to_string(height) + "x" + std::to_string(width);
}

// The data layers decode on their own worker threads; OpenCV's internal thread pool would only
// compete with them (and with Caffe's OpenMP loops) for the same cores.
void UseOneOpenCVThreadPerCaller() {
  static std::once_flag once;
  std::call_once(once, [] { cv::setNumThreads(0); });
}

string Lowercase(string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

/// "jpeg" and "jpg" name the same format.
string CanonicalEncoding(const string& encoding) {
  const string lower = Lowercase(encoding);
  return lower == "jpeg" ? "jpg" : lower;
}

/// The file name's extension, canonical ("" when there is none).
string FileEncoding(const string& filename) {
  const size_t dot = filename.rfind('.');
  const size_t slash = filename.rfind('/');
  if (dot == string::npos || (slash != string::npos && dot < slash)) return "";
  return CanonicalEncoding(filename.substr(dot + 1));
}

string ReadFileBytes(const string& filename) {
  std::ifstream stream(filename, std::ios::binary);
  CAFFE_CHECK(stream.is_open()) << "cannot open image '" << filename
                                << "': " << std::strerror(errno);
  std::ostringstream content;
  content << stream.rdbuf();
  CAFFE_CHECK(!stream.bad()) << "cannot read image '" << filename << "'";
  return content.str();
}

/// Decodes bytes; an empty Mat when they are not a decodable image.
cv::Mat DecodeBytes(const string& bytes, int flags) {
  UseOneOpenCVThreadPerCaller();
  if (bytes.empty()) return cv::Mat();
  // A view of the bytes, not a copy.
  const cv::Mat buffer(1, static_cast<int>(bytes.size()), CV_8UC1, const_cast<char*>(bytes.data()));
  try {
    return cv::imdecode(buffer, flags);
  } catch (const cv::Exception&) {
    return cv::Mat();
  }
}

int DecodeFlags(ImageColor color) {
  switch (color) {
    case ImageColor::kColor:
      return cv::IMREAD_COLOR;
    case ImageColor::kGray:
      return cv::IMREAD_GRAYSCALE;
    case ImageColor::kNative:
      break;
  }
  return cv::IMREAD_ANYCOLOR;
}

/// Stores an 8-bit H x W x C image as C x H x W bytes.
void MatToDatum(const cv::Mat& image, Datum* datum) {
  CHECK_EQ(image.depth(), CV_8U);
  const int channels = image.channels();
  const int height = image.rows;
  const int width = image.cols;
  datum->set_channels(channels);
  datum->set_height(height);
  datum->set_width(width);
  datum->clear_float_data();
  datum->set_encoded(false);
  string* data = datum->mutable_data();
  data->resize(static_cast<size_t>(channels) * height * width);
  uint8_t* out = reinterpret_cast<uint8_t*>(&(*data)[0]);
  const size_t plane = static_cast<size_t>(height) * width;
  for (int h = 0; h < height; ++h) {
    const uint8_t* row = image.ptr<uint8_t>(h);
    uint8_t* out_row = out + static_cast<size_t>(h) * width;
    if (channels == 1) {
      std::copy(row, row + width, out_row);
    } else if (channels == 3) {  // the common case, without the inner channel loop
      uint8_t* blue = out_row;
      uint8_t* green = out_row + plane;
      uint8_t* red = out_row + 2 * plane;
      for (int w = 0; w < width; ++w) {
        blue[w] = row[3 * w];
        green[w] = row[3 * w + 1];
        red[w] = row[3 * w + 2];
      }
    } else {
      for (int w = 0; w < width; ++w) {
        for (int c = 0; c < channels; ++c) out_row[c * plane + w] = row[w * channels + c];
      }
    }
  }
}

void ReadImageToDatumWithOpenCV(const string& filename, int label, int height, int width,
                                bool is_color, const string& encoding, Datum* datum) {
  CAFFE_CHECK((height == 0 && width == 0) || (height > 0 && width > 0))
      << "resizing '" << filename << "' needs both a height and a width (given " << height << " x "
      << width << ")";
  const string bytes = ReadFileBytes(filename);
  CAFFE_CHECK(!bytes.empty()) << "image '" << filename << "' is an empty file";
  const int wanted_channels = is_color ? 3 : 1;
  const int wanted_flags = is_color ? cv::IMREAD_COLOR : cv::IMREAD_GRAYSCALE;
  // When the file's own bytes might be stored (encoded, no resize) it is decoded as stored first,
  // to see whether it already has the wanted channels; otherwise, or when it has not, it is
  // decoded the way BVLC does (for gray, libjpeg's own conversion).
  const bool may_keep_bytes = !encoding.empty() && height == 0;
  cv::Mat image = DecodeBytes(bytes, may_keep_bytes ? cv::IMREAD_ANYCOLOR : wanted_flags);
  CAFFE_CHECK(!image.empty()) << "image '" << filename
                              << "' cannot be decoded (corrupt, truncated, or not an image "
                                 "format OpenCV reads)";
  const bool native_channels = may_keep_bytes && image.channels() == wanted_channels;
  if (image.channels() != wanted_channels) {
    image = DecodeBytes(bytes, wanted_flags);
    CAFFE_CHECK(!image.empty()) << "image '" << filename << "' cannot be decoded";
  }
  bool resized = false;
  if (height > 0 && (image.rows != height || image.cols != width)) {
    cv::Mat resized_image;
    cv::resize(image, resized_image, cv::Size(width, height));
    image = resized_image;
    resized = true;
  }
  if (encoding.empty()) {
    MatToDatum(image, datum);
    datum->set_label(label);
    return;
  }
  const string format = CanonicalEncoding(encoding);
  if (!resized && native_channels && FileEncoding(filename) == format) {
    datum->set_data(bytes);
  } else {
    std::vector<uchar> buffer;
    bool encoded = false;
    try {
      encoded = cv::imencode("." + format, image, buffer);
    } catch (const cv::Exception&) {
      encoded = false;
    }
    CAFFE_CHECK(encoded) << "cannot encode image '" << filename << "' as '" << encoding
                         << "' (OpenCV has no encoder of that name; try jpg or png)";
    datum->set_data(buffer.data(), buffer.size());
  }
  datum->set_channels(image.channels());
  datum->set_height(image.rows);
  datum->set_width(image.cols);
  datum->clear_float_data();
  datum->set_label(label);
  datum->set_encoded(true);
}

void DecodeDatumWithOpenCV(const Datum& encoded, ImageColor color, Datum* decoded) {
  CHECK(encoded.encoded()) << "DecodeDatum of a raw record";
  const cv::Mat image = DecodeBytes(encoded.data(), DecodeFlags(color));
  CAFFE_CHECK(!image.empty()) << "the encoded record (" << encoded.data().size()
                              << " bytes) is not an image OpenCV can decode";
  MatToDatum(image, decoded);
  decoded->set_label(encoded.label());
}

/// A raw record (uint8 bytes, or float values rounded and clamped to 0..255) of 1 or 3 channels
/// as an H x W x C image; `what` says what it is for, in errors.
cv::Mat RawDatumToMat(const Datum& source, const string& what) {
  const int channels = source.channels();
  const int height = source.height();
  const int width = source.width();
  CAFFE_CHECK(channels == 1 || channels == 3)
      << "cannot " << what << " a record of " << ShapeText(channels, height, width)
      << ": images need 1 or 3 channels";
  CAFFE_CHECK(height > 0 && width > 0)
      << "cannot " << what << " a record of " << ShapeText(channels, height, width);
  const size_t plane = static_cast<size_t>(height) * width;
  const size_t size = plane * channels;
  const bool has_bytes = !source.data().empty();
  CAFFE_CHECK((has_bytes ? source.data().size() : static_cast<size_t>(source.float_data_size())) ==
              size)
      << "the record's values do not fill its shape " << ShapeText(channels, height, width);
  cv::Mat image(height, width, channels == 3 ? CV_8UC3 : CV_8UC1);
  for (int h = 0; h < height; ++h) {
    uint8_t* row = image.ptr<uint8_t>(h);
    for (int w = 0; w < width; ++w) {
      for (int c = 0; c < channels; ++c) {
        const size_t index = c * plane + static_cast<size_t>(h) * width + w;
        uint8_t value;
        if (has_bytes) {
          value = static_cast<uint8_t>(source.data()[index]);
        } else {
          const float x = source.float_data(static_cast<int>(index));
          value = static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, x + 0.5f)));
        }
        row[w * channels + c] = value;
      }
    }
  }
  return image;
}

void ResizeDatumRegionWithOpenCV(const Datum& raw, int x, int y, int width, int height,
                                 int out_width, int out_height, Datum* resized) {
  CHECK(!raw.encoded()) << "ResizeDatumRegion of an encoded record";
  UseOneOpenCVThreadPerCaller();
  const cv::Mat image = RawDatumToMat(raw, "cut a region of");
  CAFFE_CHECK(x >= 0 && y >= 0 && width > 0 && height > 0 && x + width <= image.cols &&
              y + height <= image.rows && out_width > 0 && out_height > 0)
      << "the region " << width << "x" << height << " at (" << x << ", " << y << "), resized to "
      << out_width << "x" << out_height << ", does not fit an image of "
      << ShapeText(image.channels(), image.rows, image.cols);
  cv::Mat region_resized;
  cv::resize(image(cv::Rect(x, y, width, height)), region_resized, cv::Size(out_width, out_height),
             0, 0, cv::INTER_LINEAR);
  MatToDatum(region_resized, resized);
  resized->set_label(raw.label());
}

void WriteDatumToImageWithOpenCV(const Datum& datum, const string& filename) {
  Datum raw;
  const Datum* source = &datum;
  if (datum.encoded()) {
    DecodeDatumWithOpenCV(datum, ImageColor::kNative, &raw);
    source = &raw;
  }
  const cv::Mat image = RawDatumToMat(*source, "write image '" + filename + "' from");
  bool written = false;
  string reason;
  try {
    written = cv::imwrite(filename, image);
  } catch (const cv::Exception& error) {
    reason = string(": ") + error.err;
  }
  CAFFE_CHECK(written) << "cannot write image '" << filename
                       << "' (is the folder writable, and the extension an image type such as "
                          ".png or .jpg?)"
                       << reason;
}

}  // namespace

}  // namespace caffe

extern "C" __attribute__((visibility("default"))) const caffe::ImageCodec* caffe_image_codec_v2() {
  static const caffe::ImageCodec codec = {
      caffe::ReadImageToDatumWithOpenCV, caffe::DecodeDatumWithOpenCV,
      caffe::WriteDatumToImageWithOpenCV, caffe::ResizeDatumRegionWithOpenCV};
  return &codec;
}
