// Checking a net against reference results stored in HDF5 with the layout of the golden fixtures
// (../shared/fixtures/golden/*/blobs.h5): input/<blob> (fed to the net's inputs), forward/<blob>,
// backward/<blob> (blob diffs) and param_diff/<layer>/<i>, names encoding '/' as %2F and '%' as
// %25. `caffe compare` and the golden tests use this to show that a net ported from BVLC Caffe
// gives BVLC's numbers.
#ifndef CAFFE_DIAGNOSTICS_REFERENCE_CHECK_HPP_
#define CAFFE_DIAGNOSTICS_REFERENCE_CHECK_HPP_

#include <string>
#include <vector>

#include "caffe/io/hdf5.hpp"
#include "caffe/net.hpp"

namespace caffe {

/// One blob against its reference: max |ours - reference| and max |reference|.
struct BlobComparison {
  string what;               // "forward/conv1", "backward/data", "param_diff/ip1/0"
  bool present = true;       // the reference has this dataset
  bool shapes_match = true;  // and its shape equals ours
  double max_abs_diff = 0;
  double max_abs_reference = 0;
  double sum_sq_diff = 0;       // sum (ours - ref)^2
  double sum_sq_reference = 0;  // sum ref^2
  /// max_abs_diff / max_abs_reference (0 when both are 0).
  double relative() const;
  /// |ours - ref| / |ref| in the 2-norm (0 when both are 0): a few elements that differ wholly
  /// (a max-pooling window that picked another maximum) weigh by their share of the blob.
  double norm_relative() const;
  /// Present, same shape, and max |ours - ref| <= tolerance * max |ref|.
  bool Within(double tolerance) const;
};

/// An open reference file.
class ReferenceData {
 public:
  /// Throws caffe::Error naming the path if it is not a readable HDF5 file.
  explicit ReferenceData(const string& path);
  hid_t file() const { return file_.id(); }
  bool HasGroup(const string& group) const;
  bool HasAttribute(const string& name) const;
  /// A root attribute holding a JSON list of strings (blob_names, layer_names, layer_types).
  vector<string> ListAttribute(const string& name) const;
  bool Has(const string& group, const string& name) const;
  /// Loads <group>/<encoded name> into `blob`, reshaping it.
  void Load(const string& group, const string& name, Blob<float>* blob) const;
  /// Compares `data` (of `shape`) with the dataset at `path` (already encoded).
  BlobComparison CompareDataset(const string& path, const string& what, const vector<int>& shape,
                                const float* data) const;
  /// The fixture's dataset-name encoding: '%' -> %25, '/' -> %2F.
  static string Encode(const string& name);

 private:
  Hdf5File file_;
};

/// Copies the reference inputs (input/<blob>) into the net's input blobs; throws caffe::Error
/// naming the blob when one is missing or its shape differs from the net's.
void FeedReferenceInputs(Net<float>* net, const ReferenceData& reference);

/// Feeds the reference inputs to the net's input blobs (the shapes must match), runs forward,
/// and, where the reference holds diffs, backward; returns the comparison of every blob's data,
/// every blob's diff and every parameter's diff that the reference holds.
vector<BlobComparison> CompareNetWithReference(Net<float>* net, const ReferenceData& reference);

}  // namespace caffe

#endif  // CAFFE_DIAGNOSTICS_REFERENCE_CHECK_HPP_
