// The CUDA emulator's cuDNN (this folder), what its parts share: the descriptor structs more than
// one part reads (handle, tensor, filter), the status shorthands, the argument and shape checks
// (checks.cpp), and the tensor I/O every computing call goes through (CheckCall, Load, Store:
// tensor_io.cpp). Internal to the emulator, not part of its cudnn.h.
//
// Each part checks its calls' arguments as cuDNN documents (CUDNN_STATUS_BAD_PARAM or
// NOT_SUPPORTED, with the reason on stderr), checks that every tensor is device memory of the
// handle's GPU inside one allocation and that the output shares no element with an input (except
// where cuDNN allows the call in place), then computes the documented result in double with plain
// loops and blends it: out = alpha * result + beta * out, where out is not read when beta is 0 (it
// may hold NaN). alpha and beta are host pointers to float for float tensors, to double for
// double ones. The parts: handle.cpp, tensor_descriptors.cpp, add_tensor.cpp, pooling.cpp,
// lrn.cpp, activation.cpp, softmax.cpp, and the convolution (convolution.hpp).
//
// Legend: N images, C channels, x input, y output. Tensors are read into row-major (packed)
// arrays of double, whatever their strides, and written back through the strides.
#ifndef CAFFE_CUDA_EMU_CUDNN_INTERNAL_HPP_
#define CAFFE_CUDA_EMU_CUDNN_INTERNAL_HPP_

#include <cudnn.h>

#include <cstddef>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

struct cudnnContext {
  int device;  // the GPU current when it was made
  cudaStream_t stream = nullptr;
};

struct cudnnTensorStruct {
  bool set = false;
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  std::vector<int> dims, strides;  // N, C, spatial...; strides in elements
};

struct cudnnFilterStruct {
  bool set = false;
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;
  std::vector<int> dims;  // K, C / G, spatial...
};

#define CAFFE_EMU_RETURN_IF_FAILED(expression)                               \
  do {                                                                       \
    const cudnnStatus_t caffe_emu_status_ = (expression);                    \
    if (caffe_emu_status_ != CUDNN_STATUS_SUCCESS) return caffe_emu_status_; \
  } while (0)

// Hidden: internal to the library and not exported, as when these were file-local (and so
// non-interposable under -fPIC). A macro, as clang-format misreads an attribute in a namespace's
// head when it writes the closing comment.
#define CAFFE_EMU_HIDDEN __attribute__((visibility("hidden")))
namespace CAFFE_EMU_HIDDEN caffe_emu {

inline constexpr cudnnStatus_t kSuccess = CUDNN_STATUS_SUCCESS;
inline constexpr cudnnStatus_t kBadParam = CUDNN_STATUS_BAD_PARAM;
inline constexpr cudnnStatus_t kNotSupported = CUDNN_STATUS_NOT_SUPPORTED;

/// Prints why `call` fails, with the emulator's prefix, and returns `status` (checks.cpp).
__attribute__((format(printf, 3, 4))) cudnnStatus_t Reject(cudnnStatus_t status, const char* call,
                                                           const char* format, ...);

/// "2x3x4x5".
std::string Dims(const std::vector<int>& dims);

const char* TypeName(cudnnDataType_t type);

long Product(const std::vector<int>& values, size_t from = 0);

/// The element types the emulator computes (cuDNN also has half, int8, ...).
cudnnStatus_t CheckDataType(const char* call, cudnnDataType_t type);

cudnnStatus_t CheckSet(const char* call, const char* what, bool set);

cudnnStatus_t CheckHandle(const char* call, cudnnHandle_t handle);

/// Each of values[0, count) is at least `minimum`.
cudnnStatus_t CheckPositive(const char* call, const char* what, int count, const int values[],
                            int minimum);

template <typename Descriptor>
cudnnStatus_t Create(const char* call, Descriptor** descriptor) {
  if (descriptor == nullptr) return Reject(kBadParam, call, "the descriptor pointer is null");
  *descriptor = new Descriptor();
  return kSuccess;
}

// ---- Tensors in memory (tensor_io.cpp) ----

/// A tensor's element type, dims (N, C, spatial...) and strides in elements.
struct Layout {
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  std::vector<int> dims;
  std::vector<long> strides;

  size_t element_size() const { return type == CUDNN_DATA_DOUBLE ? sizeof(double) : sizeof(float); }
  long count() const { return Product(dims); }
  // Bytes from the first element to the end of the last.
  size_t span_bytes() const {
    long last = 0;
    for (size_t i = 0; i < dims.size(); ++i) last += (dims[i] - 1) * strides[i];
    return static_cast<size_t>(last + 1) * element_size();
  }
  // Each element's offset, the elements in row-major order of the dims.
  std::vector<long> Offsets() const {
    std::vector<long> offsets(count());
    std::vector<int> index(dims.size(), 0);
    long offset = 0;
    for (long& element : offsets) {
      element = offset;
      for (int axis = static_cast<int>(dims.size()) - 1; axis >= 0; --axis) {
        offset += strides[axis];
        if (++index[axis] < dims[axis]) break;
        offset -= strides[axis] * dims[axis];
        index[axis] = 0;
      }
    }
    return offsets;
  }
  bool operator==(const Layout& other) const {
    return type == other.type && dims == other.dims && strides == other.strides;
  }
};

Layout TensorLayout(cudnnTensorDescriptor_t tensor);

/// One tensor argument of a computing call.
struct Operand {
  const char* name;
  const Layout* layout;
  const void* data;
};

/// A call's alpha and beta.
struct Scaling {
  double alpha = 0, beta = 0;
};

/// Reads a tensor, row-major. Device memory: inside a DeviceAccess.
std::vector<double> Load(const Layout& layout, const void* data);

inline std::vector<double> Load(const Operand& input) { return Load(*input.layout, input.data); }

/// data = alpha * result + beta * data, `result` row-major. Inside a DeviceAccess.
void Store(const Layout& layout, void* data, const std::vector<double>& result, double alpha,
           double beta);

/// What every computing call checks once its descriptors are: alpha and beta are host scalars,
/// each tensor is device memory, and the output shares no element with an input but the one
/// named `in_place`, where cuDNN runs the call in place.
cudnnStatus_t CheckCall(const char* call, const void* alpha, const void* beta,
                        const Operand& output, std::initializer_list<Operand> inputs,
                        Scaling* scaling, const char* in_place = nullptr);

/// Writes `result` through `output` (see Store); outputs hold the caller's writable pointers.
inline void Store(const Operand& output, const std::vector<double>& result,
                  const Scaling& scaling) {
  Store(*output.layout, const_cast<void*>(output.data), result, scaling.alpha, scaling.beta);
}

// ---- Shape checks (checks.cpp) ----

/// b has a's element type and dims.
cudnnStatus_t CheckSameShape(const char* call, const char* a_name, const Layout& a,
                             const char* b_name, const Layout& b);

/// Each of `tensors` (name, descriptor) is set, all with the same type and dims; their layouts.
cudnnStatus_t CheckAlike(
    const char* call,
    std::initializer_list<std::pair<const char*, cudnnTensorDescriptor_t>> tensors,
    std::vector<Layout>* layouts);

}  // namespace caffe_emu

#endif  // CAFFE_CUDA_EMU_CUDNN_INTERNAL_HPP_
