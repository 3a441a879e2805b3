// ImageData: reads image files named by a list file ("path label" per line) on the prefetch
// thread, resizes and transforms them (transform_param) and outputs batches of
// image_data_param.batch_size with their labels. Needs OpenCV to decode the images.
// Legend: N batch size, C channels (3, or 1 with is_color: false), H/W image height/width
// (new_height/new_width if set, crop_size if set).
#ifndef CAFFE_LAYERS_IMAGE_DATA_LAYER_HPP_
#define CAFFE_LAYERS_IMAGE_DATA_LAYER_HPP_

#include <cstdint>
#include <string>
#include <vector>

#include "caffe/io/image_io.hpp"
#include "caffe/layers/base_data_layer.hpp"

namespace caffe {

/// No bottoms; top[0] (N, C, H, W) transformed images, top[1] (N) labels. Image i of the list is
/// root_folder + path (concatenated as written, as BVLC does), resized to new_height x new_width
/// when both are set, in colour unless is_color is false. Lines are read in list order, wrapping at
/// the end; with shuffle: true in a fresh random order at setup and at every wrap. rand_skip R > 0
/// skips a random number in [0, R) of lines at setup. With several solvers
/// (Caffe::solver_count() S > 1) the TRAIN layer of rank r owns lines r, r+S, r+2S, ... of the
/// list and walks (and shuffles) only those; TEST layers read every line. image_data_param.threads
/// workers decode and transform each batch. Supports exact resume (SaveCursor/RestoreCursor): the
/// saved position holds the epoch, the place in it and the shuffle seed.
template <typename Dtype>
class ImageDataLayer : public BasePrefetchingDataLayer<Dtype> {
 public:
  explicit ImageDataLayer(const LayerParameter& param) : BasePrefetchingDataLayer<Dtype>(param) {}
  ~ImageDataLayer() override;
  void DataLayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  const char* type() const override { return "ImageData"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int ExactNumTopBlobs() const override { return 2; }

 protected:
  void load_batch(Batch<Dtype>* batch) override;
  /// key: "epoch E position P of N images (shuffle seed S)"; records_read: images read so far.
  DataCursor ReaderPosition() const override;
  void SeekReader(const DataCursor& cursor) override;

 private:
  /// order_ for epoch_: the share in list order, or shuffled from (shuffle_seed_, epoch_).
  void BuildOrder();
  /// Moves to the next image, wrapping (and reshuffling) at the end of the share.
  void Next();
  /// root_folder + the path of `entry`.
  string ImagePath(const ImageListEntry& entry) const;

  vector<ImageListEntry> lines_;  // this solver's share of the list, in list order
  vector<int> order_;             // indices into lines_ in this epoch's reading order
  size_t position_ = 0;           // next index into order_
  uint64_t epoch_ = 0;
  uint32_t shuffle_seed_ = 0;
  uint64_t records_read_ = 0;
  vector<const ImageListEntry*> batch_lines_;  // the current batch (prefetch thread)
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_IMAGE_DATA_LAYER_HPP_
