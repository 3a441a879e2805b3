#include "caffe/blob.hpp"

#include <climits>
#include <cstdint>
#include <sstream>
#include <type_traits>

#include "caffe/kernels/math_functions.hpp"

namespace caffe {

namespace {
// The product of the dims (of the nonzero ones if `skip_zeros`), held at INT64_MAX or INT64_MIN
// where it overflows, so that a shape error can state it however absurd the shape.
int64_t DimsProduct(const vector<int>& shape, bool skip_zeros) {
  int64_t product = 1;
  for (int dim : shape) {
    if (dim == 0 && skip_zeros) continue;
    int64_t next;
    if (__builtin_mul_overflow(product, static_cast<int64_t>(dim), &next)) {
      return (product < 0) != (dim < 0) ? INT64_MIN : INT64_MAX;
    }
    product = next;
  }
  return product;
}
}  // namespace

string ShapeString(const vector<int>& shape) {
  std::ostringstream stream;
  for (int dim : shape) stream << dim << " ";
  stream << "(" << DimsProduct(shape, false) << ")";
  return stream.str();
}

vector<int> ProtoShape(const BlobProto& proto) {
  vector<int> shape;
  if (proto.has_num() || proto.has_channels() || proto.has_height() || proto.has_width()) {
    shape = {proto.num(), proto.channels(), proto.height(), proto.width()};
  } else {
    for (int i = 0; i < proto.shape().dim_size(); ++i) {
      shape.push_back(static_cast<int>(proto.shape().dim(i)));
    }
  }
  return shape;
}

template <typename Dtype>
void Blob<Dtype>::Reshape(const vector<int>& shape) {
  CAFFE_CHECK_LE(static_cast<int>(shape.size()), kMaxBlobAxes)
      << "blob shape " << ShapeString(shape) << " has too many axes";
  for (int dim : shape) {
    CAFFE_CHECK_GE(dim, 0) << "blob shape " << ShapeString(shape) << " has a negative dim";
  }
  // Every product of its dims, so every count(start, end), must fit an int: with a zero among
  // them too (BVLC checks the running product, which misses dims after a zero).
  CAFFE_CHECK_LE(DimsProduct(shape, true), static_cast<int64_t>(INT_MAX))
      << "blob shape " << ShapeString(shape) << " has dims whose product exceeds INT_MAX";
  const int64_t count = DimsProduct(shape, false);
  shape_ = shape;
  count_ = static_cast<int>(count);
  if (!shape_data_ || shape_data_->size() < shape.size() * sizeof(int)) {
    shape_data_ = std::make_shared<SyncedMemory>(shape.size() * sizeof(int));
  }
  if (!shape.empty()) {
    int* shape_data = static_cast<int*>(shape_data_->mutable_cpu_data());
    for (size_t i = 0; i < shape.size(); ++i) shape_data[i] = shape[i];
  }
  // An empty blob still gets (empty) buffers, so reading it is not an error.
  if (count_ > capacity_ || !data_) {
    capacity_ = count_;
    data_ = std::make_shared<SyncedMemory>(capacity_ * sizeof(Dtype));
    diff_ = std::make_shared<SyncedMemory>(capacity_ * sizeof(Dtype));
  }
}

template <typename Dtype>
void Blob<Dtype>::Reshape(const BlobShape& shape) {
  CAFFE_CHECK_LE(shape.dim_size(), kMaxBlobAxes) << "blob shape has too many axes";
  vector<int> shape_vec(shape.dim_size());
  for (int i = 0; i < shape.dim_size(); ++i) {
    CAFFE_CHECK_LE(shape.dim(i), static_cast<int64_t>(INT_MAX)) << "blob dim " << i << " too large";
    shape_vec[i] = static_cast<int>(shape.dim(i));
  }
  Reshape(shape_vec);
}

template <typename Dtype>
void Blob<Dtype>::Reshape(int num, int channels, int height, int width) {
  Reshape(vector<int>{num, channels, height, width});
}

template <typename Dtype>
string Blob<Dtype>::shape_string() const {
  return ShapeString(shape_);
}

template <typename Dtype>
int Blob<Dtype>::count(int start_axis, int end_axis) const {
  CHECK_LE(start_axis, end_axis);
  CHECK_GE(start_axis, 0);
  CHECK_GE(end_axis, 0);
  CHECK_LE(start_axis, num_axes());
  CHECK_LE(end_axis, num_axes());
  int count = 1;
  for (int i = start_axis; i < end_axis; ++i) count *= shape_[i];
  return count;
}

template <typename Dtype>
int Blob<Dtype>::CanonicalAxisIndex(int axis_index) const {
  CAFFE_CHECK(axis_index >= -num_axes() && axis_index < num_axes())
      << "axis " << axis_index << " out of range for a " << num_axes() << "-D blob of shape "
      << shape_string();
  return axis_index < 0 ? axis_index + num_axes() : axis_index;
}

template <typename Dtype>
int Blob<Dtype>::LegacyShape(int index) const {
  CAFFE_CHECK_LE(num_axes(), 4) << "cannot use legacy 4-D accessors on blob " << shape_string();
  CHECK_LT(index, 4);
  CHECK_GE(index, -4);
  if (index >= num_axes() || index < -num_axes()) return 1;
  return shape(index);
}

template <typename Dtype>
int Blob<Dtype>::offset(int n, int c, int h, int w) const {
  CHECK_GE(n, 0);
  CHECK_LE(n, num());
  CHECK_GE(c, 0);
  CHECK_LE(c, channels());
  CHECK_GE(h, 0);
  CHECK_LE(h, height());
  CHECK_GE(w, 0);
  CHECK_LE(w, width());
  return ((n * channels() + c) * height() + h) * width() + w;
}

template <typename Dtype>
int Blob<Dtype>::offset(const vector<int>& indices) const {
  CHECK_LE(static_cast<int>(indices.size()), num_axes());
  int offset = 0;
  for (int i = 0; i < num_axes(); ++i) {
    offset *= shape(i);
    if (static_cast<int>(indices.size()) > i) {
      CHECK_GE(indices[i], 0);
      CHECK_LT(indices[i], shape(i));
      offset += indices[i];
    }
  }
  return offset;
}

template <typename Dtype>
const Dtype* Blob<Dtype>::cpu_data() const {
  CHECK(data_);
  return static_cast<const Dtype*>(data_->cpu_data());
}

template <typename Dtype>
void Blob<Dtype>::set_cpu_data(Dtype* data) {
  CHECK(data);
  // A blob sharing memory with another gets its own buffers before pointing elsewhere.
  size_t size = count_ * sizeof(Dtype);
  if (data_->size() != size) {
    data_ = std::make_shared<SyncedMemory>(size);
    diff_ = std::make_shared<SyncedMemory>(size);
  }
  data_->set_cpu_data(data);
}

template <typename Dtype>
const int* Blob<Dtype>::gpu_shape() const {
  CHECK(shape_data_);
  return static_cast<const int*>(shape_data_->gpu_data());
}

template <typename Dtype>
const Dtype* Blob<Dtype>::gpu_data() const {
  CHECK(data_);
  return static_cast<const Dtype*>(data_->gpu_data());
}

template <typename Dtype>
void Blob<Dtype>::set_gpu_data(Dtype* data) {
  CHECK(data);
  size_t size = count_ * sizeof(Dtype);
  if (data_->size() != size) {
    data_ = std::make_shared<SyncedMemory>(size);
    diff_ = std::make_shared<SyncedMemory>(size);
  }
  data_->set_gpu_data(data);
}

template <typename Dtype>
const Dtype* Blob<Dtype>::cpu_diff() const {
  CHECK(diff_);
  return static_cast<const Dtype*>(diff_->cpu_data());
}

template <typename Dtype>
const Dtype* Blob<Dtype>::gpu_diff() const {
  CHECK(diff_);
  return static_cast<const Dtype*>(diff_->gpu_data());
}

template <typename Dtype>
ChannelLayout Blob<Dtype>::LayoutOf(int block) const {
  if (block == 1) return ChannelLayout();
  const bool fits = std::is_same<Dtype, float>::value && num_axes() >= 2 && shape(1) % block == 0;
  CHECK(fits) << "blob " << shape_string() << " cannot be held in channel blocks of " << block;
  return ChannelLayout{shape(0), shape(1), static_cast<size_t>(count(2)), block};
}

template <typename Dtype>
const Dtype* Blob<Dtype>::cpu_data_in(int block) const {
  CHECK(data_);
  return static_cast<const Dtype*>(data_->cpu_data_in(LayoutOf(block)));
}

template <typename Dtype>
Dtype* Blob<Dtype>::mutable_cpu_data_in(int block, bool keep_values) {
  CHECK(data_);
  return static_cast<Dtype*>(data_->mutable_cpu_data_in(LayoutOf(block), keep_values));
}

template <typename Dtype>
const Dtype* Blob<Dtype>::cpu_diff_in(int block) const {
  CHECK(diff_);
  return static_cast<const Dtype*>(diff_->cpu_data_in(LayoutOf(block)));
}

template <typename Dtype>
Dtype* Blob<Dtype>::mutable_cpu_diff_in(int block, bool keep_values) {
  CHECK(diff_);
  return static_cast<Dtype*>(diff_->mutable_cpu_data_in(LayoutOf(block), keep_values));
}

template <typename Dtype>
Dtype* Blob<Dtype>::mutable_cpu_data() {
  CHECK(data_);
  return static_cast<Dtype*>(data_->mutable_cpu_data());
}

template <typename Dtype>
Dtype* Blob<Dtype>::mutable_gpu_data() {
  CHECK(data_);
  return static_cast<Dtype*>(data_->mutable_gpu_data());
}

template <typename Dtype>
Dtype* Blob<Dtype>::mutable_cpu_diff() {
  CHECK(diff_);
  return static_cast<Dtype*>(diff_->mutable_cpu_data());
}

template <typename Dtype>
Dtype* Blob<Dtype>::mutable_gpu_diff() {
  CHECK(diff_);
  return static_cast<Dtype*>(diff_->mutable_gpu_data());
}

template <typename Dtype>
void Blob<Dtype>::ShareData(const Blob& other) {
  CHECK_EQ(count_, other.count());
  data_ = other.data();
}

template <typename Dtype>
void Blob<Dtype>::ShareDiff(const Blob& other) {
  CHECK_EQ(count_, other.count());
  diff_ = other.diff();
}

#ifndef CPU_ONLY
namespace {
// Whether an arithmetic member works on the device copy: in GPU mode, when that copy is current
// (HEAD_AT_GPU, or SYNCED as in BVLC, so a GPU-resident blob stays there). CPU mode always works on
// the host, which keeps CPU runs over an LMS fake device (host memory posing as the device) valid.
bool OnDevice(const shared_ptr<SyncedMemory>& memory) {
  if (Caffe::mode() != Caffe::GPU) return false;
  const SyncedMemory::SyncedHead head = memory->head();
  return head == SyncedMemory::HEAD_AT_GPU || head == SyncedMemory::SYNCED;
}
}  // namespace
#endif

// The update touches whichever side holds the newest data, so a GPU-resident blob stays there.
template <typename Dtype>
void Blob<Dtype>::Update() {
  if (!data_) return;
#ifndef CPU_ONLY
  if (OnDevice(data_)) {
    if (count_ > 0) caffe_gpu_axpy<Dtype>(count_, Dtype(-1), gpu_diff(), mutable_gpu_data());
    return;
  }
#endif
  switch (data_->head()) {
    case SyncedMemory::HEAD_AT_CPU:
    case SyncedMemory::SYNCED:
      caffe_axpy<Dtype>(count_, Dtype(-1), cpu_diff(), mutable_cpu_data());
      break;
    case SyncedMemory::HEAD_AT_GPU:
#ifndef CPU_ONLY
      // CPU mode with the newest data on the device: the update runs on the host.
      caffe_axpy<Dtype>(count_, Dtype(-1), cpu_diff(), mutable_cpu_data());
#else
      NO_GPU;
#endif
      break;
    case SyncedMemory::UNINITIALIZED:
      break;
  }
}

template <typename Dtype>
Dtype Blob<Dtype>::asum_data() const {
  if (!data_ || count_ == 0) return 0;
#ifndef CPU_ONLY
  if (OnDevice(data_)) {
    Dtype asum = 0;
    caffe_gpu_asum(count_, gpu_data(), &asum);
    return asum;
  }
#endif
  return caffe_cpu_asum(count_, cpu_data());
}

template <typename Dtype>
Dtype Blob<Dtype>::asum_diff() const {
  if (!diff_ || count_ == 0) return 0;
#ifndef CPU_ONLY
  if (OnDevice(diff_)) {
    Dtype asum = 0;
    caffe_gpu_asum(count_, gpu_diff(), &asum);
    return asum;
  }
#endif
  return caffe_cpu_asum(count_, cpu_diff());
}

template <typename Dtype>
Dtype Blob<Dtype>::sumsq_data() const {
  if (!data_ || count_ == 0) return 0;
#ifndef CPU_ONLY
  if (OnDevice(data_)) {
    Dtype sumsq = 0;
    caffe_gpu_dot(count_, gpu_data(), gpu_data(), &sumsq);
    return sumsq;
  }
#endif
  const Dtype* data = cpu_data();
  return caffe_cpu_dot(count_, data, data);
}

template <typename Dtype>
Dtype Blob<Dtype>::sumsq_diff() const {
  if (!diff_ || count_ == 0) return 0;
#ifndef CPU_ONLY
  if (OnDevice(diff_)) {
    Dtype sumsq = 0;
    caffe_gpu_dot(count_, gpu_diff(), gpu_diff(), &sumsq);
    return sumsq;
  }
#endif
  const Dtype* diff = cpu_diff();
  return caffe_cpu_dot(count_, diff, diff);
}

template <typename Dtype>
void Blob<Dtype>::scale_data(Dtype scale_factor) {
  if (!data_ || count_ == 0) return;
#ifndef CPU_ONLY
  if (OnDevice(data_)) {
    caffe_gpu_scal(count_, scale_factor, mutable_gpu_data());
    return;
  }
#endif
  caffe_scal(count_, scale_factor, mutable_cpu_data());
}

template <typename Dtype>
void Blob<Dtype>::scale_diff(Dtype scale_factor) {
  if (!diff_ || count_ == 0) return;
#ifndef CPU_ONLY
  if (OnDevice(diff_)) {
    caffe_gpu_scal(count_, scale_factor, mutable_gpu_diff());
    return;
  }
#endif
  caffe_scal(count_, scale_factor, mutable_cpu_diff());
}

template <typename Dtype>
bool Blob<Dtype>::ShapeEquals(const BlobProto& other) const {
  if (other.has_num() || other.has_channels() || other.has_height() || other.has_width()) {
    // Legacy blobs are 4-D with leading 1s implied; a blob of up to 4 axes matches them.
    return shape_.size() <= 4 && LegacyShape(-4) == other.num() &&
           LegacyShape(-3) == other.channels() && LegacyShape(-2) == other.height() &&
           LegacyShape(-1) == other.width();
  }
  return shape_ == ProtoShape(other);
}

template <typename Dtype>
void Blob<Dtype>::CopyFrom(const Blob& source, bool copy_diff, bool reshape) {
  if (source.count() != count_ || source.shape() != shape_) {
    CAFFE_CHECK(reshape) << "cannot copy a blob of shape " << source.shape_string()
                         << " into one of shape " << shape_string();
    ReshapeLike(source);
  }
  if (copy_diff) {
    caffe_copy(count_, source.cpu_diff(), mutable_cpu_diff());
  } else {
    caffe_copy(count_, source.cpu_data(), mutable_cpu_data());
  }
}

template <typename Dtype>
void Blob<Dtype>::FromProto(const BlobProto& proto, bool reshape) {
  vector<int> shape = ProtoShape(proto);
  if (reshape) {
    Reshape(shape);
  } else {
    CAFFE_CHECK(ShapeEquals(proto)) << "blob shape mismatch: the file has " << ShapeString(shape)
                                    << ", the net expects " << shape_string();
  }
  Dtype* data = mutable_cpu_data();
  if (proto.double_data_size() > 0) {
    CAFFE_CHECK_EQ(count_, proto.double_data_size())
        << "the file's blob of shape " << shape_string() << " holds " << proto.double_data_size()
        << " values, not the " << count_ << " its shape has";
    for (int i = 0; i < count_; ++i) data[i] = static_cast<Dtype>(proto.double_data(i));
  } else {
    CAFFE_CHECK_EQ(count_, proto.data_size())
        << "the file's blob of shape " << shape_string() << " holds " << proto.data_size()
        << " values, not the " << count_ << " its shape has";
    for (int i = 0; i < count_; ++i) data[i] = static_cast<Dtype>(proto.data(i));
  }
  if (proto.double_diff_size() > 0) {
    CAFFE_CHECK_EQ(count_, proto.double_diff_size()) << "blob diff has the wrong size";
    Dtype* diff = mutable_cpu_diff();
    for (int i = 0; i < count_; ++i) diff[i] = static_cast<Dtype>(proto.double_diff(i));
  } else if (proto.diff_size() > 0) {
    CAFFE_CHECK_EQ(count_, proto.diff_size()) << "blob diff has the wrong size";
    Dtype* diff = mutable_cpu_diff();
    for (int i = 0; i < count_; ++i) diff[i] = static_cast<Dtype>(proto.diff(i));
  }
}

namespace {
void WriteValues(const float* values, int count, BlobProto* proto, bool diff) {
  auto* field = diff ? proto->mutable_diff() : proto->mutable_data();
  field->Resize(count, 0.f);
  std::copy(values, values + count, field->mutable_data());
}
void WriteValues(const double* values, int count, BlobProto* proto, bool diff) {
  auto* field = diff ? proto->mutable_double_diff() : proto->mutable_double_data();
  field->Resize(count, 0.0);
  std::copy(values, values + count, field->mutable_data());
}
}  // namespace

template <typename Dtype>
void Blob<Dtype>::ToProto(BlobProto* proto, bool write_diff) const {
  proto->clear_shape();
  for (int dim : shape_) proto->mutable_shape()->add_dim(dim);
  proto->clear_data();
  proto->clear_diff();
  proto->clear_double_data();
  proto->clear_double_diff();
  WriteValues(cpu_data(), count_, proto, false);
  if (write_diff) WriteValues(cpu_diff(), count_, proto, true);
}

// Integer blobs hold indices and masks (max-pooling argmax, dropout masks); they are never
// learned, summed or serialised, so their arithmetic members are deliberately unavailable.
#define CAFFE_INTEGER_BLOB_STUBS(Itype)               \
  template <>                                         \
  void Blob<Itype>::Update() {                        \
    NOT_IMPLEMENTED;                                  \
  }                                                   \
  template <>                                         \
  Itype Blob<Itype>::asum_data() const {              \
    NOT_IMPLEMENTED;                                  \
    return 0;                                         \
  }                                                   \
  template <>                                         \
  Itype Blob<Itype>::asum_diff() const {              \
    NOT_IMPLEMENTED;                                  \
    return 0;                                         \
  }                                                   \
  template <>                                         \
  Itype Blob<Itype>::sumsq_data() const {             \
    NOT_IMPLEMENTED;                                  \
    return 0;                                         \
  }                                                   \
  template <>                                         \
  Itype Blob<Itype>::sumsq_diff() const {             \
    NOT_IMPLEMENTED;                                  \
    return 0;                                         \
  }                                                   \
  template <>                                         \
  void Blob<Itype>::scale_data(Itype) {               \
    NOT_IMPLEMENTED;                                  \
  }                                                   \
  template <>                                         \
  void Blob<Itype>::scale_diff(Itype) {               \
    NOT_IMPLEMENTED;                                  \
  }                                                   \
  template <>                                         \
  void Blob<Itype>::ToProto(BlobProto*, bool) const { \
    NOT_IMPLEMENTED;                                  \
  }
CAFFE_INTEGER_BLOB_STUBS(int)
CAFFE_INTEGER_BLOB_STUBS(unsigned int)
#undef CAFFE_INTEGER_BLOB_STUBS

INSTANTIATE_CLASS(Blob);
template class Blob<int>;
template class Blob<unsigned int>;

}  // namespace caffe
