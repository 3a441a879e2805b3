#include "caffe/diagnostics/reference_check.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace caffe {

double BlobComparison::relative() const {
  if (max_abs_diff == 0) return 0;
  if (max_abs_reference == 0) return std::numeric_limits<double>::infinity();
  return max_abs_diff / max_abs_reference;
}

bool BlobComparison::Within(double tolerance) const {
  return present && shapes_match && max_abs_diff <= tolerance * max_abs_reference;
}

double BlobComparison::norm_relative() const {
  if (sum_sq_diff == 0) return 0;
  return std::sqrt(sum_sq_diff / sum_sq_reference);
}

ReferenceData::ReferenceData(const string& path) : file_(path, H5F_ACC_RDONLY) {}

string ReferenceData::Encode(const string& name) {
  string encoded;
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

bool ReferenceData::HasGroup(const string& group) const {
  return hdf5_path_exists(file_.id(), group);
}

bool ReferenceData::HasAttribute(const string& name) const {
  return H5Aexists(file_.id(), name.c_str()) > 0;
}

vector<string> ReferenceData::ListAttribute(const string& name) const {
  CAFFE_CHECK(HasAttribute(name)) << "the reference file has no attribute '" << name << "'";
  hid_t attribute = H5Aopen(file_.id(), name.c_str(), H5P_DEFAULT);
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  char* text = nullptr;
  const herr_t status = H5Aread(attribute, type, &text);
  H5Tclose(type);
  H5Aclose(attribute);
  CAFFE_CHECK(status >= 0 && text) << "cannot read attribute '" << name << "' as a string";
  const string json(text);
  H5free_memory(text);
  // A flat JSON list of strings: ["a", "b\"c"].
  vector<string> items;
  bool in_string = false;
  string current;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
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

bool ReferenceData::Has(const string& group, const string& name) const {
  return hdf5_path_exists(file_.id(), group + "/" + Encode(name));
}

void ReferenceData::Load(const string& group, const string& name, Blob<float>* blob) const {
  const string path = group + "/" + Encode(name);
  hdf5_load_nd_dataset(file_.id(), path.c_str(), 0, kMaxBlobAxes, blob, true);
}

BlobComparison ReferenceData::CompareDataset(const string& path, const string& what,
                                             const vector<int>& shape, const float* data) const {
  BlobComparison result;
  result.what = what;
  if (!hdf5_path_exists(file_.id(), path)) {
    result.present = false;
    return result;
  }
  Blob<float> reference;
  hdf5_load_nd_dataset(file_.id(), path.c_str(), 0, kMaxBlobAxes, &reference, true);
  // BVLC's 0-d blobs (losses) are stored with shape (); ours are 0-d too.
  result.shapes_match = reference.shape() == shape;
  if (!result.shapes_match) return result;
  const float* expected = reference.cpu_data();
  for (int i = 0; i < reference.count(); ++i) {
    result.max_abs_reference = std::max(result.max_abs_reference, std::fabs(double(expected[i])));
    const double diff = double(expected[i]) - double(data[i]);
    result.max_abs_diff = std::max(result.max_abs_diff, std::fabs(diff));
    result.sum_sq_diff += diff * diff;
    result.sum_sq_reference += double(expected[i]) * expected[i];
  }
  return result;
}

void FeedReferenceInputs(Net<float>* net, const ReferenceData& reference) {
  for (int index : net->input_blob_indices()) {
    const string& name = net->blob_names()[index];
    CAFFE_CHECK(reference.Has("input", name))
        << "the reference file has no input for the net's input blob '" << name << "'";
    Blob<float> input;
    reference.Load("input", name, &input);
    CAFFE_CHECK(input.shape() == net->blobs()[index]->shape())
        << "the reference input '" << name << "' has shape " << input.shape_string()
        << ", the net's blob has " << net->blobs()[index]->shape_string();
    net->blobs()[index]->CopyFrom(input);
  }
}

vector<BlobComparison> CompareNetWithReference(Net<float>* net, const ReferenceData& reference) {
  CAFFE_CHECK(reference.HasGroup("forward"))
      << "the reference file has no 'forward' group; expected the layout input/, forward/, "
         "backward/, param_diff/";
  FeedReferenceInputs(net, reference);
  vector<BlobComparison> comparisons;
  net->Forward();
  for (size_t i = 0; i < net->blobs().size(); ++i) {
    const Blob<float>& blob = *net->blobs()[i];
    const string& name = net->blob_names()[i];
    comparisons.push_back(reference.CompareDataset("forward/" + ReferenceData::Encode(name),
                                                   "forward/" + name, blob.shape(),
                                                   blob.cpu_data()));
  }
  if (!reference.HasGroup("backward") && !reference.HasGroup("param_diff")) return comparisons;
  net->ClearParamDiffs();
  net->Backward();
  for (size_t i = 0; i < net->blobs().size() && reference.HasGroup("backward"); ++i) {
    const Blob<float>& blob = *net->blobs()[i];
    const string& name = net->blob_names()[i];
    comparisons.push_back(reference.CompareDataset("backward/" + ReferenceData::Encode(name),
                                                   "backward/" + name, blob.shape(),
                                                   blob.cpu_diff()));
  }
  for (size_t layer_id = 0; layer_id < net->layers().size(); ++layer_id) {
    const string& layer_name = net->layer_names()[layer_id];
    const auto& params = net->layers()[layer_id]->blobs();
    for (size_t j = 0; j < params.size(); ++j) {
      const string index = std::to_string(j);
      comparisons.push_back(reference.CompareDataset(
          "param_diff/" + ReferenceData::Encode(layer_name) + "/" + index,
          "param_diff/" + layer_name + "/" + index, params[j]->shape(), params[j]->cpu_diff()));
    }
  }
  return comparisons;
}

}  // namespace caffe
