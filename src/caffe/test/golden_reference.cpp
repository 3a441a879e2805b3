#include "caffe/test/golden_reference.hpp"

#include <algorithm>
#include <cmath>

namespace caffe {

GoldenReference::GoldenReference(const std::string& folder)
    : file_(folder + "/blobs.h5", H5F_ACC_RDONLY) {}

std::string GoldenReference::Encode(const std::string& name) {
  std::string encoded;
  for (char c : name) {
    if (c == '%') {
      encoded += "%25";
    } else if (c == '/') {
      encoded += "%2F";
    } else {
      encoded += c;
    }
  }
  return encoded;
}

std::vector<std::string> GoldenReference::ListAttribute(const std::string& name) const {
  hid_t attribute = H5Aopen(file_.id(), name.c_str(), H5P_DEFAULT);
  CAFFE_CHECK(attribute >= 0) << "blobs.h5 has no attribute " << name;
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  char* text = nullptr;
  herr_t status = H5Aread(attribute, type, &text);
  CAFFE_CHECK(status >= 0 && text) << "cannot read attribute " << name;
  std::string json(text);
  H5free_memory(text);
  H5Tclose(type);
  H5Aclose(attribute);
  // A flat JSON list of strings: ["a", "b\"c"].
  std::vector<std::string> items;
  bool in_string = false;
  std::string current;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (!in_string) {
      if (c == '"') {
        in_string = true;
        current.clear();
      }
    } else if (c == '\\' && i + 1 < json.size()) {
      current += json[++i];
    } else if (c == '"') {
      in_string = false;
      items.push_back(current);
    } else {
      current += c;
    }
  }
  return items;
}

bool GoldenReference::HasLoss() const {
  hid_t attribute = H5Aopen(file_.id(), "has_loss", H5P_DEFAULT);
  CAFFE_CHECK(attribute >= 0) << "blobs.h5 has no attribute has_loss";
  int8_t value = 0;
  H5Aread(attribute, H5T_NATIVE_INT8, &value);
  H5Aclose(attribute);
  return value != 0;
}

bool GoldenReference::Has(const std::string& group, const std::string& name) const {
  return hdf5_path_exists(file_.id(), group + "/" + Encode(name));
}

void GoldenReference::Load(const std::string& group, const std::string& name,
                           Blob<float>* blob) const {
  const std::string path = group + "/" + Encode(name);
  hdf5_load_nd_dataset(file_.id(), path.c_str(), 0, kMaxBlobAxes, blob, true);
}

BlobComparison GoldenReference::Compare(const std::string& group, const std::string& name,
                                        const std::vector<int>& shape, const float* data) const {
  return CompareDataset(group + "/" + Encode(name), group + "/" + name, shape, data);
}

BlobComparison GoldenReference::CompareDataset(const std::string& path, const std::string& what,
                                               const std::vector<int>& shape,
                                               const float* data) const {
  BlobComparison result;
  result.what = what;
  Blob<float> reference;
  hdf5_load_nd_dataset(file_.id(), path.c_str(), 0, kMaxBlobAxes, &reference, true);
  // BVLC's 0-d blobs (losses) are stored with shape (); ours are 0-d too.
  result.shapes_match = reference.shape() == shape;
  if (!result.shapes_match) return result;
  const float* expected = reference.cpu_data();
  for (int i = 0; i < reference.count(); ++i) {
    result.max_abs_reference = std::max(result.max_abs_reference, std::fabs(double(expected[i])));
    result.max_abs_diff =
        std::max(result.max_abs_diff, std::fabs(double(expected[i]) - double(data[i])));
  }
  return result;
}

}  // namespace caffe
