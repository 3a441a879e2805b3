// Blob: an N-D array of values (data) and their gradients (diff), each in a SyncedMemory. Shapes
// are listed outermost axis first; the legacy 4-D accessors read (num, channels, height, width).
#ifndef CAFFE_BLOB_HPP_
#define CAFFE_BLOB_HPP_

#include <climits>
#include <string>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/memory/syncedmem.hpp"
#include "caffe/proto/caffe.pb.h"

namespace caffe {

/// Blobs have at most this many axes (as in BVLC).
constexpr int kMaxBlobAxes = 32;

template <typename Dtype>
class Blob {
 public:
  Blob() = default;
  explicit Blob(const vector<int>& shape) { Reshape(shape); }
  /// Legacy 4-D constructor.
  Blob(int num, int channels, int height, int width) { Reshape(num, channels, height, width); }

  /// Changes the shape; memory is reallocated only when the new count exceeds the capacity.
  /// Throws caffe::Error for a negative dimension or a count that overflows int.
  void Reshape(const vector<int>& shape);
  void Reshape(const BlobShape& shape);
  void Reshape(int num, int channels, int height, int width);
  void ReshapeLike(const Blob& other) { Reshape(other.shape()); }

  /// "2 3 4 5 (120)"; a 0-axis blob prints "(1)".
  string shape_string() const;
  const vector<int>& shape() const { return shape_; }
  /// Dimension of an axis; negative indices count from the end.
  int shape(int index) const { return shape_[CanonicalAxisIndex(index)]; }
  int num_axes() const { return static_cast<int>(shape_.size()); }
  int count() const { return count_; }
  /// Product of the dimensions of axes [start_axis, end_axis).
  int count(int start_axis, int end_axis) const;
  int count(int start_axis) const { return count(start_axis, num_axes()); }
  /// Maps an axis in [-num_axes, num_axes) to [0, num_axes); throws for one out of range.
  int CanonicalAxisIndex(int axis_index) const;

  // Legacy accessors: the dimension of axis 0..3, or 1 where the blob has fewer axes.
  int num() const { return LegacyShape(0); }
  int channels() const { return LegacyShape(1); }
  int height() const { return LegacyShape(2); }
  int width() const { return LegacyShape(3); }
  int LegacyShape(int index) const;

  int offset(int n, int c = 0, int h = 0, int w = 0) const;
  int offset(const vector<int>& indices) const;

  /// Copies data (or diff) from `source`; with reshape false the counts must match.
  void CopyFrom(const Blob& source, bool copy_diff = false, bool reshape = false);

  Dtype data_at(int n, int c, int h, int w) const { return cpu_data()[offset(n, c, h, w)]; }
  Dtype diff_at(int n, int c, int h, int w) const { return cpu_diff()[offset(n, c, h, w)]; }
  Dtype data_at(const vector<int>& index) const { return cpu_data()[offset(index)]; }
  Dtype diff_at(const vector<int>& index) const { return cpu_diff()[offset(index)]; }

  const shared_ptr<SyncedMemory>& data() const { return data_; }
  const shared_ptr<SyncedMemory>& diff() const { return diff_; }

  const Dtype* cpu_data() const;
  void set_cpu_data(Dtype* data);
  const int* gpu_shape() const;
  const Dtype* gpu_data() const;
  void set_gpu_data(Dtype* data);
  const Dtype* cpu_diff() const;
  const Dtype* gpu_diff() const;
  Dtype* mutable_cpu_data();
  Dtype* mutable_gpu_data();
  Dtype* mutable_cpu_diff();
  Dtype* mutable_gpu_diff();

  /// The data (diff) in channel blocks of `block` (memory/channel_layout.hpp; 1: plain, as
  /// cpu_data() gives), converted in place from the order the host side holds. Float blobs of
  /// two axes or more, whose channels `block` divides. keep_values false: the caller writes
  /// every value.
  const Dtype* cpu_data_in(int block) const;
  Dtype* mutable_cpu_data_in(int block, bool keep_values);
  const Dtype* cpu_diff_in(int block) const;
  Dtype* mutable_cpu_diff_in(int block, bool keep_values);
  /// The channel block the host side's data (diff) is in now: 1 plain.
  int cpu_data_block() const { return data_ ? data_->cpu_layout().block : 1; }
  int cpu_diff_block() const { return diff_ ? diff_->cpu_layout().block : 1; }

  /// data -= diff (the last step of every solver update).
  void Update();
  /// Reads shape and values from a proto; with reshape false the shapes must already agree.
  void FromProto(const BlobProto& proto, bool reshape = true);
  void ToProto(BlobProto* proto, bool write_diff = false) const;

  Dtype asum_data() const;
  Dtype asum_diff() const;
  Dtype sumsq_data() const;
  Dtype sumsq_diff() const;
  void scale_data(Dtype scale_factor);
  void scale_diff(Dtype scale_factor);

  /// Makes this blob use `other`'s data (or diff) memory; the counts must match.
  void ShareData(const Blob& other);
  void ShareDiff(const Blob& other);

  /// Whether the proto's shape (or legacy 4-D shape) equals this blob's.
  bool ShapeEquals(const BlobProto& other) const;

 private:
  ChannelLayout LayoutOf(int block) const;
  shared_ptr<SyncedMemory> data_;
  shared_ptr<SyncedMemory> diff_;
  shared_ptr<SyncedMemory> shape_data_;  // the shape as ints, for GPU kernels
  vector<int> shape_;
  int count_ = 0;
  int capacity_ = 0;

  DISABLE_COPY_AND_ASSIGN(Blob);
};

/// "2 3 4 5 (120)" for any shape vector.
string ShapeString(const vector<int>& shape);
/// The shape a BlobProto describes (its `shape`, or the legacy 4-D fields).
vector<int> ProtoShape(const BlobProto& proto);

}  // namespace caffe

#endif  // CAFFE_BLOB_HPP_
