#include "caffe/layers/window_data_layer.hpp"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "caffe/io/image_io.hpp"
#include "caffe/io/io.hpp"
#include "caffe/kernels/math_functions.hpp"

namespace caffe {

namespace {

// The whitespace-separated tokens of a text file, each with its 1-based line number.
class Tokens {
 public:
  explicit Tokens(const string& filename) : filename_(filename) {
    std::ifstream stream(filename);
    CAFFE_CHECK(stream.is_open()) << "cannot open window file '" << filename
                                  << "': " << std::strerror(errno);
    string line;
    for (int number = 1; std::getline(stream, line); ++number) {
      std::istringstream words(line);
      string word;
      while (words >> word) tokens_.push_back({word, number});
    }
  }
  bool done() const { return next_ >= tokens_.size(); }
  int line() const { return done() ? (tokens_.empty() ? 0 : tokens_.back().line) : Peek().line; }
  /// The next token, which `what` describes in the error when the file has ended.
  string Word(const string& what) {
    CAFFE_CHECK(!done()) << "window file '" << filename_ << "' ends where " << what << " should be";
    return tokens_[next_++].text;
  }
  /// The next token as a number (an integer where `integer`).
  double Number(const string& what, bool integer) {
    const int at = line();
    const string word = Word(what);
    char* end = nullptr;
    errno = 0;
    const double value = integer ? static_cast<double>(std::strtoll(word.c_str(), &end, 10))
                                 : std::strtod(word.c_str(), &end);
    CAFFE_CHECK(end != word.c_str() && *end == '\0' && errno == 0)
        << "window file '" << filename_ << "' line " << at << ": " << what << " is '" << word
        << "'; expected " << (integer ? "an integer" : "a number");
    return value;
  }

 private:
  struct Token {
    string text;
    int line;
  };
  const Token& Peek() const { return tokens_[next_]; }
  string filename_;
  vector<Token> tokens_;
  size_t next_ = 0;
};

}  // namespace

template <typename Dtype>
WindowDataLayer<Dtype>::~WindowDataLayer() {
  // The thread runs this class's load_batch: stop it before the windows go away.
  this->StopInternalThread();
}

template <typename Dtype>
void WindowDataLayer<Dtype>::ReadWindowFile(const string& source) {
  const WindowDataParameter& param = this->layer_param_.window_data_param();
  Tokens tokens(source);
  images_.clear();
  fg_windows_.clear();
  bg_windows_.clear();
  std::map<int, int> class_counts;
  while (!tokens.done()) {
    const int header = tokens.line();
    const string hash = tokens.Word("'#'");
    CAFFE_CHECK(hash == "#") << "window file '" << source << "' line " << header
                             << ": expected '# <image index>' to start an image, found '" << hash
                             << "'";
    tokens.Number("the image index", true);
    Image image;
    const int path_line = tokens.line();
    image.path = tokens.Word("the image path");
    image.channels = static_cast<int>(tokens.Number("the image's channels", true));
    image.height = static_cast<int>(tokens.Number("the image's height", true));
    image.width = static_cast<int>(tokens.Number("the image's width", true));
    const auto where = [&](int line) {
      return "window file '" + source + "' line " + std::to_string(line) + ": ";
    };
    // Images are read in colour, as BVLC reads them.
    CAFFE_CHECK(image.channels == 3)
        << where(path_line) << "image '" << image.path << "' lists " << image.channels
        << " channels; WindowData reads images in colour (3)";
    CAFFE_CHECK(image.height > 0 && image.width > 0)
        << where(path_line) << "image '" << image.path << "' lists a size of " << image.height
        << " x " << image.width;
    const int windows = static_cast<int>(tokens.Number("the number of windows", true));
    CAFFE_CHECK_GE(windows, 0) << where(tokens.line()) << "a negative number of windows";
    const int index = static_cast<int>(images_.size());
    for (int w = 0; w < windows; ++w) {
      const int line = tokens.line();
      Window window;
      window.image = index;
      const int label = static_cast<int>(tokens.Number("a window's class", true));
      window.overlap = static_cast<float>(tokens.Number("a window's overlap", false));
      window.x1 = static_cast<int>(tokens.Number("a window's x1", false));
      window.y1 = static_cast<int>(tokens.Number("a window's y1", false));
      window.x2 = static_cast<int>(tokens.Number("a window's x2", false));
      window.y2 = static_cast<int>(tokens.Number("a window's y2", false));
      CAFFE_CHECK(0 <= window.x1 && window.x1 <= window.x2 && window.x2 < image.width &&
                  0 <= window.y1 && window.y1 <= window.y2 && window.y2 < image.height)
          << where(line) << "the window (" << window.x1 << ", " << window.y1 << ") to ("
          << window.x2 << ", " << window.y2 << ") does not lie in image '" << image.path << "' of "
          << image.width << " x " << image.height << " (corners are inclusive)";
      if (window.overlap >= param.fg_threshold()) {
        CAFFE_CHECK_GT(label, 0) << where(line) << "a foreground window (overlap " << window.overlap
                                 << ") has class " << label << "; class 0 is the background";
        window.label = label;
        fg_windows_.push_back(window);
        ++class_counts[label];
      } else if (window.overlap < param.bg_threshold()) {
        window.label = 0;
        window.overlap = 0;
        bg_windows_.push_back(window);
        ++class_counts[0];
      }
    }
    images_.push_back(image);
  }
  CAFFE_CHECK(!images_.empty()) << "window file '" << source << "' lists no images";
  LOG_IF(INFO, Caffe::root_solver())
      << "Window file '" << source << "': " << images_.size() << " images, " << fg_windows_.size()
      << " foreground windows (overlap >= " << param.fg_threshold() << "), " << bg_windows_.size()
      << " background windows (overlap < " << param.bg_threshold() << ")";
  for (const auto& count : class_counts) {
    LOG_IF(INFO, Caffe::root_solver())
        << "class " << count.first << " has " << count.second << " samples";
  }
}

template <typename Dtype>
void WindowDataLayer<Dtype>::DataLayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const WindowDataParameter& param = this->layer_param_.window_data_param();
  const TransformationParameter& transform = this->layer_param_.transform_param();
  const int batch_size = static_cast<int>(param.batch_size());
  LAYER_CHECK(!param.source().empty()) << "window_data_param.source (the window file) is not set";
  LAYER_CHECK_GT(batch_size, 0) << "window_data_param.batch_size must be at least 1";
  crop_size_ = static_cast<int>(transform.crop_size());
  LAYER_CHECK_GT(crop_size_, 0) << "WindowData needs transform_param.crop_size, the side its "
                                   "windows are warped to";
  LAYER_CHECK(param.crop_mode() == "warp" || param.crop_mode() == "square")
      << "window_data_param.crop_mode is '" << param.crop_mode() << "'; expected warp or square";
  LAYER_CHECK(param.fg_fraction() >= 0 && param.fg_fraction() <= 1)
      << "window_data_param.fg_fraction " << param.fg_fraction() << " is not in [0, 1]";
  LAYER_CHECK_LT(2 * param.context_pad(), static_cast<uint32_t>(crop_size_))
      << "window_data_param.context_pad " << param.context_pad()
      << " leaves no room for the window in a crop of " << crop_size_;
  LAYER_CHECK(ImageSupportAvailable()) << "reading the images of window file '" << param.source()
                                       << "' needs " << ImageSupportProblem();
  try {
    ReadWindowFile(param.source());
  } catch (const Error& error) {
    LAYER_THROW() << error.what();
  }
  const int num_fg = static_cast<int>(static_cast<float>(batch_size) * param.fg_fraction());
  LAYER_CHECK(num_fg == 0 || !fg_windows_.empty())
      << "a batch takes " << num_fg << " foreground windows, but window file '" << param.source()
      << "' has none with overlap >= fg_threshold " << param.fg_threshold();
  LAYER_CHECK(num_fg == batch_size || !bg_windows_.empty())
      << "a batch takes " << batch_size - num_fg << " background windows, but window file '"
      << param.source() << "' has none with overlap < bg_threshold " << param.bg_threshold();
  if (param.cache_images()) {
    for (Image& image : images_) {
      const string path = param.root_folder() + image.path;
      std::ifstream file(path, std::ios::binary);
      LAYER_CHECK(file.is_open()) << "cannot open image '" << path << "' of window file '"
                                  << param.source() << "': " << std::strerror(errno);
      std::ostringstream bytes;
      bytes << file.rdbuf();
      image.encoded.set_data(bytes.str());
      image.encoded.set_encoded(true);
    }
    LOG_IF(INFO, Caffe::root_solver()) << "Cached the " << images_.size() << " images' files";
  }
  channels_ = 3;
  if (transform.mean_value_size() > 0) {
    LAYER_CHECK(transform.mean_value_size() == 1 || transform.mean_value_size() == channels_)
        << "transform_param gives " << transform.mean_value_size() << " mean_value entries; "
        << "expected 1 or " << channels_;
  }
  mean_.clear();
  mean_size_ = 0;
  if (transform.has_mean_file()) {  // the transformer checked it is not given with mean_value
    BlobProto proto;
    ReadProtoFromBinaryFile(transform.mean_file(), &proto);
    Blob<Dtype> mean;
    mean.FromProto(proto);
    LAYER_CHECK(mean.num_axes() == 4 && mean.shape(0) == 1 && mean.shape(1) == channels_ &&
                mean.shape(2) == mean.shape(3) && mean.shape(2) >= crop_size_)
        << "mean file '" << transform.mean_file() << "' has shape " << mean.shape_string()
        << "; WindowData needs (1, " << channels_ << ", H, H) with H >= crop_size " << crop_size_;
    mean_.assign(mean.cpu_data(), mean.cpu_data() + mean.count());
    mean_size_ = mean.shape(2);
  }
  seed_ = caffe_rng_rand();
  batches_ = 0;
  const vector<int> data_shape{batch_size, channels_, crop_size_, crop_size_};
  top[0]->Reshape(data_shape);
  for (auto& batch : this->prefetch_) batch->data_.Reshape(data_shape);
  LOG_IF(INFO, Caffe::root_solver()) << "output data size: " << batch_size << "," << channels_
                                     << "," << crop_size_ << "," << crop_size_;
  const vector<int> label_shape(1, batch_size);
  top[1]->Reshape(label_shape);
  for (auto& batch : this->prefetch_) batch->label_.Reshape(label_shape);
}

template <typename Dtype>
void WindowDataLayer<Dtype>::LoadImage(int index, Datum* raw) const {
  const Image& image = images_[index];
  if (image.encoded.encoded()) {
    DecodeDatum(image.encoded, ImageColor::kColor, raw);
  } else {
    ReadImageToDatum(this->layer_param_.window_data_param().root_folder() + image.path, 0, 0, 0,
                     /*is_color=*/true, "", raw);
  }
}

template <typename Dtype>
void WindowDataLayer<Dtype>::WarpWindow(const Window& window, const Datum& raw, bool mirror,
                                        int item, Dtype* data) const {
  const WindowDataParameter& param = this->layer_param_.window_data_param();
  const TransformationParameter& transform = this->layer_param_.transform_param();
  const int rows = raw.height(), cols = raw.width();
  const int crop = crop_size_;
  int x1 = window.x1, y1 = window.y1, x2 = window.x2, y2 = window.y2;
  CAFFE_CHECK(x2 < cols && y2 < rows)
      << "the window (" << x1 << ", " << y1 << ") to (" << x2 << ", " << y2
      << ") does not lie in image '" << images_[window.image].path << "', which is " << cols
      << " x " << rows << " (not the size the window file lists)";
  int out_width = crop, out_height = crop;
  int pad_w = 0, pad_h = 0;
  const int context_pad = static_cast<int>(param.context_pad());
  if (context_pad > 0 || param.crop_mode() == "square") {
    // Widen the window so that, warped to crop x crop, context_pad pixels of context surround
    // it; BVLC's arithmetic, in Dtype, so the same windows round the same way.
    const Dtype context_scale =
        static_cast<Dtype>(crop) / static_cast<Dtype>(crop - 2 * context_pad);
    Dtype half_height = static_cast<Dtype>(y2 - y1 + 1) / 2;
    Dtype half_width = static_cast<Dtype>(x2 - x1 + 1) / 2;
    const Dtype center_x = static_cast<Dtype>(x1) + half_width;
    const Dtype center_y = static_cast<Dtype>(y1) + half_height;
    if (param.crop_mode() == "square") half_width = half_height = std::max(half_width, half_height);
    x1 = static_cast<int>(std::round(center_x - half_width * context_scale));
    x2 = static_cast<int>(std::round(center_x + half_width * context_scale));
    y1 = static_cast<int>(std::round(center_y - half_height * context_scale));
    y2 = static_cast<int>(std::round(center_y + half_height * context_scale));
    // The part beyond the image is padding, kept in proportion through the warp.
    const int unclipped_height = y2 - y1 + 1;
    const int unclipped_width = x2 - x1 + 1;
    int pad_x1 = std::max(0, -x1), pad_y1 = std::max(0, -y1);
    int pad_x2 = std::max(0, x2 - cols + 1), pad_y2 = std::max(0, y2 - rows + 1);
    x1 += pad_x1;
    x2 -= pad_x2;
    y1 += pad_y1;
    y2 -= pad_y2;
    const Dtype scale_x = static_cast<Dtype>(crop) / static_cast<Dtype>(unclipped_width);
    const Dtype scale_y = static_cast<Dtype>(crop) / static_cast<Dtype>(unclipped_height);
    out_width = static_cast<int>(std::round(static_cast<Dtype>(x2 - x1 + 1) * scale_x));
    out_height = static_cast<int>(std::round(static_cast<Dtype>(y2 - y1 + 1) * scale_y));
    pad_x1 = static_cast<int>(std::round(static_cast<Dtype>(pad_x1) * scale_x));
    pad_x2 = static_cast<int>(std::round(static_cast<Dtype>(pad_x2) * scale_x));
    pad_y1 = static_cast<int>(std::round(static_cast<Dtype>(pad_y1) * scale_y));
    pad_h = pad_y1;
    pad_w = mirror ? pad_x2 : pad_x1;  // a mirrored window has its padding mirrored too
    // Rounding may overshoot the crop; a tiny clipped part still gets a pixel.
    out_height = std::max(1, std::min(out_height, crop - pad_h));
    out_width = std::max(1, std::min(out_width, crop - pad_w));
  }
  Datum warped;
  ResizeDatumRegion(raw, x1, y1, x2 - x1 + 1, y2 - y1 + 1, out_width, out_height, &warped);
  const uint8_t* pixels = reinterpret_cast<const uint8_t*>(warped.data().data());
  const Dtype scale = transform.scale();
  const bool has_mean_values = transform.mean_value_size() > 0;
  const int mean_offset = (mean_size_ - crop) / 2;
  for (int c = 0; c < channels_; ++c) {
    const Dtype mean_value =
        has_mean_values ? transform.mean_value(transform.mean_value_size() == 1 ? 0 : c) : 0;
    for (int h = 0; h < out_height; ++h) {
      const int y = h + pad_h;
      Dtype* row = data + ((static_cast<size_t>(item) * channels_ + c) * crop + y) * crop;
      const uint8_t* source = pixels + (static_cast<size_t>(c) * out_height + h) * out_width;
      for (int w = 0; w < out_width; ++w) {
        const int x = w + pad_w;
        const Dtype pixel = source[mirror ? out_width - 1 - w : w];
        const Dtype mean =
            mean_.empty()
                ? mean_value
                : mean_[(static_cast<size_t>(c) * mean_size_ + y + mean_offset) * mean_size_ + x +
                        mean_offset];
        row[x] = (pixel - mean) * scale;
      }
    }
  }
}

template <typename Dtype>
void WindowDataLayer<Dtype>::load_batch(Batch<Dtype>* batch) {
  const WindowDataParameter& param = this->layer_param_.window_data_param();
  const int batch_size = static_cast<int>(param.batch_size());
  const int num_fg = static_cast<int>(static_cast<float>(batch_size) * param.fg_fraction());
  Dtype* data = batch->data_.mutable_cpu_data();
  Dtype* labels = batch->label_.mutable_cpu_data();
  caffe_set(batch->data_.count(), Dtype(0), data);  // the padding
  // Each batch's draws depend only on the seed and its number, so a resumed run repeats them.
  std::seed_seq seeds{seed_, static_cast<uint32_t>(batches_),
                      static_cast<uint32_t>(batches_ >> 32)};
  std::mt19937 generator(seeds);
  ++batches_;
  const bool mirror = this->layer_param_.transform_param().mirror();
  Datum raw;
  int item = 0;
  // Background windows first, then foreground ones, as BVLC orders a batch.
  for (const bool foreground : {false, true}) {
    const vector<Window>& windows = foreground ? fg_windows_ : bg_windows_;
    const int count = foreground ? num_fg : batch_size - num_fg;
    for (int k = 0; k < count; ++k, ++item) {
      const Window& window = windows[generator() % windows.size()];
      const bool flip = mirror && generator() % 2 == 1;
      try {
        LoadImage(window.image, &raw);
        WarpWindow(window, raw, flip, item, data);
      } catch (const Error& error) {
        LAYER_THROW() << "window file '" << param.source() << "', image '"
                      << images_[window.image].path << "': " << error.what();
      }
      labels[item] = static_cast<Dtype>(window.label);
    }
  }
}

template <typename Dtype>
DataCursor WindowDataLayer<Dtype>::ReaderPosition() const {
  char key[96];
  std::snprintf(key, sizeof(key), "batch %" PRIu64 " (sampling seed %u)", batches_, seed_);
  DataCursor cursor;
  cursor.set_key(key);
  cursor.set_records_read(batches_ * this->layer_param_.window_data_param().batch_size());
  return cursor;
}

template <typename Dtype>
void WindowDataLayer<Dtype>::SeekReader(const DataCursor& cursor) {
  uint64_t batches = 0;
  unsigned int seed = 0;
  char end = 0;
  const int parsed = std::sscanf(cursor.key().c_str(), "batch %" SCNu64 " (sampling seed %u%c",
                                 &batches, &seed, &end);
  LAYER_CHECK(parsed == 3 && end == ')')
      << "the saved data position '" << cursor.key() << "' is not a WindowData position";
  batches_ = batches;
  seed_ = seed;
}

INSTANTIATE_CLASS(WindowDataLayer);
REGISTER_LAYER_CLASS(WindowData);

}  // namespace caffe
