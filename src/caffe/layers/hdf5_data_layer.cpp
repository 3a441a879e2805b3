#include "caffe/layers/hdf5_data_layer.hpp"

#include <algorithm>
#include <climits>
#include <fstream>
#include <numeric>

#include "caffe/io/hdf5.hpp"

namespace caffe {

template <typename Dtype>
void HDF5DataLayer<Dtype>::LoadHDF5FileData(const std::string& filename) {
  DLOG(INFO) << "Loading HDF5 file: " << filename;
  const int top_size = this->layer_param_.top_size();
  hdf_blobs_.resize(top_size);
  try {
    Hdf5File file(filename, H5F_ACC_RDONLY);
    for (int j = 0; j < top_size; ++j) {
      hdf_blobs_[j] = std::make_shared<Blob<Dtype>>();
      hdf5_load_nd_dataset(file.id(), this->layer_param_.top(j).c_str(), 1, INT_MAX,
                           hdf_blobs_[j].get(), true);
    }
  } catch (const Error& error) {
    LAYER_THROW() << "HDF5 file '" << filename << "' (listed in '"
                  << this->layer_param_.hdf5_data_param().source() << "'): " << error.what();
  }
  const int num = hdf_blobs_[0]->shape(0);
  LAYER_CHECK_GT(num, 0) << "HDF5 file '" << filename << "': dataset '" << this->layer_param_.top(0)
                         << "' has no rows";
  for (int j = 0; j < top_size; ++j) {
    LAYER_CHECK_EQ(hdf_blobs_[j]->shape(0), num)
        << "HDF5 file '" << filename << "': every dataset needs the same number of rows; '"
        << this->layer_param_.top(j) << "' " << hdf_blobs_[j]->shape_string() << " vs. '"
        << this->layer_param_.top(0) << "' " << hdf_blobs_[0]->shape_string();
    if (j < static_cast<int>(row_shapes_.size())) {
      const vector<int> row_shape(hdf_blobs_[j]->shape().begin() + 1, hdf_blobs_[j]->shape().end());
      LAYER_CHECK(row_shape == row_shapes_[j])
          << "HDF5 file '" << filename << "': dataset '" << this->layer_param_.top(j)
          << "' has shape " << hdf_blobs_[j]->shape_string() << ", but its rows were "
          << ShapeString(row_shapes_[j]) << " in the first file read, '" << first_filename_ << "'";
    }
  }
  data_permutation_.resize(num);
  std::iota(data_permutation_.begin(), data_permutation_.end(), 0);
  if (this->layer_param_.hdf5_data_param().shuffle()) {
    std::shuffle(data_permutation_.begin(), data_permutation_.end(), Caffe::rng_stream());
  }
  DLOG(INFO) << "Loaded " << num << " rows from " << filename;
}

template <typename Dtype>
void HDF5DataLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  // HDF5 data is generic (not images), so there is nothing to crop, mirror or subtract.
  LAYER_CHECK(!this->layer_param_.has_transform_param())
      << "HDF5Data does not transform data; remove transform_param";
  LAYER_CHECK_EQ(this->layer_param_.top_size(), static_cast<int>(top.size()))
      << "each top is the HDF5 dataset of the same name, so every top needs a name in the layer "
         "parameters";
  const HDF5DataParameter& param = this->layer_param_.hdf5_data_param();
  LAYER_CHECK_GT(param.batch_size(), 0u) << "hdf5_data_param.batch_size must be at least 1";
  const string& source = param.source();
  LAYER_CHECK(!source.empty()) << "hdf5_data_param.source (a text file listing HDF5 files) is "
                                  "not set";
  LOG(INFO) << "Loading list of HDF5 filenames from: " << source;
  std::ifstream source_file(source);
  LAYER_CHECK(source_file.is_open())
      << "cannot open hdf5_data_param.source '" << source << "' (the list of HDF5 files)";
  hdf_filenames_.clear();
  string filename;
  while (source_file >> filename) hdf_filenames_.push_back(filename);
  num_files_ = static_cast<int>(hdf_filenames_.size());
  LAYER_CHECK_GE(num_files_, 1) << "hdf5_data_param.source '" << source << "' lists no HDF5 files";
  LOG(INFO) << "Number of HDF5 files: " << num_files_;

  file_permutation_.resize(num_files_);
  std::iota(file_permutation_.begin(), file_permutation_.end(), 0);
  if (param.shuffle()) {
    std::shuffle(file_permutation_.begin(), file_permutation_.end(), Caffe::rng_stream());
  }
  current_file_ = 0;
  row_shapes_.clear();
  first_filename_ = hdf_filenames_[file_permutation_[current_file_]];
  LoadHDF5FileData(first_filename_);
  current_row_ = 0;
  offset_ = 0;

  for (size_t j = 0; j < top.size(); ++j) {
    row_shapes_.emplace_back(hdf_blobs_[j]->shape().begin() + 1, hdf_blobs_[j]->shape().end());
    vector<int> top_shape = hdf_blobs_[j]->shape();
    top_shape[0] = static_cast<int>(param.batch_size());
    top[j]->Reshape(top_shape);
  }
}

template <typename Dtype>
bool HDF5DataLayer<Dtype>::Skip() const {
  // Only one solver runs the test nets, so it must see every row.
  if (this->phase_ == TEST) return false;
  const uint64_t size = Caffe::solver_count();
  const uint64_t rank = Caffe::solver_rank();
  return offset_ % size != rank;
}

template <typename Dtype>
void HDF5DataLayer<Dtype>::Next() {
  if (++current_row_ == hdf_blobs_[0]->shape(0)) {
    if (num_files_ > 1) {
      if (++current_file_ == num_files_) {
        current_file_ = 0;
        if (this->layer_param_.hdf5_data_param().shuffle()) {
          std::shuffle(file_permutation_.begin(), file_permutation_.end(), Caffe::rng_stream());
        }
        DLOG(INFO) << "Looping around to first file.";
      }
      LoadHDF5FileData(hdf_filenames_[file_permutation_[current_file_]]);
    }
    current_row_ = 0;
    if (this->layer_param_.hdf5_data_param().shuffle()) {
      std::shuffle(data_permutation_.begin(), data_permutation_.end(), Caffe::rng_stream());
    }
  }
  ++offset_;
}

template <typename Dtype>
void HDF5DataLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int batch_size = static_cast<int>(this->layer_param_.hdf5_data_param().batch_size());
  for (int i = 0; i < batch_size; ++i) {
    while (Skip()) Next();
    for (size_t j = 0; j < top.size(); ++j) {
      const int row_size = top[j]->count(1);
      caffe_copy(row_size, hdf_blobs_[j]->cpu_data() + data_permutation_[current_row_] * row_size,
                 top[j]->mutable_cpu_data() + i * row_size);
    }
    Next();
  }
}

INSTANTIATE_CLASS(HDF5DataLayer);
REGISTER_LAYER_CLASS(HDF5Data);

}  // namespace caffe
