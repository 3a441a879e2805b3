// HDF5 helpers for weights (.caffemodel.h5), solver snapshots (.solverstate.h5) and reference data:
// N-D float/double datasets to and from Blobs, and scalar ints and strings. Errors name the file
// or dataset.
#ifndef CAFFE_IO_HDF5_HPP_
#define CAFFE_IO_HDF5_HPP_

#include <hdf5.h>
#include <hdf5_hl.h>

#include <string>
#include <vector>

#include "caffe/blob.hpp"

namespace caffe {

/// Reads dataset `name` into `blob` (reshaping it if `reshape`, else requiring the same shape).
/// The dataset must have between min_dim and max_dim axes.
template <typename Dtype>
void hdf5_load_nd_dataset(hid_t file_id, const char* name, int min_dim, int max_dim,
                          Blob<Dtype>* blob, bool reshape = false);
/// Writes the blob's data (or diff) as dataset `name`.
template <typename Dtype>
void hdf5_save_nd_dataset(hid_t file_id, const std::string& name, const Blob<Dtype>& blob,
                          bool write_diff = false);

int hdf5_load_int(hid_t loc_id, const std::string& name);
void hdf5_save_int(hid_t loc_id, const std::string& name, int value);
std::string hdf5_load_string(hid_t loc_id, const std::string& name);
void hdf5_save_string(hid_t loc_id, const std::string& name, const std::string& value);
/// Whether a link (group or dataset) exists at `path`, checking each component.
bool hdf5_path_exists(hid_t loc_id, const std::string& path);

int hdf5_get_num_links(hid_t loc_id);
std::string hdf5_get_name_by_idx(hid_t loc_id, int idx);

/// Owns an open HDF5 file; throws caffe::Error naming the path when it cannot be opened.
class Hdf5File {
 public:
  /// flags: H5F_ACC_RDONLY to read, H5F_ACC_TRUNC to create.
  Hdf5File(const std::string& path, unsigned flags);
  ~Hdf5File();
  hid_t id() const { return id_; }

 private:
  hid_t id_;
  DISABLE_COPY_AND_ASSIGN(Hdf5File);
};

/// Creates (or opens) group `name` under `loc_id`, making intermediate groups for names with '/'.
hid_t hdf5_create_group(hid_t loc_id, const std::string& name);

}  // namespace caffe

#endif  // CAFFE_IO_HDF5_HPP_
