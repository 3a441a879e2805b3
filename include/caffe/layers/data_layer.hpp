// Data: reads Datum records from an LMDB (data_param.source) in key order on the prefetch thread,
// transforms them (transform_param) and outputs batches of data_param.batch_size.
// Legend: N batch size, C channels, H/W image height/width (crop_size if set).
#ifndef CAFFE_LAYERS_DATA_LAYER_HPP_
#define CAFFE_LAYERS_DATA_LAYER_HPP_

#include <cstdint>
#include <memory>

#include "caffe/io/db.hpp"
#include "caffe/layers/base_data_layer.hpp"

namespace caffe {

/// No bottoms; top[0] (N, C, H, W) transformed images, optional top[1] (N) labels. Batches are
/// shaped after their first record. At the end of the database reading wraps to the first record.
/// With several solvers (Caffe::solver_count() S > 1) the TRAIN layer of rank r keeps records
/// r, r+S, r+2S, ... of the endless record stream, so S solvers at batch N see the records of one
/// solver at batch S x N; TEST layers read every record. data_param.rand_skip R > 0 skips a
/// random number in [0, R) of records at setup. Supports exact resume (SaveCursor/RestoreCursor).
/// Records may hold raw values or encoded images (JPEG/PNG, decoded with OpenCV as
/// transform_param's force_color/force_gray say); data_param.threads workers parse, decode and
/// transform each batch (0: automatic), with the same output for any number of them.
template <typename Dtype>
class DataLayer : public BasePrefetchingDataLayer<Dtype> {
 public:
  explicit DataLayer(const LayerParameter& param) : BasePrefetchingDataLayer<Dtype>(param) {}
  ~DataLayer() override;
  void DataLayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  const char* type() const override { return "Data"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int MinTopBlobs() const override { return 1; }
  int MaxTopBlobs() const override { return 2; }

 protected:
  void load_batch(Batch<Dtype>* batch) override;
  /// key: the next record of the stream; records_read: the records passed so far in the stream,
  /// those of other solvers' shards included (it decides which rank owns the next record).
  DataCursor ReaderPosition() const override;
  void SeekReader(const DataCursor& cursor) override;

  /// Whether the record at the stream position belongs to another solver.
  bool Skip() const;
  /// Moves to the next record, wrapping to the first at the end.
  void Next();

  std::unique_ptr<db::DB> db_;
  std::unique_ptr<db::Cursor> cursor_;  // declared after db_: closed before the database
  uint64_t offset_ = 0;                 // position in the record stream
  vector<string> keys_, values_;        // the current batch's records (prefetch thread)
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_DATA_LAYER_HPP_
