// Reads the golden reference data BVLC Caffe produced (../shared/fixtures/golden/<net>/blobs.h5:
// inputs, forward blobs, backward diffs, param diffs) and compares a net against it, naming every
// blob that drifted and by how much.
#ifndef CAFFE_TEST_GOLDEN_REFERENCE_HPP_
#define CAFFE_TEST_GOLDEN_REFERENCE_HPP_

#include <string>
#include <vector>

#include "caffe/net.hpp"
#include "caffe/util/hdf5.hpp"

namespace caffe {

/// One compared blob: max |ours - BVLC| against max |BVLC|.
struct BlobComparison {
  std::string what;  // e.g. "forward/conv1", "param_diff/ip1/0"
  double max_abs_diff = 0;
  double max_abs_reference = 0;
  bool shapes_match = true;
  bool Within(double relative_tolerance) const {
    return shapes_match && max_abs_diff <= relative_tolerance * max_abs_reference;
  }
};

class GoldenReference {
 public:
  /// Opens <folder>/blobs.h5; throws caffe::Error if it cannot.
  explicit GoldenReference(const std::string& folder);
  hid_t file() const { return file_.id(); }
  /// A JSON string-list attribute of the root group (blob_names, layer_names, layer_types).
  std::vector<std::string> ListAttribute(const std::string& name) const;
  bool HasLoss() const;
  bool Has(const std::string& group, const std::string& name) const;
  /// Loads <group>/<name> (names encoded as the fixture does: '/' -> %2F, '%' -> %25).
  void Load(const std::string& group, const std::string& name, Blob<float>* blob) const;
  /// Compares `data` (of `shape`) with <group>/<name>.
  BlobComparison Compare(const std::string& group, const std::string& name,
                         const std::vector<int>& shape, const float* data) const;
  /// Compares with the dataset at `path` (already encoded); `what` names it in messages.
  BlobComparison CompareDataset(const std::string& path, const std::string& what,
                                const std::vector<int>& shape, const float* data) const;

  /// Fixture dataset names encode '/' and '%'.
  static std::string Encode(const std::string& name);

 private:
  Hdf5File file_;
};

}  // namespace caffe

#endif  // CAFFE_TEST_GOLDEN_REFERENCE_HPP_
