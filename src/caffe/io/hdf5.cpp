#include "caffe/io/hdf5.hpp"

#include <sstream>

#include "caffe/io/io.hpp"

namespace caffe {

namespace {

// HDF5 prints its own error stack to stderr on failures we handle ourselves; keep it quiet.
struct SilenceHdf5Errors {
  SilenceHdf5Errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }
};
const SilenceHdf5Errors silence_hdf5_errors;

vector<int> LoadShape(hid_t file_id, const char* name, int min_dim, int max_dim,
                      H5T_class_t* class_) {
  CAFFE_CHECK(H5LTfind_dataset(file_id, name) == 1 || hdf5_path_exists(file_id, name))
      << "HDF5 dataset '" << name << "' not found";
  int ndims = 0;
  CAFFE_CHECK(H5LTget_dataset_ndims(file_id, name, &ndims) >= 0)
      << "cannot read the rank of HDF5 dataset '" << name << "'";
  CAFFE_CHECK(ndims >= min_dim && ndims <= max_dim)
      << "HDF5 dataset '" << name << "' has " << ndims << " axes; expected " << min_dim << " to "
      << max_dim;
  vector<hsize_t> dims(std::max(ndims, 1));
  size_t type_size = 0;
  CAFFE_CHECK(H5LTget_dataset_info(file_id, name, dims.data(), class_, &type_size) >= 0)
      << "cannot read HDF5 dataset info for '" << name << "'";
  CAFFE_CHECK(*class_ == H5T_FLOAT || *class_ == H5T_INTEGER)
      << "HDF5 dataset '" << name << "' holds neither floats nor integers";
  vector<int> shape(ndims);
  for (int i = 0; i < ndims; ++i) shape[i] = static_cast<int>(dims[i]);
  return shape;
}

}  // namespace

template <typename Dtype>
void hdf5_load_nd_dataset(hid_t file_id, const char* name, int min_dim, int max_dim,
                          Blob<Dtype>* blob, bool reshape) {
  H5T_class_t class_;
  vector<int> shape = LoadShape(file_id, name, min_dim, max_dim, &class_);
  if (reshape) {
    blob->Reshape(shape);
  } else {
    CAFFE_CHECK(blob->shape() == shape)
        << "HDF5 dataset '" << name << "' has shape " << ShapeString(shape) << ", the net expects "
        << blob->shape_string();
  }
  herr_t status;
  if (sizeof(Dtype) == sizeof(float)) {
    status =
        H5LTread_dataset_float(file_id, name, reinterpret_cast<float*>(blob->mutable_cpu_data()));
  } else {
    status =
        H5LTread_dataset_double(file_id, name, reinterpret_cast<double*>(blob->mutable_cpu_data()));
  }
  CAFFE_CHECK(status >= 0) << "failed to read HDF5 dataset '" << name << "'";
}

template <typename Dtype>
void hdf5_save_nd_dataset(hid_t file_id, const std::string& name, const Blob<Dtype>& blob,
                          bool write_diff) {
  vector<hsize_t> dims(blob.shape().begin(), blob.shape().end());
  const Dtype* data = write_diff ? blob.cpu_diff() : blob.cpu_data();
  herr_t status;
  if (sizeof(Dtype) == sizeof(float)) {
    status = H5LTmake_dataset_float(file_id, name.c_str(), blob.num_axes(), dims.data(),
                                    reinterpret_cast<const float*>(data));
  } else {
    status = H5LTmake_dataset_double(file_id, name.c_str(), blob.num_axes(), dims.data(),
                                     reinterpret_cast<const double*>(data));
  }
  CAFFE_CHECK(status >= 0) << "failed to write HDF5 dataset '" << name << "'";
}

int hdf5_load_int(hid_t loc_id, const std::string& name) {
  int value = 0;
  CAFFE_CHECK(H5LTread_dataset_int(loc_id, name.c_str(), &value) >= 0)
      << "failed to read HDF5 int dataset '" << name << "'";
  return value;
}

void hdf5_save_int(hid_t loc_id, const std::string& name, int value) {
  hsize_t one = 1;
  CAFFE_CHECK(H5LTmake_dataset_int(loc_id, name.c_str(), 1, &one, &value) >= 0)
      << "failed to write HDF5 int dataset '" << name << "'";
}

std::string hdf5_load_string(hid_t loc_id, const std::string& name) {
  size_t size = 0;
  H5T_class_t class_;
  CAFFE_CHECK(H5LTget_dataset_info(loc_id, name.c_str(), nullptr, &class_, &size) >= 0)
      << "failed to read HDF5 string dataset '" << name << "'";
  std::vector<char> buffer(size + 1, '\0');
  CAFFE_CHECK(H5LTread_dataset_string(loc_id, name.c_str(), buffer.data()) >= 0)
      << "failed to read HDF5 string dataset '" << name << "'";
  return std::string(buffer.data());
}

void hdf5_save_string(hid_t loc_id, const std::string& name, const std::string& value) {
  CAFFE_CHECK(H5LTmake_dataset_string(loc_id, name.c_str(), value.c_str()) >= 0)
      << "failed to write HDF5 string dataset '" << name << "'";
}

bool hdf5_path_exists(hid_t loc_id, const std::string& path) {
  std::string prefix;
  std::istringstream parts(path);
  std::string part;
  while (std::getline(parts, part, '/')) {
    if (part.empty()) continue;
    prefix += (prefix.empty() ? "" : "/") + part;
    if (H5Lexists(loc_id, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
  }
  return !prefix.empty();
}

int hdf5_get_num_links(hid_t loc_id) {
  H5G_info_t info;
  CAFFE_CHECK(H5Gget_info(loc_id, &info) >= 0) << "cannot read an HDF5 group";
  return static_cast<int>(info.nlinks);
}

std::string hdf5_get_name_by_idx(hid_t loc_id, int idx) {
  ssize_t size =
      H5Lget_name_by_idx(loc_id, ".", H5_INDEX_NAME, H5_ITER_NATIVE, idx, nullptr, 0, H5P_DEFAULT);
  CAFFE_CHECK(size >= 0) << "cannot read the name of HDF5 link " << idx;
  std::vector<char> name(size + 1);
  H5Lget_name_by_idx(loc_id, ".", H5_INDEX_NAME, H5_ITER_NATIVE, idx, name.data(), size + 1,
                     H5P_DEFAULT);
  return std::string(name.data());
}

Hdf5File::Hdf5File(const std::string& path, unsigned flags) {
  if (flags == H5F_ACC_RDONLY || flags == H5F_ACC_RDWR) {
    CAFFE_CHECK(FileExists(path)) << "cannot open '" << path << "': no such file";
    CAFFE_CHECK(H5Fis_hdf5(path.c_str()) > 0) << "'" << path << "' is not an HDF5 file";
    id_ = H5Fopen(path.c_str(), flags, H5P_DEFAULT);
  } else {
    id_ = H5Fcreate(path.c_str(), flags, H5P_DEFAULT, H5P_DEFAULT);
  }
  CAFFE_CHECK(id_ >= 0) << "cannot open HDF5 file '" << path << "'";
}

Hdf5File::~Hdf5File() { H5Fclose(id_); }

hid_t hdf5_create_group(hid_t loc_id, const std::string& name) {
  if (H5Lexists(loc_id, name.c_str(), H5P_DEFAULT) > 0) {
    return H5Gopen2(loc_id, name.c_str(), H5P_DEFAULT);
  }
  hid_t create_intermediate = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(create_intermediate, 1);
  hid_t group = H5Gcreate2(loc_id, name.c_str(), create_intermediate, H5P_DEFAULT, H5P_DEFAULT);
  H5Pclose(create_intermediate);
  CAFFE_CHECK(group >= 0) << "cannot create HDF5 group '" << name << "'";
  return group;
}

template void hdf5_load_nd_dataset<float>(hid_t, const char*, int, int, Blob<float>*, bool);
template void hdf5_load_nd_dataset<double>(hid_t, const char*, int, int, Blob<double>*, bool);
template void hdf5_save_nd_dataset<float>(hid_t, const std::string&, const Blob<float>&, bool);
template void hdf5_save_nd_dataset<double>(hid_t, const std::string&, const Blob<double>&, bool);

}  // namespace caffe
