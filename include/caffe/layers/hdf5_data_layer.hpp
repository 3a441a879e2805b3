// HDF5Data: reads batches of rows from HDF5 files, for data that is not images (arbitrary
// float tensors, multi-dimensional targets). Each top is the dataset of the same name, read from
// every file; the files are listed in a text file. The whole current file is held in memory.
// Legend: R rows in the current file (the first axis of every dataset), B batch_size.
#ifndef CAFFE_LAYERS_HDF5_DATA_LAYER_HPP_
#define CAFFE_LAYERS_HDF5_DATA_LAYER_HPP_

#include <cstdint>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// No bottoms; top[j] (B, d_1, ..., d_k) holds B consecutive rows of the dataset named like the
/// top, of shape (R, d_1, ..., d_k) in every file. hdf5_data_param.source is a text file of HDF5
/// paths (whitespace-separated, relative to the working directory); batch_size (required, >= 1);
/// shuffle (false) shuffles the file order at setup and at every wrap-around, and the row order
/// of every loaded file, from Caffe's random generator. Rows run on into the next file and wrap
/// from the last file to the first. With S > 1 solvers (TRAIN), solver r keeps the rows at
/// stream positions r, r + S, ... and skips the others, as BVLC does. Backward does nothing.
template <typename Dtype>
class HDF5DataLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "HDF5Data"; }
  int ExactNumBottomBlobs() const override { return 0; }
  int MinTopBlobs() const override { return 1; }
  /// Reads the file list and the first file, and shapes the tops; throws caffe::Error naming the
  /// file (list or HDF5) or the dataset at fault.
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// The tops keep the shape set up from the first file.
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override {}

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override {}

  /// Loads every top's dataset from `filename` into hdf_blobs_ and resets the row permutation.
  void LoadHDF5FileData(const std::string& filename);
  /// Whether this solver skips the row at the current stream position.
  bool Skip() const;
  /// Advances to the next row, loading the next file (or wrapping) at the end of this one.
  void Next();

  std::vector<std::string> hdf_filenames_;
  int num_files_ = 0;
  int current_file_ = 0;
  int current_row_ = 0;
  std::vector<shared_ptr<Blob<Dtype>>> hdf_blobs_;  // the current file's datasets, one per top
  std::vector<int> data_permutation_;               // row order within the current file
  std::vector<int> file_permutation_;               // file order
  std::vector<std::vector<int>> row_shapes_;        // per top: (d_1, ..., d_k) of the first file
  std::string first_filename_;                      // the file read at setup
  uint64_t offset_ = 0;                             // stream position, for solver sharding
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_HDF5_DATA_LAYER_HPP_
