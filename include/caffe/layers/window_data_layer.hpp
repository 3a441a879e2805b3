// WindowData: R-CNN's data layer. Reads a window file that lists images and, per image, windows
// (boxes) with a class and their overlap with the ground truth; each batch samples foreground
// windows (overlap >= fg_threshold, labelled with their class) and background windows (overlap <
// bg_threshold, labelled 0), cuts each out of its image with context padding, warps it to
// crop_size x crop_size and subtracts the mean, as BVLC's WindowData does. Needs OpenCV.
// Legend: N batch size, C channels (3: images are read in colour), S crop_size.
#ifndef CAFFE_LAYERS_WINDOW_DATA_LAYER_HPP_
#define CAFFE_LAYERS_WINDOW_DATA_LAYER_HPP_

#include <cstdint>
#include <string>
#include <vector>

#include "caffe/layers/base_data_layer.hpp"

namespace caffe {

/// No bottoms; top[0] (N, C, S, S) warped windows, top[1] (N) labels.
///
/// The window file (window_data_param.source), repeated per image:
///     # <image index>
///     <image path>            (root_folder + path, concatenated as written)
///     <channels>
///     <height>
///     <width>
///     <number of windows>
///     <class> <overlap> <x1> <y1> <x2> <y2>     (one line per window; corners inclusive)
///
/// A batch holds N - F background windows then F = floor(N * fg_fraction) foreground ones, each
/// drawn uniformly. A window is widened by context_pad pixels on each side of its warped size
/// (crop_mode "square" first makes it square around its centre); the part outside the image is
/// left at 0 (after the mean) and the rest is warped bilinearly into place; with mirror a coin
/// flip mirrors it (its padding too). Pixels become (x - mean) * scale with transform_param's
/// mean_file (S x S windows at its centre) or mean_value, and scale; crop_size (required),
/// mirror, scale and mean come from transform_param (old nets' window_data_param copies are
/// moved there). Exact resume: the saved position is the batch count and the sampling seed.
template <typename Dtype>
class WindowDataLayer : public BasePrefetchingDataLayer<Dtype> {
 public:
  explicit WindowDataLayer(const LayerParameter& param) : BasePrefetchingDataLayer<Dtype>(param) {}
  ~WindowDataLayer() override;
  void DataLayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  const char* type() const override { return "WindowData"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int ExactNumTopBlobs() const override { return 2; }

  /// One window of the file.
  struct Window {
    int image = 0;  // index into the file's images
    int label = 0;  // the class; 0 for background windows
    float overlap = 0;
    int x1 = 0, y1 = 0, x2 = 0, y2 = 0;
  };

 protected:
  void load_batch(Batch<Dtype>* batch) override;
  /// key: "batch B (sampling seed S)"; records_read: windows sampled so far.
  DataCursor ReaderPosition() const override;
  void SeekReader(const DataCursor& cursor) override;

 private:
  struct Image {
    string path;  // as written in the file
    int channels = 0, height = 0, width = 0;
    Datum encoded;  // the file's bytes with cache_images
  };
  /// Parses the window file into images_, fg_windows_ and bg_windows_.
  void ReadWindowFile(const string& source);
  /// The raw pixels of image `index` (decoded from the cache, or read from its file).
  void LoadImage(int index, Datum* raw) const;
  /// Warps `window` of `raw` into item `item` of `data`.
  void WarpWindow(const Window& window, const Datum& raw, bool mirror, int item, Dtype* data) const;

  vector<Image> images_;
  vector<Window> fg_windows_, bg_windows_;
  int crop_size_ = 0;
  int channels_ = 0;
  vector<Dtype> mean_;  // the mean file's C x mean_size_ x mean_size_ values, if any
  int mean_size_ = 0;
  uint32_t seed_ = 0;
  uint64_t batches_ = 0;  // batches sampled so far
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_WINDOW_DATA_LAYER_HPP_
