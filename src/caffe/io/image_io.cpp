#include "caffe/io/image_io.hpp"

#include <dlfcn.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "caffe/io/image_codec.hpp"

namespace caffe {

namespace {

#ifdef USE_OPENCV

/// The OpenCV module beside libcaffe (same folder: the build tree's lib/, an install's lib/, a
/// bundle's lib/), loaded once; null with `problem` set when it cannot be loaded.
struct LoadedCodec {
  const ImageCodec* codec = nullptr;
  string problem;
};

LoadedCodec LoadCodec() {
  LoadedCodec loaded;
  Dl_info self;
  string folder;
  if (dladdr(reinterpret_cast<void*>(&ImageSupportAvailable), &self) != 0 && self.dli_fname) {
    folder = self.dli_fname;
    const size_t slash = folder.rfind('/');
    folder = slash == string::npos ? "" : folder.substr(0, slash + 1);
  }
  const string path = folder + CAFFE_IMAGE_MODULE;
  void* module = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!module) {
    loaded.problem = "Caffe's OpenCV image module, which could not be loaded (" +
                     string(dlerror()) + "); rebuild Caffe, or reinstall it with its lib/ folder";
    return loaded;
  }
  using Entry = const ImageCodec* (*)();
  const auto entry = reinterpret_cast<Entry>(dlsym(module, CAFFE_IMAGE_CODEC_SYMBOL));
  if (!entry) {
    loaded.problem = "Caffe's OpenCV image module '" + path + "', which lacks " +
                     CAFFE_IMAGE_CODEC_SYMBOL + " (a module from another version of Caffe?)";
    return loaded;
  }
  loaded.codec = entry();
  return loaded;
}

const LoadedCodec& Codec() {
  static const LoadedCodec loaded = LoadCodec();  // thread-safe, once
  return loaded;
}

#endif  // USE_OPENCV

/// The codec, or a caffe::Error saying that `what` needs what is missing.
const ImageCodec& CodecFor(const string& what) {
#ifdef USE_OPENCV
  if (Codec().codec) return *Codec().codec;
#endif
  CAFFE_THROW() << what << " needs " << ImageSupportProblem();
}

}  // namespace

string ImageSupportProblem() {
#ifdef USE_OPENCV
  return Codec().problem;
#else
  return "OpenCV, which this build of Caffe does not include (install libopencv-imgcodecs-dev, "
         "e.g. with scripts/install_deps.sh, and rebuild with CAFFE_OPENCV=AUTO or ON)";
#endif
}

bool ImageSupportAvailable() { return ImageSupportProblem().empty(); }

void ReadImageToDatum(const string& filename, int label, int height, int width, bool is_color,
                      const string& encoding, Datum* datum) {
  CodecFor("reading image '" + filename + "'")
      .read_image_to_datum(filename, label, height, width, is_color, encoding, datum);
}

void DecodeDatum(const Datum& encoded, ImageColor color, Datum* decoded) {
  CodecFor("decoding an encoded (JPEG/PNG) record").decode_datum(encoded, color, decoded);
}

int CheckRawDatum(const Datum& datum) {
  const int channels = datum.channels();
  const int height = datum.height();
  const int width = datum.width();
  const string shape =
      std::to_string(channels) + "x" + std::to_string(height) + "x" + std::to_string(width);
  CAFFE_CHECK(channels > 0 && height > 0 && width > 0)
      << "the record's shape (channels x height x width) is " << shape
      << "; each must be at least 1";
  const int64_t size = static_cast<int64_t>(channels) * height * width;
  CAFFE_CHECK(size <= INT32_MAX) << "the record's shape " << shape << " is too large";
  const bool has_uint8 = !datum.data().empty();
  const int64_t held = has_uint8 ? static_cast<int64_t>(datum.data().size())
                                 : static_cast<int64_t>(datum.float_data_size());
  CAFFE_CHECK(held == size) << "the record holds " << held
                            << (has_uint8 ? " bytes of data" : " float_data values")
                            << " but its shape " << shape << " needs " << size;
  return static_cast<int>(size);
}

void WriteDatumToImage(const Datum& datum, const string& filename) {
  CodecFor("writing image '" + filename + "'").write_datum_to_image(datum, filename);
}

void ResizeDatumRegion(const Datum& raw, int x, int y, int width, int height, int out_width,
                       int out_height, Datum* resized) {
  CodecFor("warping an image region")
      .resize_datum_region(raw, x, y, width, height, out_width, out_height, resized);
}

vector<ImageListEntry> ReadImageList(const string& filename) {
  std::ifstream stream(filename);
  CAFFE_CHECK(stream.is_open()) << "cannot open image list '" << filename
                                << "': " << std::strerror(errno);
  vector<ImageListEntry> entries;
  string line;
  int line_number = 0;
  while (std::getline(stream, line)) {
    ++line_number;
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (line.find_first_not_of(" \t") == string::npos) continue;
    const size_t space = line.find_last_of(" \t");
    CAFFE_CHECK(space != string::npos) << "image list '" << filename << "' line " << line_number
                                       << ": '" << line << "' has no label (expected 'path label')";
    ImageListEntry entry;
    entry.path = line.substr(0, space);
    while (!entry.path.empty() && std::isspace(static_cast<unsigned char>(entry.path.back()))) {
      entry.path.pop_back();
    }
    const string label_text = line.substr(space + 1);
    CAFFE_CHECK(!entry.path.empty())
        << "image list '" << filename << "' line " << line_number << ": '" << line
        << "' has no image path (expected 'path label')";
    errno = 0;
    char* end = nullptr;
    const long label = std::strtol(label_text.c_str(), &end, 10);
    CAFFE_CHECK(!label_text.empty() && *end == '\0' && errno == 0 && label >= INT_MIN &&
                label <= INT_MAX)
        << "image list '" << filename << "' line " << line_number << ": label '" << label_text
        << "' is not an integer (expected 'path label')";
    entry.label = static_cast<int>(label);
    entry.line = line_number;
    entries.push_back(entry);
  }
  CAFFE_CHECK(!stream.bad()) << "cannot read image list '" << filename << "'";
  return entries;
}

}  // namespace caffe
