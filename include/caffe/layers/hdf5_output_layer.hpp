// HDF5Output: writes a net's data and labels (or predictions) to an HDF5 file, e.g. to save
// features computed by a net for later use by HDF5Data.
#ifndef CAFFE_LAYERS_HDF5_OUTPUT_LAYER_HPP_
#define CAFFE_LAYERS_HDF5_OUTPUT_LAYER_HPP_

#include <memory>
#include <string>

#include "caffe/blob.hpp"
#include "caffe/io/hdf5.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// The names of the two datasets the layer writes.
constexpr const char* kHDF5DataDatasetName = "data";
constexpr const char* kHDF5LabelDatasetName = "label";

/// bottom[0] (N, ...) and bottom[1] (N, ...), at most 4 axes each; no tops. Setup creates (or
/// truncates) hdf5_output_param.file_name; Forward writes bottom[0] as dataset "data" and
/// bottom[1] as "label", each with BVLC's 4-D layout (N, C, H, W) (missing trailing axes are 1),
/// float or double like the net. As in BVLC a file holds one batch: a second Forward is an error.
/// The file is closed when the layer is destroyed. Backward does nothing.
template <typename Dtype>
class HDF5OutputLayer final : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "HDF5Output"; }
  int ExactNumBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 0; }
  /// Creates the file; throws caffe::Error naming it when it cannot.
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {}
  const std::string& file_name() const { return file_name_; }

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override {}

 private:
  /// Writes data_blob_ and label_blob_ into the file.
  void SaveBlobs();

  std::string file_name_;
  std::unique_ptr<Hdf5File> file_;
  Blob<Dtype> data_blob_, label_blob_;  // 4-D copies of the bottoms
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_HDF5_OUTPUT_LAYER_HPP_
