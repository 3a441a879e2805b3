#include "caffe/layers/data_layer.hpp"

#include <vector>

#include "caffe/io/io.hpp"

namespace caffe {

template <typename Dtype>
DataLayer<Dtype>::~DataLayer() {
  // The thread runs this class's load_batch: stop it before cursor_ and db_ are destroyed.
  this->StopInternalThread();
}

template <typename Dtype>
void DataLayer<Dtype>::DataLayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const DataParameter& data_param = this->layer_param_.data_param();
  const string& source = data_param.source();
  const int batch_size = static_cast<int>(data_param.batch_size());
  LAYER_CHECK_GT(batch_size, 0) << "data_param.batch_size must be at least 1";
  LAYER_CHECK(!source.empty()) << "data_param.source is not set";
  // BVLC's default backend is LEVELDB: a net that sets none, over an LMDB, means the LMDB.
  DataParameter::DB backend = data_param.backend();
  if (!data_param.has_backend() && FileExists(source + "/data.mdb")) {
    backend = DataParameter::LMDB;
    LOG(INFO) << this->error_prefix() << "'" << source << "' is an LMDB: read as one (data_param "
              << "sets no backend, whose default is LEVELDB)";
  }
  try {
    db_ = db::GetDB(backend);
  } catch (const Error& error) {
    LAYER_THROW() << "cannot read '" << source << "': " << error.what();
  }
  try {
    db_->Open(source, db::READ);
    cursor_ = db_->NewCursor();
  } catch (const Error& error) {
    LAYER_THROW() << error.what();
  }
  LAYER_CHECK(cursor_->valid()) << "'" << source << "' holds no records";
  offset_ = 0;
  this->SetUpWorkers(data_param.threads());

  if (data_param.rand_skip() > 0) {
    unsigned int skip = caffe_rng_rand() % data_param.rand_skip();
    LOG(INFO) << "Skipping first " << skip << " data points.";
    while (skip-- > 0) Next();
  }

  // The first record decides the tops' shape (each batch is reshaped after its own first one).
  Datum datum;
  LAYER_CHECK(datum.ParseFromString(cursor_->value()))
      << "record '" << cursor_->key() << "' of '" << source << "' is not a valid Datum";
  vector<int> top_shape;
  try {
    top_shape = this->data_transformer_->InferBlobShape(datum);
  } catch (const Error& error) {
    LAYER_THROW() << "record '" << cursor_->key() << "' of '" << source << "': " << error.what();
  }
  top_shape[0] = batch_size;
  top[0]->Reshape(top_shape);
  for (auto& batch : this->prefetch_) batch->data_.Reshape(top_shape);
  LOG_IF(INFO, Caffe::root_solver())
      << "output data size: " << top[0]->num() << "," << top[0]->channels() << ","
      << top[0]->height() << "," << top[0]->width();
  if (this->output_labels_) {
    const vector<int> label_shape(1, batch_size);
    top[1]->Reshape(label_shape);
    for (auto& batch : this->prefetch_) batch->label_.Reshape(label_shape);
  }
}

template <typename Dtype>
bool DataLayer<Dtype>::Skip() const {
  const int size = Caffe::solver_count();
  const int rank = Caffe::solver_rank();
  // Test nets run on one solver and must see the whole set.
  const bool keep = (offset_ % size) == static_cast<uint64_t>(rank) || this->phase_ == TEST;
  return !keep;
}

template <typename Dtype>
void DataLayer<Dtype>::Next() {
  cursor_->Next();
  if (!cursor_->valid()) {
    LOG_IF(INFO, Caffe::root_solver()) << "Restarting data prefetching from start.";
    cursor_->SeekToFirst();
  }
  ++offset_;
}

template <typename Dtype>
void DataLayer<Dtype>::load_batch(Batch<Dtype>* batch) {
  const int batch_size = static_cast<int>(this->layer_param_.data_param().batch_size());
  const string& source = this->layer_param_.data_param().source();
  // Reading the database is sequential and cheap; parsing and decoding go to the workers.
  keys_.resize(batch_size);
  values_.resize(batch_size);
  for (int item = 0; item < batch_size; ++item) {
    while (Skip()) Next();
    keys_[item] = cursor_->key();
    values_[item] = cursor_->value();
    Next();
  }
  // With several solvers, the batch ends where the next round of the stream starts, so every
  // solver saves the same position and resuming any solver from the root's snapshot is exact.
  if (this->phase_ == TRAIN) {
    while (offset_ % Caffe::solver_count() != 0) Next();
  }
  DataTransformer<Dtype>* transformer = this->data_transformer_.get();
  this->TransformBatch(
      batch_size,
      [&](int item, Datum* datum) {
        CAFFE_CHECK(datum->ParseFromString(values_[item])) << "not a valid Datum";
        if (datum->encoded()) {
          Datum decoded;
          transformer->Decode(*datum, &decoded);
          datum->Swap(&decoded);
        }
      },
      [&](int item) { return "record '" + keys_[item] + "' of '" + source + "'"; }, batch);
}

template <typename Dtype>
DataCursor DataLayer<Dtype>::ReaderPosition() const {
  DataCursor cursor;
  cursor.set_key(cursor_->key());
  cursor.set_records_read(offset_);
  return cursor;
}

template <typename Dtype>
void DataLayer<Dtype>::SeekReader(const DataCursor& cursor) {
  const string& source = this->layer_param_.data_param().source();
  LAYER_CHECK(cursor.has_key()) << "the saved data position has no key";
  cursor_->Seek(cursor.key());
  if (!cursor_->valid() || cursor_->key() != cursor.key()) {
    cursor_->SeekToFirst();  // keep the reader on a record
    LAYER_THROW() << "the saved data position, key '" << cursor.key() << "', is not in LMDB '"
                  << source << "' (was the database rebuilt since the snapshot?)";
  }
  offset_ = cursor.records_read();
}

INSTANTIATE_CLASS(DataLayer);
REGISTER_LAYER_CLASS(Data);

}  // namespace caffe
