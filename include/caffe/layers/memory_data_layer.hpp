// MemoryData: serves batches from arrays the caller owns (Reset) or from Datum records it adds
// (AddDatumVector), for feeding a net from a program (pycaffe's set_input_arrays) without files.
// Legend: B batch_size, C channels, H height, W width; n items given.
#ifndef CAFFE_LAYERS_MEMORY_DATA_LAYER_HPP_
#define CAFFE_LAYERS_MEMORY_DATA_LAYER_HPP_

#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layers/base_data_layer.hpp"
#include "caffe/proto/caffe.pb.h"

namespace caffe {

/// No bottoms; top[0] (B, C, H, W) data and top[1] labels: (B) after setup, (B, 1, 1, 1) after
/// Forward, as in BVLC. memory_data_param: batch_size, channels, height, width (all required,
/// >= 1). Forward points the tops at items [pos, pos + B) of the arrays (no copy) and advances
/// pos by B, wrapping at n. Backward does nothing.
template <typename Dtype>
class MemoryDataLayer final : public BaseDataLayer<Dtype> {
 public:
  using BaseDataLayer<Dtype>::BaseDataLayer;
  const char* type() const override { return "MemoryData"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int ExactNumTopBlobs() const override { return 2; }
  void DataLayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

  /// Transforms the records with transform_param into an internal copy and serves them; the
  /// previous records must all have been served. Throws caffe::Error when `datum_vector` is
  /// empty, its size is not a multiple of B, or a record does not fit (C, H, W).
  void AddDatumVector(const std::vector<Datum>& datum_vector);
  /// Serves n items from `data` (n x C x H x W values) and `labels` (n values), which the caller
  /// keeps alive and unchanged while the layer uses them; no transformation is applied. Throws
  /// caffe::Error when a pointer is null or n is not a positive multiple of B.
  void Reset(Dtype* data, Dtype* labels, int n);
  /// Changes B; the added records must all have been served, and B must divide the n items
  /// being served.
  void set_batch_size(int new_size);

  int batch_size() const { return batch_size_; }
  int channels() const { return channels_; }
  int height() const { return height_; }
  int width() const { return width_; }

 protected:
  /// Throws caffe::Error if neither Reset nor AddDatumVector has given data.
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

  int batch_size_ = 0, channels_ = 0, height_ = 0, width_ = 0;
  int size_ = 0;  // C * H * W
  Dtype* data_ = nullptr;
  Dtype* labels_ = nullptr;
  int n_ = 0;                             // items in data_
  int pos_ = 0;                           // first item of the next batch
  Blob<Dtype> added_data_, added_label_;  // the records of AddDatumVector
  bool has_new_data_ = false;             // AddDatumVector's records are not all served yet
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_MEMORY_DATA_LAYER_HPP_
