#include "caffe/layers/image_data_layer.hpp"

#include <cinttypes>
#include <cstdio>
#include <random>

#include "caffe/kernels/math_functions.hpp"

namespace caffe {

template <typename Dtype>
ImageDataLayer<Dtype>::~ImageDataLayer() {
  // The thread runs this class's load_batch: stop it before the list goes away.
  this->StopInternalThread();
}

template <typename Dtype>
string ImageDataLayer<Dtype>::ImagePath(const ImageListEntry& entry) const {
  return this->layer_param_.image_data_param().root_folder() + entry.path;
}

template <typename Dtype>
void ImageDataLayer<Dtype>::DataLayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const ImageDataParameter& param = this->layer_param_.image_data_param();
  const string& source = param.source();
  const int new_height = static_cast<int>(param.new_height());
  const int new_width = static_cast<int>(param.new_width());
  const int batch_size = static_cast<int>(param.batch_size());
  LAYER_CHECK(!source.empty()) << "image_data_param.source (the image list file) is not set";
  LAYER_CHECK_GT(batch_size, 0) << "image_data_param.batch_size must be at least 1";
  LAYER_CHECK((new_height == 0 && new_width == 0) || (new_height > 0 && new_width > 0))
      << "image_data_param sets new_height " << new_height << " and new_width " << new_width
      << "; set both (to resize) or neither";

  LAYER_CHECK(ImageSupportAvailable())
      << "reading the images listed in '" << source << "' needs " << ImageSupportProblem()
      << " (or convert the images with convert_imageset on a machine that can, and use a Data "
         "layer)";

  vector<ImageListEntry> entries;
  try {
    entries = ReadImageList(source);
  } catch (const Error& error) {
    LAYER_THROW() << error.what();
  }
  LAYER_CHECK(!entries.empty()) << "image list '" << source << "' names no images";
  const int solvers = Caffe::solver_count();
  lines_.clear();
  if (this->phase_ == TRAIN && solvers > 1) {
    for (size_t i = Caffe::solver_rank(); i < entries.size(); i += solvers) {
      lines_.push_back(entries[i]);
    }
    LAYER_CHECK(!lines_.empty()) << "image list '" << source << "' names " << entries.size()
                                 << " images, fewer than the " << solvers << " solvers sharing it";
  } else {
    lines_ = entries;
  }
  LOG_IF(INFO, Caffe::root_solver()) << "A total of " << lines_.size() << " images.";

  epoch_ = 0;
  position_ = 0;
  records_read_ = 0;
  shuffle_seed_ = 0;
  if (param.shuffle()) {
    LOG_IF(INFO, Caffe::root_solver()) << "Shuffling data";
    shuffle_seed_ = caffe_rng_rand();
  }
  BuildOrder();
  if (param.rand_skip() > 0) {
    const unsigned int skip = caffe_rng_rand() % param.rand_skip();
    LOG(INFO) << "Skipping first " << skip << " data points.";
    LAYER_CHECK_GT(lines_.size(), skip)
        << "image_data_param.rand_skip skips " << skip << " of only " << lines_.size() << " images";
    position_ = skip;
    records_read_ = skip;
  }
  this->SetUpWorkers(param.threads());

  // The first image decides the tops' shape (each batch is reshaped after its own first one).
  const ImageListEntry& first = lines_[order_[position_]];
  vector<int> top_shape;
  try {
    Datum datum;
    ReadImageToDatum(ImagePath(first), first.label, new_height, new_width, param.is_color(), "",
                     &datum);
    top_shape = this->data_transformer_->InferBlobShape(datum);
  } catch (const Error& error) {
    LAYER_THROW() << "line " << first.line << " of '" << source << "': " << error.what();
  }
  top_shape[0] = batch_size;
  top[0]->Reshape(top_shape);
  for (auto& batch : this->prefetch_) batch->data_.Reshape(top_shape);
  LOG_IF(INFO, Caffe::root_solver())
      << "output data size: " << top[0]->num() << "," << top[0]->channels() << ","
      << top[0]->height() << "," << top[0]->width();
  const vector<int> label_shape(1, batch_size);
  top[1]->Reshape(label_shape);
  for (auto& batch : this->prefetch_) batch->label_.Reshape(label_shape);
}

template <typename Dtype>
void ImageDataLayer<Dtype>::BuildOrder() {
  const int count = static_cast<int>(lines_.size());
  order_.resize(count);
  for (int i = 0; i < count; ++i) order_[i] = i;
  if (!this->layer_param_.image_data_param().shuffle()) return;
  // Each epoch's order depends only on the seed and the epoch, so a resumed run rebuilds it.
  std::seed_seq seeds{shuffle_seed_, static_cast<uint32_t>(epoch_),
                      static_cast<uint32_t>(epoch_ >> 32)};
  std::mt19937 generator(seeds);
  for (int i = count - 1; i > 0; --i) {
    const int j = static_cast<int>(generator() % static_cast<uint32_t>(i + 1));
    std::swap(order_[i], order_[j]);
  }
}

template <typename Dtype>
void ImageDataLayer<Dtype>::Next() {
  ++records_read_;
  if (++position_ < order_.size()) return;
  LOG_IF(INFO, Caffe::root_solver()) << "Restarting data prefetching from start.";
  position_ = 0;
  ++epoch_;
  BuildOrder();
}

template <typename Dtype>
void ImageDataLayer<Dtype>::load_batch(Batch<Dtype>* batch) {
  const ImageDataParameter& param = this->layer_param_.image_data_param();
  const int batch_size = static_cast<int>(param.batch_size());
  const int new_height = static_cast<int>(param.new_height());
  const int new_width = static_cast<int>(param.new_width());
  const bool is_color = param.is_color();
  batch_lines_.resize(batch_size);
  for (int item = 0; item < batch_size; ++item) {
    batch_lines_[item] = &lines_[order_[position_]];
    Next();
  }
  this->TransformBatch(
      batch_size,
      [&](int item, Datum* datum) {
        const ImageListEntry& entry = *batch_lines_[item];
        ReadImageToDatum(ImagePath(entry), entry.label, new_height, new_width, is_color, "", datum);
      },
      [&](int item) {
        return "line " + std::to_string(batch_lines_[item]->line) + " of '" + param.source() + "'";
      },
      batch);
}

template <typename Dtype>
DataCursor ImageDataLayer<Dtype>::ReaderPosition() const {
  char key[128];
  std::snprintf(key, sizeof(key), "epoch %" PRIu64 " position %zu of %zu images (shuffle seed %u)",
                epoch_, position_, order_.size(), shuffle_seed_);
  DataCursor cursor;
  cursor.set_key(key);
  cursor.set_records_read(records_read_);
  return cursor;
}

template <typename Dtype>
void ImageDataLayer<Dtype>::SeekReader(const DataCursor& cursor) {
  uint64_t epoch = 0;
  size_t position = 0, count = 0;
  unsigned int seed = 0;
  char end = 0;
  const int parsed = std::sscanf(cursor.key().c_str(),
                                 "epoch %" SCNu64 " position %zu of %zu images (shuffle seed %u%c",
                                 &epoch, &position, &count, &seed, &end);
  LAYER_CHECK(parsed == 5 && end == ')')
      << "the saved data position '" << cursor.key() << "' is not an ImageData position";
  LAYER_CHECK(count == lines_.size())
      << "the saved data position is for a list of " << count << " images but '"
      << this->layer_param_.image_data_param().source() << "' now gives this layer "
      << lines_.size() << " (was the list changed since the snapshot?)";
  LAYER_CHECK(position < count) << "the saved data position " << position
                                << " is past the end of the list";
  epoch_ = epoch;
  shuffle_seed_ = this->layer_param_.image_data_param().shuffle() ? seed : 0;
  BuildOrder();
  position_ = position;
  records_read_ = cursor.records_read();
}

INSTANTIATE_CLASS(ImageDataLayer);
REGISTER_LAYER_CLASS(ImageData);

}  // namespace caffe
