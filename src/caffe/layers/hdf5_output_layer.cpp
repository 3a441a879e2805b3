#include "caffe/layers/hdf5_output_layer.hpp"

namespace caffe {

template <typename Dtype>
void HDF5OutputLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  file_name_ = this->layer_param_.hdf5_output_param().file_name();
  LAYER_CHECK(!file_name_.empty()) << "hdf5_output_param.file_name is not set";
  try {
    file_ = std::make_unique<Hdf5File>(file_name_, H5F_ACC_TRUNC);
  } catch (const Error& error) {
    LAYER_THROW() << "cannot create hdf5_output_param.file_name: " << error.what();
  }
}

template <typename Dtype>
void HDF5OutputLayer<Dtype>::SaveBlobs() {
  LOG(INFO) << "Saving HDF5 file " << file_name_;
  // BVLC creates the datasets afresh on every forward, so a second batch cannot be written.
  LAYER_CHECK(!hdf5_path_exists(file_->id(), kHDF5DataDatasetName))
      << "HDF5 file '" << file_name_ << "' already holds the '" << kHDF5DataDatasetName << "' and '"
      << kHDF5LabelDatasetName << "' datasets of an earlier Forward; this layer "
      << "writes one batch per file, as in BVLC";
  try {
    hdf5_save_nd_dataset(file_->id(), kHDF5DataDatasetName, data_blob_);
    hdf5_save_nd_dataset(file_->id(), kHDF5LabelDatasetName, label_blob_);
  } catch (const Error& error) {
    LAYER_THROW() << "HDF5 file '" << file_name_ << "': " << error.what();
  }
  // Make the batch visible to readers while the layer still holds the file open.
  H5Fflush(file_->id(), H5F_SCOPE_LOCAL);
  LOG(INFO) << "Successfully saved " << data_blob_.num() << " rows";
}

template <typename Dtype>
void HDF5OutputLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  for (int i = 0; i < 2; ++i) {
    LAYER_CHECK(bottom[i]->num_axes() >= 1 && bottom[i]->num_axes() <= 4)
        << "bottom[" << i << "] must have 1 to 4 axes (it is written as (N, C, H, W)); got "
        << bottom[i]->shape_string();
  }
  LAYER_CHECK_EQ(bottom[0]->num(), bottom[1]->num())
      << "data (bottom[0] " << bottom[0]->shape_string() << ") and label (bottom[1] "
      << bottom[1]->shape_string() << ") must have the same batch size";
  data_blob_.Reshape(bottom[0]->num(), bottom[0]->channels(), bottom[0]->height(),
                     bottom[0]->width());
  label_blob_.Reshape(bottom[1]->num(), bottom[1]->channels(), bottom[1]->height(),
                      bottom[1]->width());
  caffe_copy(bottom[0]->count(), bottom[0]->cpu_data(), data_blob_.mutable_cpu_data());
  caffe_copy(bottom[1]->count(), bottom[1]->cpu_data(), label_blob_.mutable_cpu_data());
  SaveBlobs();
}

INSTANTIATE_CLASS(HDF5OutputLayer);
REGISTER_LAYER_CLASS(HDF5Output);

}  // namespace caffe
