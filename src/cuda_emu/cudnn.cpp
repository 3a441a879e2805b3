// The CUDA emulator's cuDNN: descriptors hold what they were set to; each call checks its
// arguments as cuDNN documents (CUDNN_STATUS_BAD_PARAM or NOT_SUPPORTED, with the reason on
// stderr), checks that every tensor is device memory of the handle's GPU inside one allocation
// and that the output shares no element with an input (except where cuDNN allows the call in
// place), then computes the documented result in double with plain loops and blends it:
// out = alpha * result + beta * out, where out is not read when beta is 0 (it may hold NaN).
// alpha and beta are host pointers to float for float tensors, to double for double ones.
//
// Convolutions: the algorithm getters rank several algorithms, some needing a workspace, some
// non-deterministic, some (for float) in tensor-op math and some not supported for the geometry,
// so the caller's choice among them is exercised. Every algorithm computes the same exact result,
// except that float operands are rounded to TF32 unless the descriptor's math type is
// CUDNN_FMA_MATH (on A100 and later, the other math types let cuDNN use TF32 tensor cores). A
// pass checks that its workspace is device memory of at least the size the getters report, and
// fills it with NaN before computing, as a GPU's scratch holds garbage.
//
// Legend: N images, C channels of x, K filters (channels of y), G groups, x input, y output,
// w filters (K, C / G, spatial...), dx/dy/dw gradients. Tensors are read into row-major (packed)
// arrays of double, whatever their strides, and written back through the strides.
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "emu_state.hpp"

struct cudnnContext {
  int device;  // the GPU current when it was made
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

struct cudnnConvolutionStruct {
  bool set = false;
  std::vector<int> pad, stride, dilation;  // one per spatial axis
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  cudnnDataType_t compute_type = CUDNN_DATA_FLOAT;
  int groups = 1;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};

struct cudnnPoolingStruct {
  bool set = false;
  cudnnPoolingMode_t mode = CUDNN_POOLING_MAX;
  cudnnNanPropagation_t nan = CUDNN_NOT_PROPAGATE_NAN;
  std::vector<int> window, pad, stride;  // one per spatial axis
};

// cudnnCreateLRNDescriptor's defaults.
struct cudnnLRNStruct {
  unsigned n = 5;
  double alpha = 1e-4, beta = 0.75, k = 2.0;
};

struct cudnnActivationStruct {
  bool set = false;
  cudnnActivationMode_t mode = CUDNN_ACTIVATION_RELU;
  cudnnNanPropagation_t nan = CUDNN_NOT_PROPAGATE_NAN;
  double coef = 0;  // clipped ReLU's ceiling, ELU's alpha
};

#define CAFFE_EMU_RETURN_IF_FAILED(expression)                               \
  do {                                                                       \
    const cudnnStatus_t caffe_emu_status_ = (expression);                    \
    if (caffe_emu_status_ != CUDNN_STATUS_SUCCESS) return caffe_emu_status_; \
  } while (0)

namespace caffe_emu {
namespace {

constexpr cudnnStatus_t kSuccess = CUDNN_STATUS_SUCCESS;
constexpr cudnnStatus_t kBadParam = CUDNN_STATUS_BAD_PARAM;
constexpr cudnnStatus_t kNotSupported = CUDNN_STATUS_NOT_SUPPORTED;

// Prints why `call` fails, with the emulator's prefix, and returns `status`.
__attribute__((format(printf, 3, 4))) cudnnStatus_t Reject(cudnnStatus_t status, const char* call,
                                                           const char* format, ...) {
  std::fprintf(stderr, "CUDA emulator: %s: ", call);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  return status;
}

// "2x3x4x5".
std::string Dims(const std::vector<int>& dims) {
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "x" : "") + std::to_string(dims[i]);
  return text;
}

const char* TypeName(cudnnDataType_t type) {
  return type == CUDNN_DATA_FLOAT ? "float" : type == CUDNN_DATA_DOUBLE ? "double" : "half";
}

long Product(const std::vector<int>& values, size_t from = 0) {
  long product = 1;
  for (size_t i = from; i < values.size(); ++i) product *= values[i];
  return product;
}

// The element types the emulator computes (cuDNN also has half, int8, ...).
cudnnStatus_t CheckDataType(const char* call, cudnnDataType_t type) {
  if (type == CUDNN_DATA_FLOAT || type == CUDNN_DATA_DOUBLE) return kSuccess;
  if (type == CUDNN_DATA_HALF) {
    return Reject(kNotSupported, call, "the emulator computes float and double tensors only");
  }
  return Reject(kBadParam, call, "data type %d is not a cudnnDataType_t", static_cast<int>(type));
}

cudnnStatus_t CheckSet(const char* call, const char* what, bool set) {
  return set ? kSuccess : Reject(kBadParam, call, "%s is null or was never set", what);
}

cudnnStatus_t CheckHandle(const char* call, cudnnHandle_t handle) {
  if (handle == nullptr) return Reject(kBadParam, call, "the handle is null");
  // Its kernels would run on its own GPU, where the current GPU's memory is out of reach.
  return MadeOnCurrentDevice(call, "cuDNN handle", handle->device) ? kSuccess
                                                                   : CUDNN_STATUS_EXECUTION_FAILED;
}

// ---- Tensors in memory ----

// A tensor's element type, dims (N, C, spatial...) and strides in elements.
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

Layout TensorLayout(cudnnTensorDescriptor_t tensor) {
  return {tensor->type, tensor->dims,
          std::vector<long>(tensor->strides.begin(), tensor->strides.end())};
}

// A filter is packed: NCHW is (K, C, spatial...) row-major, NHWC keeps C innermost.
Layout FilterLayout(cudnnFilterDescriptor_t filter) {
  Layout layout{filter->type, filter->dims, std::vector<long>(filter->dims.size())};
  std::vector<int> order(filter->dims.size());  // axes from outermost to innermost
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  if (filter->format == CUDNN_TENSOR_NHWC)
    std::rotate(order.begin() + 1, order.begin() + 2, order.end());
  long stride = 1;
  for (int i = static_cast<int>(order.size()) - 1; i >= 0; --i) {
    layout.strides[order[i]] = stride;
    stride *= filter->dims[order[i]];
  }
  return layout;
}

// One tensor argument of a computing call.
struct Operand {
  const char* name;
  const Layout* layout;
  const void* data;
};

// Each tensor is device memory of the current GPU (the handle's, checked before), in one
// allocation.
cudnnStatus_t CheckOperands(const char* call, std::initializer_list<Operand> operands) {
  for (const Operand& operand : operands) {
    if (operand.data == nullptr) return Reject(kBadParam, call, "%s is null", operand.name);
    if (!UsableOnDevice(call, operand.data, operand.layout->span_bytes(), operand.name)) {
      return CUDNN_STATUS_EXECUTION_FAILED;
    }
  }
  return kSuccess;
}

// Whether two tensors share a byte. Strided tensors may interleave within the same range, so
// where the ranges meet, the elements are compared.
bool Overlap(const Operand& a, const Operand& b) {
  const auto begin_a = reinterpret_cast<uintptr_t>(a.data);
  const auto begin_b = reinterpret_cast<uintptr_t>(b.data);
  if (begin_a + a.layout->span_bytes() <= begin_b || begin_b + b.layout->span_bytes() <= begin_a) {
    return false;
  }
  auto starts = [](const Operand& operand) {
    std::vector<uintptr_t> bytes;
    for (long offset : operand.layout->Offsets()) {
      bytes.push_back(reinterpret_cast<uintptr_t>(operand.data) +
                      offset * operand.layout->element_size());
    }
    std::sort(bytes.begin(), bytes.end());
    return bytes;
  };
  const std::vector<uintptr_t> in_a = starts(a), in_b = starts(b);
  const size_t size_a = a.layout->element_size(), size_b = b.layout->element_size();
  for (size_t i = 0, j = 0; i < in_a.size() && j < in_b.size();) {
    if (in_a[i] + size_a <= in_b[j]) {
      ++i;
    } else if (in_b[j] + size_b <= in_a[i]) {
      ++j;
    } else {
      return true;
    }
  }
  return false;
}

// `output` shares no element with `inputs`, except that the input named `in_place` may be the
// output itself, with the same layout, where cuDNN documents the call in place.
cudnnStatus_t CheckSeparate(const char* call, const Operand& output,
                            std::initializer_list<Operand> inputs, const char* in_place = nullptr) {
  for (const Operand& input : inputs) {
    const bool may_alias = in_place != nullptr && std::strcmp(input.name, in_place) == 0;
    if (may_alias && input.data == output.data && *input.layout == *output.layout) continue;
    if (!Overlap(input, output)) continue;
    return Reject(kBadParam, call, "%s (%p) overlaps %s (%p): %s", output.name, output.data,
                  input.name, input.data,
                  may_alias ? "in place, both need the same pointer and descriptor"
                            : "cuDNN does not document this call in place");
  }
  return kSuccess;
}

// A call's alpha and beta.
struct Scaling {
  double alpha = 0, beta = 0;
};

// alpha and beta: host pointers to the tensors' element type.
cudnnStatus_t ReadScalars(const char* call, cudnnDataType_t type, const void* alpha,
                          const void* beta, Scaling* scaling) {
  for (const auto& [name, pointer] : {std::pair{"alpha", alpha}, std::pair{"beta", beta}}) {
    if (pointer == nullptr) return Reject(kBadParam, call, "%s is null", name);
    if (Locate(pointer).kind == Place::kDevice) {
      return Reject(kBadParam, call, "%s (%p) is device memory; cuDNN reads it on the host", name,
                    pointer);
    }
  }
  auto read = [type](const void* pointer) {
    return type == CUDNN_DATA_FLOAT ? *static_cast<const float*>(pointer)
                                    : *static_cast<const double*>(pointer);
  };
  scaling->alpha = read(alpha);
  scaling->beta = read(beta);
  return kSuccess;
}

// Reads a tensor, row-major. Device memory: inside a DeviceAccess.
std::vector<double> Load(const Layout& layout, const void* data) {
  const std::vector<long> offsets = layout.Offsets();
  std::vector<double> values(offsets.size());
  for (size_t i = 0; i < offsets.size(); ++i) {
    values[i] = layout.type == CUDNN_DATA_FLOAT ? static_cast<const float*>(data)[offsets[i]]
                                                : static_cast<const double*>(data)[offsets[i]];
  }
  return values;
}

std::vector<double> Load(const Operand& input) { return Load(*input.layout, input.data); }

template <typename T>
void Blend(const std::vector<long>& offsets, const std::vector<double>& result, double alpha,
           double beta, T* data) {
  for (size_t i = 0; i < offsets.size(); ++i) {
    // beta 0 does not read the output, which may hold anything.
    const double prior = beta == 0 ? 0.0 : beta * data[offsets[i]];
    data[offsets[i]] = static_cast<T>(alpha * result[i] + prior);
  }
}

// data = alpha * result + beta * data, `result` row-major. Inside a DeviceAccess.
void Store(const Layout& layout, void* data, const std::vector<double>& result, double alpha,
           double beta) {
  if (layout.type == CUDNN_DATA_FLOAT) {
    Blend(layout.Offsets(), result, alpha, beta, static_cast<float*>(data));
  } else {
    Blend(layout.Offsets(), result, alpha, beta, static_cast<double*>(data));
  }
}

// What every computing call checks once its descriptors are: alpha and beta are host scalars,
// each tensor is device memory, and the output shares no element with an input but the one
// named `in_place`, where cuDNN runs the call in place.
cudnnStatus_t CheckCall(const char* call, const void* alpha, const void* beta,
                        const Operand& output, std::initializer_list<Operand> inputs,
                        Scaling* scaling, const char* in_place = nullptr) {
  CAFFE_EMU_RETURN_IF_FAILED(ReadScalars(call, output.layout->type, alpha, beta, scaling));
  CAFFE_EMU_RETURN_IF_FAILED(CheckOperands(call, inputs));
  CAFFE_EMU_RETURN_IF_FAILED(CheckOperands(call, {output}));
  return CheckSeparate(call, output, inputs, in_place);
}

// Writes `result` through `output` (see Store); outputs hold the caller's writable pointers.
void Store(const Operand& output, const std::vector<double>& result, const Scaling& scaling) {
  Store(*output.layout, const_cast<void*>(output.data), result, scaling.alpha, scaling.beta);
}

// b has a's element type and dims.
cudnnStatus_t CheckSameShape(const char* call, const char* a_name, const Layout& a,
                             const char* b_name, const Layout& b) {
  if (a.type != b.type) {
    return Reject(kBadParam, call, "%s is %s but %s is %s", a_name, TypeName(a.type), b_name,
                  TypeName(b.type));
  }
  if (a.dims != b.dims) {
    return Reject(kBadParam, call, "%s is %s but %s is %s", a_name, Dims(a.dims).c_str(), b_name,
                  Dims(b.dims).c_str());
  }
  return kSuccess;
}

// Each of `tensors` (name, descriptor) is set, all with the same type and dims; their layouts.
cudnnStatus_t CheckAlike(
    const char* call,
    std::initializer_list<std::pair<const char*, cudnnTensorDescriptor_t>> tensors,
    std::vector<Layout>* layouts) {
  for (const auto& [name, tensor] : tensors) {
    const std::string described = std::string(name) + "'s descriptor";
    CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, described.c_str(), tensor && tensor->set));
    layouts->push_back(TensorLayout(tensor));
    CAFFE_EMU_RETURN_IF_FAILED(
        CheckSameShape(call, tensors.begin()->first, layouts->front(), name, layouts->back()));
  }
  return kSuccess;
}

// ---- Convolution ----

// A convolution as cuDNN checks it, with every shape in row-major order and 2-D convolutions
// given a leading unit axis, so that the loops always run over three spatial axes.
struct ConvPlan {
  Layout x, w, y;
  int spatial_axes = 0;  // 2 or 3, as given
  int num = 0, x_channels = 0, y_channels = 0, groups = 1;
  int in[3], out[3], kernel[3], pad[3], stride[3], dilation[3];
  bool flip = false;  // CUDNN_CONVOLUTION mirrors the filter; cross-correlation does not
  bool tf32 = false;  // float operands rounded to TF32 (tensor cores)
};

// y's dims for x and w (cudnnGetConvolutionNdForwardOutputDim), after cuDNN's checks of the
// three descriptors.
cudnnStatus_t ForwardOutputDims(const char* call, cudnnConvolutionDescriptor_t conv,
                                cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                                std::vector<int>* dims) {
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "the convolution descriptor", conv && conv->set));
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "x's descriptor", x && x->set));
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "the filter descriptor", w && w->set));
  const int rank = static_cast<int>(x->dims.size());
  if (static_cast<int>(w->dims.size()) != rank) {
    return Reject(kBadParam, call, "x is %s but the filter is %s: not the same number of dims",
                  Dims(x->dims).c_str(), Dims(w->dims).c_str());
  }
  if (static_cast<int>(conv->pad.size()) != rank - 2) {
    return Reject(kBadParam, call, "the convolution has %zu spatial axes but x is %s",
                  conv->pad.size(), Dims(x->dims).c_str());
  }
  if (x->type != w->type) {
    return Reject(kBadParam, call, "x is %s but the filter is %s", TypeName(x->type),
                  TypeName(w->type));
  }
  if (w->dims[1] * conv->groups != x->dims[1]) {
    return Reject(kBadParam, call,
                  "the filter has %d input channels x %d groups = %d, but x has %d channels",
                  w->dims[1], conv->groups, w->dims[1] * conv->groups, x->dims[1]);
  }
  if (w->dims[0] % conv->groups != 0) {
    return Reject(kBadParam, call, "%d filters do not divide into %d groups", w->dims[0],
                  conv->groups);
  }
  *dims = {x->dims[0], w->dims[0]};
  for (int axis = 0; axis < rank - 2; ++axis) {
    const int extent = (w->dims[2 + axis] - 1) * conv->dilation[axis] + 1;
    const int padded = x->dims[2 + axis] + 2 * conv->pad[axis];
    if (extent > padded) {
      return Reject(kBadParam, call,
                    "spatial axis %d: the dilated filter spans %d, more than the padded input's %d",
                    axis, extent, padded);
    }
    dims->push_back(1 + (padded - extent) / conv->stride[axis]);
  }
  return kSuccess;
}

cudnnStatus_t PlanConvolution(const char* call, cudnnTensorDescriptor_t x,
                              cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv,
                              cudnnTensorDescriptor_t y, ConvPlan* plan) {
  std::vector<int> y_dims;
  CAFFE_EMU_RETURN_IF_FAILED(ForwardOutputDims(call, conv, x, w, &y_dims));
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "y's descriptor", y && y->set));
  const int rank = static_cast<int>(x->dims.size());
  if (y->dims.size() != x->dims.size() || y->type != x->type) {
    return Reject(kBadParam, call, "x is %s %s but y is %s %s", TypeName(x->type),
                  Dims(x->dims).c_str(), TypeName(y->type), Dims(y->dims).c_str());
  }
  if (rank != 4 && rank != 5) {
    return Reject(kNotSupported, call, "convolutions are 2-D or 3-D; x is %s",
                  Dims(x->dims).c_str());
  }
  if (conv->compute_type != x->type) {
    return Reject(kNotSupported, call, "%s tensors need compute type %s, not %s", TypeName(x->type),
                  TypeName(x->type), TypeName(conv->compute_type));
  }
  if (y->dims[0] != y_dims[0] || y->dims[1] != y_dims[1]) {
    return Reject(kBadParam, call, "y is %s but x and the filter give %s", Dims(y->dims).c_str(),
                  Dims(y_dims).c_str());
  }
  if (y->dims != y_dims) {  // cuDNN documents NOT_SUPPORTED for spatial sizes
    return Reject(kNotSupported, call, "y is %s but cudnnGetConvolutionNdForwardOutputDim gives %s",
                  Dims(y->dims).c_str(), Dims(y_dims).c_str());
  }
  plan->x = TensorLayout(x);
  plan->w = FilterLayout(w);
  plan->y = TensorLayout(y);
  plan->spatial_axes = rank - 2;
  plan->num = x->dims[0];
  plan->x_channels = x->dims[1];
  plan->y_channels = y->dims[1];
  plan->groups = conv->groups;
  const int lead = 5 - rank;  // unit axes in front of a 2-D convolution's two
  for (int axis = 0; axis < 3; ++axis) {
    const int given = axis - lead;  // the descriptors' spatial axis
    const bool unit = given < 0;
    plan->in[axis] = unit ? 1 : x->dims[2 + given];
    plan->out[axis] = unit ? 1 : y->dims[2 + given];
    plan->kernel[axis] = unit ? 1 : w->dims[2 + given];
    plan->pad[axis] = unit ? 0 : conv->pad[given];
    plan->stride[axis] = unit ? 1 : conv->stride[given];
    plan->dilation[axis] = unit ? 1 : conv->dilation[given];
  }
  plan->flip = conv->mode == CUDNN_CONVOLUTION;
  plan->tf32 = x->type == CUDNN_DATA_FLOAT && conv->math != CUDNN_FMA_MATH;
  return kSuccess;
}

// Calls tap(x_index, w_index, y_index) for every product x[x_index] * w[w_index] that adds to
// y[y_index] (row-major indices). Forward and both backward passes are sums over these taps.
template <typename Tap>
void ForEachTap(const ConvPlan& p, Tap tap) {
  const int x_group = p.x_channels / p.groups, y_group = p.y_channels / p.groups;
  const long in_size = long{p.in[0]} * p.in[1] * p.in[2];
  const long out_size = long{p.out[0]} * p.out[1] * p.out[2];
  const long kernel_size = long{p.kernel[0]} * p.kernel[1] * p.kernel[2];
  auto filter_index = [&p](int axis, int r) { return p.flip ? p.kernel[axis] - 1 - r : r; };
  for (int n = 0; n < p.num; ++n) {
    for (int k = 0; k < p.y_channels; ++k) {
      const int group = k / y_group;
      for (long o = 0; o < out_size; ++o) {
        const int o0 = static_cast<int>(o / (p.out[1] * p.out[2]));
        const int o1 = static_cast<int>(o / p.out[2] % p.out[1]),
                  o2 = static_cast<int>(o % p.out[2]);
        const long y_index = (long{n} * p.y_channels + k) * out_size + o;
        for (int c = 0; c < x_group; ++c) {
          const long x_plane = (long{n} * p.x_channels + group * x_group + c) * in_size;
          const long w_plane = (long{k} * x_group + c) * kernel_size;
          for (int r0 = 0; r0 < p.kernel[0]; ++r0) {
            const int i0 = o0 * p.stride[0] - p.pad[0] + r0 * p.dilation[0];
            if (i0 < 0 || i0 >= p.in[0]) continue;
            for (int r1 = 0; r1 < p.kernel[1]; ++r1) {
              const int i1 = o1 * p.stride[1] - p.pad[1] + r1 * p.dilation[1];
              if (i1 < 0 || i1 >= p.in[1]) continue;
              for (int r2 = 0; r2 < p.kernel[2]; ++r2) {
                const int i2 = o2 * p.stride[2] - p.pad[2] + r2 * p.dilation[2];
                if (i2 < 0 || i2 >= p.in[2]) continue;
                const long w_offset =
                    (long{filter_index(0, r0)} * p.kernel[1] + filter_index(1, r1)) * p.kernel[2] +
                    filter_index(2, r2);
                tap(x_plane + (long{i0} * p.in[1] + i1) * p.in[2] + i2, w_plane + w_offset,
                    y_index);
              }
            }
          }
        }
      }
    }
  }
}

// Rounds to TF32 (10 mantissa bits, to nearest even), as tensor cores read float operands.
double Tf32(double value) {
  float single = static_cast<float>(value);
  if (!std::isfinite(single)) return single;
  uint32_t bits;
  std::memcpy(&bits, &single, sizeof(bits));
  bits += 0xfffu + ((bits >> 13) & 1u);
  bits &= ~0x1fffu;
  std::memcpy(&single, &bits, sizeof(bits));
  return single;
}

// A convolution operand as the plan's math reads it.
std::vector<double> LoadOperand(const ConvPlan& plan, const Operand& input) {
  std::vector<double> values = Load(input);
  if (plan.tf32) std::transform(values.begin(), values.end(), values.begin(), Tf32);
  return values;
}

enum class Pass { kForward, kBackwardData, kBackwardFilter };

// What an algorithm needs: its workspace, and which geometries it handles.
enum class Kind {
  kNoWorkspace,       // any geometry
  kIndices,           // any; precomputed offsets
  kIm2col,            // any; one image's column buffer per group
  kPartialSums,       // any; a copy of the filter gradient
  kFft,               // 2-D, unit strides and dilation
  kFftTiling,         // as kFft, in 32 x 32 tiles
  kWinograd,          // 2-D 3x3, unit strides and dilation; no workspace
  kWinogradNonfused,  // as kWinograd, with transformed tensors in the workspace
  kNotImplemented,    // listed by cuDNN, never runs
};

// One entry of the emulator's ranking of a pass's algorithms, expected fastest first.
struct Ranked {
  int algo;
  Kind kind;
  bool deterministic;
  bool tensor_op;  // listed for float only, with CUDNN_TENSOR_OP_MATH
};

// Ranked so that the caller's choice matters: tensor-op entries first (a caller keeping float
// in FMA math must skip them), non-deterministic ones and ones with large workspaces early.
const std::vector<Ranked>& Ranking(Pass pass) {
  static const std::vector<Ranked> forward = {
      {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, Kind::kIndices, true, true},
      {CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, Kind::kWinogradNonfused, true, true},
      {CUDNN_CONVOLUTION_FWD_ALGO_FFT, Kind::kFft, true, false},
      {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, Kind::kIndices, true, false},
      {CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, Kind::kWinogradNonfused, true, false},
      {CUDNN_CONVOLUTION_FWD_ALGO_GEMM, Kind::kIm2col, true, false},
      {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, Kind::kNoWorkspace, true, false},
      {CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING, Kind::kFftTiling, true, false},
      {CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, Kind::kWinograd, true, false},
      {CUDNN_CONVOLUTION_FWD_ALGO_DIRECT, Kind::kNotImplemented, true, false},
  };
  static const std::vector<Ranked> backward_data = {
      {CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, Kind::kIndices, true, true},
      {CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, Kind::kNoWorkspace, false, false},
      {CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING, Kind::kFftTiling, true, false},
      {CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, Kind::kIndices, true, false},
      {CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED, Kind::kWinogradNonfused, true, false},
      {CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT, Kind::kFft, true, false},
      {CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD, Kind::kWinograd, true, false},
  };
  static const std::vector<Ranked> backward_filter = {
      {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, Kind::kIndices, true, true},
      {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, Kind::kNoWorkspace, false, false},
      {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, Kind::kPartialSums, false, false},
      {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT, Kind::kFft, true, false},
      {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, Kind::kIndices, true, false},
      {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED, Kind::kWinogradNonfused, true, false},
      {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING, Kind::kFftTiling, true, false},
      {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD, Kind::kNotImplemented, true, false},
  };
  return pass == Pass::kForward        ? forward
         : pass == Pass::kBackwardData ? backward_data
                                       : backward_filter;
}

// The ranking's entry for `algo`, or null where `algo` is no algorithm of the pass.
const Ranked* FindAlgorithm(Pass pass, int algo) {
  for (const Ranked& entry : Ranking(pass)) {
    if (entry.algo == algo) return &entry;
  }
  return nullptr;
}

// Why `kind` cannot run `plan`, or null where it can.
const char* Unsupported(Kind kind, const ConvPlan& p) {
  const bool unit = p.spatial_axes == 2 && p.stride[1] == 1 && p.stride[2] == 1 &&
                    p.dilation[1] == 1 && p.dilation[2] == 1;
  switch (kind) {
    case Kind::kFft:
    case Kind::kFftTiling:
      return unit ? nullptr : "needs a 2-D convolution with unit strides and dilation";
    case Kind::kWinograd:
    case Kind::kWinogradNonfused:
      return unit && p.kernel[1] == 3 && p.kernel[2] == 3
                 ? nullptr
                 : "needs a 2-D 3x3 convolution with unit strides and dilation";
    case Kind::kNotImplemented: return "is not implemented";
    default: return nullptr;
  }
}

size_t NextPowerOfTwo(long value) {
  size_t power = 1;
  while (power < static_cast<size_t>(value)) power *= 2;
  return power;
}

// The workspace `kind` needs for `plan`, in bytes: a model of what such an algorithm stores.
size_t WorkspaceBytes(Kind kind, const ConvPlan& p) {
  const size_t element = p.x.element_size();
  const size_t x_group = p.x_channels / p.groups;
  const size_t kernel = size_t(p.kernel[0]) * p.kernel[1] * p.kernel[2];
  const size_t out = size_t(p.out[0]) * p.out[1] * p.out[2];
  // Transformed images, filters and outputs.
  const size_t planes =
      size_t(p.num) * p.x_channels + p.y_channels * x_group + size_t(p.num) * p.y_channels;
  switch (kind) {
    case Kind::kIndices: return sizeof(int) * x_group * kernel;
    case Kind::kIm2col: return element * x_group * kernel * out;
    case Kind::kPartialSums: return element * p.y_channels * x_group * kernel;
    case Kind::kFft:  // complex planes of the padded input, rounded up to powers of two
      return 2 * element * planes * NextPowerOfTwo(p.in[1] + 2 * p.pad[1]) *
             NextPowerOfTwo(p.in[2] + 2 * p.pad[2]);
    case Kind::kFftTiling: return 2 * element * planes * 32 * 32;
    case Kind::kWinogradNonfused:  // 4x4 transforms of 2x2 output tiles
      return 16 * element * planes * ((p.out[1] + 1) / 2) * ((p.out[2] + 1) / 2);
    default: return 0;
  }
}

// The perf list a _v7 getter returns: the ranking, tensor-op entries for float data only, the
// unsupported entries moved to the end with status NOT_SUPPORTED. The other entries run in the
// descriptor's math when it asks for FMA, else in default math.
template <typename Perf>
cudnnStatus_t ListAlgorithms(const char* call, Pass pass, cudnnHandle_t handle,
                             cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                             cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y,
                             int requested, int* returned, Perf* results) {
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  if (returned == nullptr || results == nullptr || requested <= 0) {
    return Reject(kBadParam, call, "needs requestedAlgoCount > 0 (got %d) and result pointers",
                  requested);
  }
  ConvPlan plan;
  CAFFE_EMU_RETURN_IF_FAILED(PlanConvolution(call, x, w, conv, y, &plan));
  const bool float_data = plan.x.type == CUDNN_DATA_FLOAT;
  const cudnnMathType_t plain_math =
      conv->math == CUDNN_FMA_MATH ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
  std::vector<Perf> runnable, unsupported;
  for (const Ranked& entry : Ranking(pass)) {
    if (entry.tensor_op && !float_data) continue;
    Perf perf{};
    perf.algo = static_cast<decltype(perf.algo)>(entry.algo);
    const bool runs = Unsupported(entry.kind, plan) == nullptr;
    perf.status = runs ? kSuccess : kNotSupported;
    perf.time = -1;  // heuristics do not time
    perf.memory = runs ? WorkspaceBytes(entry.kind, plan) : 0;
    perf.determinism = entry.deterministic ? CUDNN_DETERMINISTIC : CUDNN_NON_DETERMINISTIC;
    perf.mathType = entry.tensor_op ? CUDNN_TENSOR_OP_MATH : plain_math;
    (runs ? runnable : unsupported).push_back(perf);
  }
  runnable.insert(runnable.end(), unsupported.begin(), unsupported.end());
  *returned = std::min(requested, static_cast<int>(runnable.size()));
  std::copy(runnable.begin(), runnable.begin() + *returned, results);
  return kSuccess;
}

cudnnStatus_t WorkspaceSize(const char* call, Pass pass, cudnnHandle_t handle,
                            cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                            cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, int algo,
                            size_t* bytes) {
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  if (bytes == nullptr) return Reject(kBadParam, call, "sizeInBytes is null");
  ConvPlan plan;
  CAFFE_EMU_RETURN_IF_FAILED(PlanConvolution(call, x, w, conv, y, &plan));
  const Ranked* entry = FindAlgorithm(pass, algo);
  if (entry == nullptr) return Reject(kBadParam, call, "%d is not an algorithm of this pass", algo);
  if (const char* why = Unsupported(entry->kind, plan)) {
    return Reject(kNotSupported, call, "algorithm %d %s", algo, why);
  }
  *bytes = WorkspaceBytes(entry->kind, plan);
  return kSuccess;
}

// A pass's algorithm runs its plan, and its workspace is device memory of the size the getters
// report; `needed` gets that size.
cudnnStatus_t CheckAlgorithm(const char* call, Pass pass, int algo, const ConvPlan& plan,
                             void* workspace, size_t workspace_bytes, size_t* needed) {
  const Ranked* entry = FindAlgorithm(pass, algo);
  if (entry == nullptr) return Reject(kBadParam, call, "%d is not an algorithm of this pass", algo);
  if (const char* why = Unsupported(entry->kind, plan)) {
    return Reject(kNotSupported, call, "algorithm %d %s", algo, why);
  }
  *needed = WorkspaceBytes(entry->kind, plan);
  if (*needed == 0) return kSuccess;
  if (workspace == nullptr || workspace_bytes < *needed) {
    return Reject(kBadParam, call, "algorithm %d needs a workspace of %zu bytes, got %zu at %p",
                  algo, *needed, workspace_bytes, workspace);
  }
  return UsableOnDevice(call, workspace, *needed, "the workspace") ? kSuccess : kBadParam;
}

// What a convolution pass checks of its descriptors and algorithm.
cudnnStatus_t CheckConvolutionCall(const char* call, Pass pass, cudnnHandle_t handle, int algo,
                                   cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                                   cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y,
                                   void* workspace, size_t workspace_bytes, ConvPlan* plan,
                                   size_t* needed) {
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  CAFFE_EMU_RETURN_IF_FAILED(PlanConvolution(call, x, w, conv, y, plan));
  return CheckAlgorithm(call, pass, algo, *plan, workspace, workspace_bytes, needed);
}

// The workspace holds garbage on a GPU; here NaN, so that no result can depend on it.
void Scribble(void* workspace, size_t bytes) {
  if (bytes > 0) std::memset(workspace, 0xff, bytes);
}

// ---- Pooling ----

// A pooling as cuDNN checks it; shapes row-major, 2-D given a leading unit axis.
struct PoolPlan {
  Layout x, y;
  long planes = 0;  // N * C
  int in[3], out[3], window[3], pad[3], stride[3];
};

cudnnStatus_t PlanPooling(const char* call, cudnnPoolingDescriptor_t pooling,
                          cudnnTensorDescriptor_t x, cudnnTensorDescriptor_t y, PoolPlan* plan) {
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "the pooling descriptor", pooling && pooling->set));
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "x's descriptor", x && x->set));
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "y's descriptor", y && y->set));
  const int rank = static_cast<int>(x->dims.size());
  if (y->dims.size() != x->dims.size() || pooling->window.size() + 2 != x->dims.size()) {
    return Reject(kBadParam, call, "x is %s and y is %s, for a %zu-D pooling",
                  Dims(x->dims).c_str(), Dims(y->dims).c_str(), pooling->window.size());
  }
  if (rank != 4 && rank != 5) {
    return Reject(kNotSupported, call, "pooling is 2-D or 3-D; x is %s", Dims(x->dims).c_str());
  }
  if (x->type != y->type || x->dims[0] != y->dims[0] || x->dims[1] != y->dims[1]) {
    return Reject(kBadParam, call, "x is %s %s but y is %s %s", TypeName(x->type),
                  Dims(x->dims).c_str(), TypeName(y->type), Dims(y->dims).c_str());
  }
  std::vector<int> expected = {x->dims[0], x->dims[1]};
  for (int axis = 0; axis < rank - 2; ++axis) {
    const int padded = x->dims[2 + axis] + 2 * pooling->pad[axis];
    if (pooling->window[axis] > padded) {
      return Reject(kBadParam, call,
                    "spatial axis %d: window %d is larger than the padded input %d", axis,
                    pooling->window[axis], padded);
    }
    expected.push_back(1 + (padded - pooling->window[axis]) / pooling->stride[axis]);
  }
  // What cuDNN computes for other sizes is not documented; Caffe never asks for it.
  if (y->dims != expected) {
    return Reject(kBadParam, call,
                  "y is %s but the pooling gives %s (cudnnGetPoolingNdForwardOutputDim)",
                  Dims(y->dims).c_str(), Dims(expected).c_str());
  }
  plan->x = TensorLayout(x);
  plan->y = TensorLayout(y);
  plan->planes = long{x->dims[0]} * x->dims[1];
  const int lead = 5 - rank;
  for (int axis = 0; axis < 3; ++axis) {
    const int given = axis - lead;
    const bool unit = given < 0;
    plan->in[axis] = unit ? 1 : x->dims[2 + given];
    plan->out[axis] = unit ? 1 : y->dims[2 + given];
    plan->window[axis] = unit ? 1 : pooling->window[given];
    plan->pad[axis] = unit ? 0 : pooling->pad[given];
    plan->stride[axis] = unit ? 1 : pooling->stride[given];
  }
  return kSuccess;
}

// Calls visit(y_index, members) for every output, `members` the row-major indices of the x
// elements in its window (padding excluded).
template <typename Visit>
void ForEachWindow(const PoolPlan& p, Visit visit) {
  const long in_size = long{p.in[0]} * p.in[1] * p.in[2];
  std::vector<long> members;
  long y_index = 0;
  for (long plane = 0; plane < p.planes; ++plane) {
    for (int o0 = 0; o0 < p.out[0]; ++o0) {
      for (int o1 = 0; o1 < p.out[1]; ++o1) {
        for (int o2 = 0; o2 < p.out[2]; ++o2) {
          members.clear();
          for (int r0 = 0; r0 < p.window[0]; ++r0) {
            const int i0 = o0 * p.stride[0] - p.pad[0] + r0;
            if (i0 < 0 || i0 >= p.in[0]) continue;
            for (int r1 = 0; r1 < p.window[1]; ++r1) {
              const int i1 = o1 * p.stride[1] - p.pad[1] + r1;
              if (i1 < 0 || i1 >= p.in[1]) continue;
              for (int r2 = 0; r2 < p.window[2]; ++r2) {
                const int i2 = o2 * p.stride[2] - p.pad[2] + r2;
                if (i2 < 0 || i2 >= p.in[2]) continue;
                members.push_back(plane * in_size + (long{i0} * p.in[1] + i1) * p.in[2] + i2);
              }
            }
          }
          visit(y_index++, members);
        }
      }
    }
  }
}

bool IsMax(cudnnPoolingMode_t mode) {
  return mode == CUDNN_POOLING_MAX || mode == CUDNN_POOLING_MAX_DETERMINISTIC;
}

// The divisor of an average: the whole window, or only its part inside x.
double AverageCount(cudnnPoolingMode_t mode, const PoolPlan& p, size_t members) {
  return mode == CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
             ? double(p.window[0]) * p.window[1] * p.window[2]
             : double(members);
}

// ---- LRN, activations, softmax ----

// cuDNN's LRN window around channel c: [c - behind, c + ahead], clipped to the channels.
struct LrnWindow {
  int behind, ahead;
  explicit LrnWindow(unsigned n)
      : behind((static_cast<int>(n) - 1) / 2), ahead(static_cast<int>(n) - 1 - behind) {}
};

// scale[n][c][s] = k + alpha / lrnN * (sum of x^2 over the window), row-major like x.
std::vector<double> LrnScale(const cudnnLRNStruct& lrn, const std::vector<int>& dims,
                             const std::vector<double>& x) {
  const int channels = dims[1];
  const long inner = Product(dims, 2);
  const LrnWindow window(lrn.n);
  std::vector<double> scale(x.size());
  for (long plane = 0; plane < dims[0]; ++plane) {
    for (int c = 0; c < channels; ++c) {
      for (long s = 0; s < inner; ++s) {
        double sum = 0;
        for (int j = std::max(0, c - window.behind); j <= std::min(channels - 1, c + window.ahead);
             ++j) {
          const double value = x[(plane * channels + j) * inner + s];
          sum += value * value;
        }
        scale[(plane * channels + c) * inner + s] = lrn.k + lrn.alpha / lrn.n * sum;
      }
    }
  }
  return scale;
}

cudnnStatus_t CheckLrn(const char* call, cudnnLRNDescriptor_t lrn, cudnnLRNMode_t mode,
                       const Layout& x) {
  if (lrn == nullptr) return Reject(kBadParam, call, "the LRN descriptor is null");
  if (mode != CUDNN_LRN_CROSS_CHANNEL_DIM1) {
    return Reject(kBadParam, call, "mode %d is not CUDNN_LRN_CROSS_CHANNEL_DIM1", int(mode));
  }
  if (x.dims.size() > 5) {
    return Reject(kBadParam, call, "LRN takes 4-D or 5-D tensors, not %s", Dims(x.dims).c_str());
  }
  return kSuccess;
}

double Activate(const cudnnActivationStruct& f, double x) {
  if (std::isnan(x) &&
      (f.mode == CUDNN_ACTIVATION_RELU || f.mode == CUDNN_ACTIVATION_CLIPPED_RELU)) {
    return f.nan == CUDNN_PROPAGATE_NAN ? x : 0.0;
  }
  switch (f.mode) {
    case CUDNN_ACTIVATION_SIGMOID: return 1 / (1 + std::exp(-x));
    case CUDNN_ACTIVATION_RELU: return x > 0 ? x : 0.0;
    case CUDNN_ACTIVATION_TANH: return std::tanh(x);
    case CUDNN_ACTIVATION_CLIPPED_RELU: return std::min(x > 0 ? x : 0.0, f.coef);
    case CUDNN_ACTIVATION_ELU: return x > 0 ? x : f.coef * std::expm1(x);
  }
  return x;
}

// dy * f'(x), from the forward input x and output y: the ReLUs and ELU's positive side look
// at x, sigmoid, tanh and ELU's negative side at y.
double ActivateBackward(const cudnnActivationStruct& f, double x, double y, double dy) {
  switch (f.mode) {
    case CUDNN_ACTIVATION_SIGMOID: return dy * y * (1 - y);
    case CUDNN_ACTIVATION_RELU: return x > 0 ? dy : 0.0;
    case CUDNN_ACTIVATION_TANH: return dy * (1 - y * y);
    case CUDNN_ACTIVATION_CLIPPED_RELU: return x > 0 && x < f.coef ? dy : 0.0;
    case CUDNN_ACTIVATION_ELU: return x > 0 ? dy : dy * (y + f.coef);
  }
  return dy;
}

// How softmax groups a tensor's row-major elements: `outer` blocks of `channels` values
// `inner` apart, each group normalized.
struct SoftmaxShape {
  long outer, channels, inner;
};

cudnnStatus_t PlanSoftmax(const char* call, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode,
                          const Layout& layout, SoftmaxShape* shape) {
  if (algo != CUDNN_SOFTMAX_FAST && algo != CUDNN_SOFTMAX_ACCURATE && algo != CUDNN_SOFTMAX_LOG) {
    return Reject(kBadParam, call, "algorithm %d is not a cudnnSoftmaxAlgorithm_t", int(algo));
  }
  if (mode == CUDNN_SOFTMAX_MODE_CHANNEL) {
    *shape = {layout.dims[0], layout.dims[1], Product(layout.dims, 2)};
  } else if (mode == CUDNN_SOFTMAX_MODE_INSTANCE) {
    *shape = {layout.dims[0], Product(layout.dims, 1), 1};
  } else {
    return Reject(kBadParam, call, "mode %d is not a cudnnSoftmaxMode_t", int(mode));
  }
  return kSuccess;
}

// Index of value c of group (o, i).
long SoftmaxIndex(const SoftmaxShape& s, long o, long c, long i) {
  return (o * s.channels + c) * s.inner + i;
}

// Where a tensor of `to`'s dims reads a tensor of `from`'s dims that repeats along its unit axes:
// for each element of `to`, row-major, the row-major index into `from`.
std::vector<long> BroadcastIndices(const std::vector<int>& from, const std::vector<int>& to) {
  std::vector<long> strides(from.size());
  long stride = 1;
  for (int axis = static_cast<int>(from.size()) - 1; axis >= 0; --axis) {
    strides[axis] = from[axis] == 1 ? 0 : stride;
    stride *= from[axis];
  }
  Layout walk{CUDNN_DATA_FLOAT, to, strides};
  return walk.Offsets();
}

// ---- Descriptors ----

template <typename Descriptor>
cudnnStatus_t Create(const char* call, Descriptor** descriptor) {
  if (descriptor == nullptr) return Reject(kBadParam, call, "the descriptor pointer is null");
  *descriptor = new Descriptor();
  return kSuccess;
}

cudnnStatus_t CheckPositive(const char* call, const char* what, int count, const int values[],
                            int minimum) {
  if (values == nullptr) return Reject(kBadParam, call, "%s is null", what);
  for (int i = 0; i < count; ++i) {
    if (values[i] < minimum) {
      return Reject(kBadParam, call, "%s[%d] is %d; must be >= %d", what, i, values[i], minimum);
    }
  }
  return kSuccess;
}

}  // namespace
}  // namespace caffe_emu

using namespace caffe_emu;  // NOLINT: the C API below only forwards to it

// ---- Handles and descriptors ----

const char* cudnnGetErrorString(cudnnStatus_t status) {
  switch (status) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_INTERNAL_ERROR: return "CUDNN_STATUS_INTERNAL_ERROR";
    case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
  }
  return "CUDNN_STATUS_UNKNOWN";
}

cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
  if (handle == nullptr) return Reject(kBadParam, "cudnnCreate", "handle is null");
  *handle = new cudnnContext{CurrentDevice()};
  return kSuccess;
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
  if (handle == nullptr) return Reject(kBadParam, "cudnnDestroy", "the handle is null");
  delete handle;
  return kSuccess;
}

// Everything is synchronous here, so the stream only needs to be one.
cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId) {
  (void)streamId;
  return handle == nullptr ? Reject(kBadParam, "cudnnSetStream", "the handle is null") : kSuccess;
}

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* tensorDesc) {
  return Create("cudnnCreateTensorDescriptor", tensorDesc);
}
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t tensorDesc) {
  delete tensorDesc;
  return kSuccess;
}

cudnnStatus_t cudnnSetTensorNdDescriptor(cudnnTensorDescriptor_t tensorDesc,
                                         cudnnDataType_t dataType, int nbDims, const int dimA[],
                                         const int strideA[]) {
  const char* call = "cudnnSetTensorNdDescriptor";
  if (tensorDesc == nullptr) return Reject(kBadParam, call, "the descriptor is null");
  CAFFE_EMU_RETURN_IF_FAILED(CheckDataType(call, dataType));
  if (nbDims < 4 || nbDims > CUDNN_DIM_MAX) {
    return Reject(kNotSupported, call, "nbDims is %d; must be in [4, %d]", nbDims, CUDNN_DIM_MAX);
  }
  CAFFE_EMU_RETURN_IF_FAILED(CheckPositive(call, "dimA", nbDims, dimA, 1));
  CAFFE_EMU_RETURN_IF_FAILED(CheckPositive(call, "strideA", nbDims, strideA, 1));
  const std::vector<int> dims(dimA, dimA + nbDims);
  if (Product(dims) > std::numeric_limits<int>::max()) {
    return Reject(kNotSupported, call, "%s exceeds 2^31 - 1 elements", Dims(dims).c_str());
  }
  tensorDesc->set = true;
  tensorDesc->type = dataType;
  tensorDesc->dims = dims;
  tensorDesc->strides.assign(strideA, strideA + nbDims);
  return kSuccess;
}

cudnnStatus_t cudnnGetTensorNdDescriptor(const cudnnTensorDescriptor_t tensorDesc,
                                         int nbDimsRequested, cudnnDataType_t* dataType,
                                         int* nbDims, int dimA[], int strideA[]) {
  const char* call = "cudnnGetTensorNdDescriptor";
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "the descriptor", tensorDesc && tensorDesc->set));
  const int rank = static_cast<int>(tensorDesc->dims.size());
  const int copied = std::min(std::max(nbDimsRequested, 0), rank);
  if (dataType == nullptr || nbDims == nullptr || nbDimsRequested < 0 ||
      (copied > 0 && (dimA == nullptr || strideA == nullptr))) {
    return Reject(kBadParam, call, "bad output pointers or nbDimsRequested %d", nbDimsRequested);
  }
  *dataType = tensorDesc->type;
  *nbDims = rank;
  std::copy(tensorDesc->dims.begin(), tensorDesc->dims.begin() + copied, dimA);
  std::copy(tensorDesc->strides.begin(), tensorDesc->strides.begin() + copied, strideA);
  return kSuccess;
}

cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* filterDesc) {
  return Create("cudnnCreateFilterDescriptor", filterDesc);
}
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t filterDesc) {
  delete filterDesc;
  return kSuccess;
}

cudnnStatus_t cudnnSetFilterNdDescriptor(cudnnFilterDescriptor_t filterDesc,
                                         cudnnDataType_t dataType, cudnnTensorFormat_t format,
                                         int nbDims, const int filterDimA[]) {
  const char* call = "cudnnSetFilterNdDescriptor";
  if (filterDesc == nullptr) return Reject(kBadParam, call, "the descriptor is null");
  CAFFE_EMU_RETURN_IF_FAILED(CheckDataType(call, dataType));
  if (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC) {
    return Reject(kBadParam, call, "format %d is not NCHW or NHWC", int(format));
  }
  // "Due to historical reasons, the minimum number of dimensions in the filter descriptor is 3."
  if (nbDims < 3) return Reject(kBadParam, call, "nbDims is %d; must be >= 3", nbDims);
  if (nbDims > CUDNN_DIM_MAX) {
    return Reject(kNotSupported, call, "nbDims is %d; must be <= %d", nbDims, CUDNN_DIM_MAX);
  }
  CAFFE_EMU_RETURN_IF_FAILED(CheckPositive(call, "filterDimA", nbDims, filterDimA, 1));
  filterDesc->set = true;
  filterDesc->type = dataType;
  filterDesc->format = format;
  filterDesc->dims.assign(filterDimA, filterDimA + nbDims);
  return kSuccess;
}

cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* convDesc) {
  return Create("cudnnCreateConvolutionDescriptor", convDesc);
}
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t convDesc) {
  delete convDesc;
  return kSuccess;
}

cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t convDesc,
                                              int arrayLength, const int padA[],
                                              const int filterStrideA[], const int dilationA[],
                                              cudnnConvolutionMode_t mode,
                                              cudnnDataType_t computeType) {
  const char* call = "cudnnSetConvolutionNdDescriptor";
  if (convDesc == nullptr) return Reject(kBadParam, call, "the descriptor is null");
  if (arrayLength < 1) return Reject(kBadParam, call, "arrayLength is %d", arrayLength);
  if (arrayLength > CUDNN_DIM_MAX - 2) {
    return Reject(kNotSupported, call, "arrayLength is %d; must be <= %d", arrayLength,
                  CUDNN_DIM_MAX - 2);
  }
  CAFFE_EMU_RETURN_IF_FAILED(CheckPositive(call, "padA", arrayLength, padA, 0));
  CAFFE_EMU_RETURN_IF_FAILED(CheckPositive(call, "filterStrideA", arrayLength, filterStrideA, 1));
  CAFFE_EMU_RETURN_IF_FAILED(CheckPositive(call, "dilationA", arrayLength, dilationA, 1));
  if (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION) {
    return Reject(kBadParam, call, "mode %d is not a cudnnConvolutionMode_t", int(mode));
  }
  CAFFE_EMU_RETURN_IF_FAILED(CheckDataType(call, computeType));
  convDesc->set = true;
  convDesc->pad.assign(padA, padA + arrayLength);
  convDesc->stride.assign(filterStrideA, filterStrideA + arrayLength);
  convDesc->dilation.assign(dilationA, dilationA + arrayLength);
  convDesc->mode = mode;
  convDesc->compute_type = computeType;
  return kSuccess;
}

cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc, int groupCount) {
  const char* call = "cudnnSetConvolutionGroupCount";
  if (convDesc == nullptr) return Reject(kBadParam, call, "the descriptor is null");
  if (groupCount < 1) return Reject(kBadParam, call, "groupCount is %d; must be >= 1", groupCount);
  convDesc->groups = groupCount;
  return kSuccess;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc,
                                          cudnnMathType_t mathType) {
  const char* call = "cudnnSetConvolutionMathType";
  if (convDesc == nullptr) return Reject(kBadParam, call, "the descriptor is null");
  if (mathType < CUDNN_DEFAULT_MATH || mathType > CUDNN_FMA_MATH) {
    return Reject(kBadParam, call, "math type %d is not a cudnnMathType_t", int(mathType));
  }
  convDesc->math = mathType;
  return kSuccess;
}

cudnnStatus_t cudnnGetConvolutionNdForwardOutputDim(const cudnnConvolutionDescriptor_t convDesc,
                                                    const cudnnTensorDescriptor_t inputTensorDesc,
                                                    const cudnnFilterDescriptor_t filterDesc,
                                                    int nbDims, int tensorOuputDimA[]) {
  const char* call = "cudnnGetConvolutionNdForwardOutputDim";
  std::vector<int> dims;
  CAFFE_EMU_RETURN_IF_FAILED(ForwardOutputDims(call, convDesc, inputTensorDesc, filterDesc, &dims));
  if (nbDims != static_cast<int>(dims.size()) || tensorOuputDimA == nullptr) {
    return Reject(kBadParam, call, "nbDims is %d but x has %zu dims", nbDims, dims.size());
  }
  std::copy(dims.begin(), dims.end(), tensorOuputDimA);
  return kSuccess;
}

cudnnStatus_t cudnnCreatePoolingDescriptor(cudnnPoolingDescriptor_t* poolingDesc) {
  return Create("cudnnCreatePoolingDescriptor", poolingDesc);
}
cudnnStatus_t cudnnDestroyPoolingDescriptor(cudnnPoolingDescriptor_t poolingDesc) {
  delete poolingDesc;
  return kSuccess;
}

cudnnStatus_t cudnnSetPoolingNdDescriptor(cudnnPoolingDescriptor_t poolingDesc,
                                          const cudnnPoolingMode_t mode,
                                          const cudnnNanPropagation_t maxpoolingNanOpt, int nbDims,
                                          const int windowDimA[], const int paddingA[],
                                          const int strideA[]) {
  const char* call = "cudnnSetPoolingNdDescriptor";
  if (poolingDesc == nullptr) return Reject(kBadParam, call, "the descriptor is null");
  if (mode < CUDNN_POOLING_MAX || mode > CUDNN_POOLING_MAX_DETERMINISTIC) {
    return Reject(kBadParam, call, "mode %d is not a cudnnPoolingMode_t", int(mode));
  }
  if (maxpoolingNanOpt != CUDNN_NOT_PROPAGATE_NAN && maxpoolingNanOpt != CUDNN_PROPAGATE_NAN) {
    return Reject(kBadParam, call, "NaN option %d is not a cudnnNanPropagation_t",
                  int(maxpoolingNanOpt));
  }
  if (nbDims < 1 || nbDims > CUDNN_DIM_MAX - 2) {
    return Reject(kBadParam, call, "nbDims is %d; must be in [1, %d]", nbDims, CUDNN_DIM_MAX - 2);
  }
  CAFFE_EMU_RETURN_IF_FAILED(CheckPositive(call, "windowDimA", nbDims, windowDimA, 1));
  CAFFE_EMU_RETURN_IF_FAILED(CheckPositive(call, "paddingA", nbDims, paddingA, 0));
  CAFFE_EMU_RETURN_IF_FAILED(CheckPositive(call, "strideA", nbDims, strideA, 1));
  poolingDesc->set = true;
  poolingDesc->mode = mode;
  poolingDesc->nan = maxpoolingNanOpt;
  poolingDesc->window.assign(windowDimA, windowDimA + nbDims);
  poolingDesc->pad.assign(paddingA, paddingA + nbDims);
  poolingDesc->stride.assign(strideA, strideA + nbDims);
  return kSuccess;
}

cudnnStatus_t cudnnCreateLRNDescriptor(cudnnLRNDescriptor_t* normDesc) {
  return Create("cudnnCreateLRNDescriptor", normDesc);
}
cudnnStatus_t cudnnDestroyLRNDescriptor(cudnnLRNDescriptor_t lrnDesc) {
  delete lrnDesc;
  return kSuccess;
}

cudnnStatus_t cudnnSetLRNDescriptor(cudnnLRNDescriptor_t normDesc, unsigned lrnN, double lrnAlpha,
                                    double lrnBeta, double lrnK) {
  const char* call = "cudnnSetLRNDescriptor";
  if (normDesc == nullptr) return Reject(kBadParam, call, "the descriptor is null");
  if (lrnN < CUDNN_LRN_MIN_N || lrnN > CUDNN_LRN_MAX_N || lrnK < CUDNN_LRN_MIN_K ||
      lrnBeta < CUDNN_LRN_MIN_BETA) {
    return Reject(kBadParam, call,
                  "lrnN %u, lrnK %g, lrnBeta %g: need lrnN in [%d, %d], lrnK >= %g, "
                  "lrnBeta >= %g",
                  lrnN, lrnK, lrnBeta, CUDNN_LRN_MIN_N, CUDNN_LRN_MAX_N, CUDNN_LRN_MIN_K,
                  CUDNN_LRN_MIN_BETA);
  }
  *normDesc = {lrnN, lrnAlpha, lrnBeta, lrnK};
  return kSuccess;
}

cudnnStatus_t cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t* activationDesc) {
  return Create("cudnnCreateActivationDescriptor", activationDesc);
}
cudnnStatus_t cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t activationDesc) {
  delete activationDesc;
  return kSuccess;
}

cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t activationDesc,
                                           cudnnActivationMode_t mode,
                                           cudnnNanPropagation_t reluNanOpt, double coef) {
  const char* call = "cudnnSetActivationDescriptor";
  if (activationDesc == nullptr) return Reject(kBadParam, call, "the descriptor is null");
  if (mode < CUDNN_ACTIVATION_SIGMOID || mode > CUDNN_ACTIVATION_ELU) {
    return Reject(kBadParam, call, "mode %d is not one of the emulator's activations", int(mode));
  }
  if (reluNanOpt != CUDNN_NOT_PROPAGATE_NAN && reluNanOpt != CUDNN_PROPAGATE_NAN) {
    return Reject(kBadParam, call, "NaN option %d is not a cudnnNanPropagation_t", int(reluNanOpt));
  }
  *activationDesc = {true, mode, reluNanOpt, coef};
  return kSuccess;
}

// ---- Convolution ----

cudnnStatus_t cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t handle, int* count) {
  if (handle == nullptr || count == nullptr) {
    return Reject(kBadParam, "cudnnGetConvolutionForwardAlgorithmMaxCount", "null argument");
  }
  *count = static_cast<int>(Ranking(Pass::kForward).size());
  return kSuccess;
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
    const cudnnFilterDescriptor_t filterDesc, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t destDesc, const int requestedAlgoCount, int* returnedAlgoCount,
    cudnnConvolutionFwdAlgoPerf_t* perfResults) {
  return ListAlgorithms("cudnnGetConvolutionForwardAlgorithm_v7", Pass::kForward, handle, srcDesc,
                        filterDesc, convDesc, destDesc, requestedAlgoCount, returnedAlgoCount,
                        perfResults);
}

cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnFilterDescriptor_t wDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t yDesc,
    cudnnConvolutionFwdAlgo_t algo, size_t* sizeInBytes) {
  return WorkspaceSize("cudnnGetConvolutionForwardWorkspaceSize", Pass::kForward, handle, xDesc,
                       wDesc, convDesc, yDesc, algo, sizeInBytes);
}

// y = conv(x, w).
cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void* alpha,
                                      const cudnnTensorDescriptor_t xDesc, const void* x,
                                      const cudnnFilterDescriptor_t wDesc, const void* w,
                                      const cudnnConvolutionDescriptor_t convDesc,
                                      cudnnConvolutionFwdAlgo_t algo, void* workSpace,
                                      size_t workSpaceSizeInBytes, const void* beta,
                                      const cudnnTensorDescriptor_t yDesc, void* y) {
  const char* call = "cudnnConvolutionForward";
  ConvPlan plan;
  size_t needed = 0;
  CAFFE_EMU_RETURN_IF_FAILED(CheckConvolutionCall(call, Pass::kForward, handle, algo, xDesc, wDesc,
                                                  convDesc, yDesc, workSpace, workSpaceSizeInBytes,
                                                  &plan, &needed));
  const Operand x_in{"x", &plan.x, x}, w_in{"w", &plan.w, w}, y_out{"y", &plan.y, y};
  Scaling scaling;
  CAFFE_EMU_RETURN_IF_FAILED(CheckCall(call, alpha, beta, y_out, {x_in, w_in}, &scaling));
  DeviceAccess access;
  Scribble(workSpace, needed);
  const std::vector<double> xs = LoadOperand(plan, x_in), ws = LoadOperand(plan, w_in);
  std::vector<double> ys(plan.y.count(), 0.0);
  ForEachTap(plan, [&](long xi, long wi, long yi) { ys[yi] += xs[xi] * ws[wi]; });
  Store(y_out, ys, scaling);
  return kSuccess;
}

cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnnHandle_t handle, int* count) {
  if (handle == nullptr || count == nullptr) {
    return Reject(kBadParam, "cudnnGetConvolutionBackwardDataAlgorithmMaxCount", "null argument");
  }
  *count = static_cast<int>(Ranking(Pass::kBackwardData).size());
  return kSuccess;
}

cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t filterDesc,
    const cudnnTensorDescriptor_t diffDesc, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t gradDesc, const int requestedAlgoCount, int* returnedAlgoCount,
    cudnnConvolutionBwdDataAlgoPerf_t* perfResults) {
  return ListAlgorithms("cudnnGetConvolutionBackwardDataAlgorithm_v7", Pass::kBackwardData, handle,
                        gradDesc, filterDesc, convDesc, diffDesc, requestedAlgoCount,
                        returnedAlgoCount, perfResults);
}

cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc,
    cudnnConvolutionBwdDataAlgo_t algo, size_t* sizeInBytes) {
  return WorkspaceSize("cudnnGetConvolutionBackwardDataWorkspaceSize", Pass::kBackwardData, handle,
                       dxDesc, wDesc, convDesc, dyDesc, algo, sizeInBytes);
}

// dx = the adjoint of conv(., w) applied to dy.
cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void* alpha,
                                           const cudnnFilterDescriptor_t wDesc, const void* w,
                                           const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                           const cudnnConvolutionDescriptor_t convDesc,
                                           cudnnConvolutionBwdDataAlgo_t algo, void* workSpace,
                                           size_t workSpaceSizeInBytes, const void* beta,
                                           const cudnnTensorDescriptor_t dxDesc, void* dx) {
  const char* call = "cudnnConvolutionBackwardData";
  ConvPlan plan;
  size_t needed = 0;
  CAFFE_EMU_RETURN_IF_FAILED(CheckConvolutionCall(call, Pass::kBackwardData, handle, algo, dxDesc,
                                                  wDesc, convDesc, dyDesc, workSpace,
                                                  workSpaceSizeInBytes, &plan, &needed));
  const Operand w_in{"w", &plan.w, w}, dy_in{"dy", &plan.y, dy}, dx_out{"dx", &plan.x, dx};
  Scaling scaling;
  CAFFE_EMU_RETURN_IF_FAILED(CheckCall(call, alpha, beta, dx_out, {w_in, dy_in}, &scaling));
  DeviceAccess access;
  Scribble(workSpace, needed);
  const std::vector<double> ws = LoadOperand(plan, w_in), dys = LoadOperand(plan, dy_in);
  std::vector<double> dxs(plan.x.count(), 0.0);
  ForEachTap(plan, [&](long xi, long wi, long yi) { dxs[xi] += dys[yi] * ws[wi]; });
  Store(dx_out, dxs, scaling);
  return kSuccess;
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnnHandle_t handle, int* count) {
  if (handle == nullptr || count == nullptr) {
    return Reject(kBadParam, "cudnnGetConvolutionBackwardFilterAlgorithmMaxCount", "null argument");
  }
  *count = static_cast<int>(Ranking(Pass::kBackwardFilter).size());
  return kSuccess;
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
    const cudnnTensorDescriptor_t diffDesc, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnFilterDescriptor_t gradDesc, const int requestedAlgoCount, int* returnedAlgoCount,
    cudnnConvolutionBwdFilterAlgoPerf_t* perfResults) {
  return ListAlgorithms("cudnnGetConvolutionBackwardFilterAlgorithm_v7", Pass::kBackwardFilter,
                        handle, srcDesc, gradDesc, convDesc, diffDesc, requestedAlgoCount,
                        returnedAlgoCount, perfResults);
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t gradDesc,
    cudnnConvolutionBwdFilterAlgo_t algo, size_t* sizeInBytes) {
  return WorkspaceSize("cudnnGetConvolutionBackwardFilterWorkspaceSize", Pass::kBackwardFilter,
                       handle, xDesc, gradDesc, convDesc, dyDesc, algo, sizeInBytes);
}

// dw = the gradient of sum(dy * conv(x, w)) by w.
cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void* alpha,
                                             const cudnnTensorDescriptor_t xDesc, const void* x,
                                             const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                             const cudnnConvolutionDescriptor_t convDesc,
                                             cudnnConvolutionBwdFilterAlgo_t algo, void* workSpace,
                                             size_t workSpaceSizeInBytes, const void* beta,
                                             const cudnnFilterDescriptor_t dwDesc, void* dw) {
  const char* call = "cudnnConvolutionBackwardFilter";
  ConvPlan plan;
  size_t needed = 0;
  CAFFE_EMU_RETURN_IF_FAILED(CheckConvolutionCall(call, Pass::kBackwardFilter, handle, algo, xDesc,
                                                  dwDesc, convDesc, dyDesc, workSpace,
                                                  workSpaceSizeInBytes, &plan, &needed));
  const Operand x_in{"x", &plan.x, x}, dy_in{"dy", &plan.y, dy}, dw_out{"dw", &plan.w, dw};
  Scaling scaling;
  CAFFE_EMU_RETURN_IF_FAILED(CheckCall(call, alpha, beta, dw_out, {x_in, dy_in}, &scaling));
  DeviceAccess access;
  Scribble(workSpace, needed);
  const std::vector<double> xs = LoadOperand(plan, x_in), dys = LoadOperand(plan, dy_in);
  std::vector<double> dws(plan.w.count(), 0.0);
  ForEachTap(plan, [&](long xi, long wi, long yi) { dws[wi] += xs[xi] * dys[yi]; });
  Store(dw_out, dws, scaling);
  return kSuccess;
}

// db[k] = the sum of dy over images and positions of channel k.
cudnnStatus_t cudnnConvolutionBackwardBias(cudnnHandle_t handle, const void* alpha,
                                           const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                           const void* beta, const cudnnTensorDescriptor_t dbDesc,
                                           void* db) {
  const char* call = "cudnnConvolutionBackwardBias";
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "dy's descriptor", dyDesc && dyDesc->set));
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "db's descriptor", dbDesc && dbDesc->set));
  const Layout dy_layout = TensorLayout(dyDesc), db_layout = TensorLayout(dbDesc);
  std::vector<int> bias_dims(dy_layout.dims.size(), 1);
  bias_dims[1] = dy_layout.dims[1];
  if (db_layout.type != dy_layout.type || db_layout.dims != bias_dims) {
    return Reject(kBadParam, call, "dy is %s %s, so db must be %s %s, not %s %s",
                  TypeName(dy_layout.type), Dims(dy_layout.dims).c_str(), TypeName(dy_layout.type),
                  Dims(bias_dims).c_str(), TypeName(db_layout.type), Dims(db_layout.dims).c_str());
  }
  const Operand dy_in{"dy", &dy_layout, dy}, db_out{"db", &db_layout, db};
  Scaling scaling;
  CAFFE_EMU_RETURN_IF_FAILED(CheckCall(call, alpha, beta, db_out, {dy_in}, &scaling));
  DeviceAccess access;
  const std::vector<double> dys = Load(dy_in);
  const long channels = dy_layout.dims[1], inner = Product(dy_layout.dims, 2);
  std::vector<double> sums(channels, 0.0);
  for (size_t i = 0; i < dys.size(); ++i) sums[i / inner % channels] += dys[i];
  Store(db_out, sums, scaling);
  return kSuccess;
}

// ---- Element-wise, pooling and normalization ----

// C = A broadcast along its unit axes.
cudnnStatus_t cudnnAddTensor(cudnnHandle_t handle, const void* alpha,
                             const cudnnTensorDescriptor_t aDesc, const void* A, const void* beta,
                             const cudnnTensorDescriptor_t cDesc, void* C) {
  const char* call = "cudnnAddTensor";
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "A's descriptor", aDesc && aDesc->set));
  CAFFE_EMU_RETURN_IF_FAILED(CheckSet(call, "C's descriptor", cDesc && cDesc->set));
  const Layout a_layout = TensorLayout(aDesc), c_layout = TensorLayout(cDesc);
  bool broadcastable = a_layout.dims.size() == c_layout.dims.size();
  for (size_t i = 0; broadcastable && i < a_layout.dims.size(); ++i) {
    broadcastable = a_layout.dims[i] == 1 || a_layout.dims[i] == c_layout.dims[i];
  }
  if (a_layout.type != c_layout.type || !broadcastable) {
    return Reject(kBadParam, call, "A (%s %s) does not broadcast to C (%s %s)",
                  TypeName(a_layout.type), Dims(a_layout.dims).c_str(), TypeName(c_layout.type),
                  Dims(c_layout.dims).c_str());
  }
  if (c_layout.dims.size() > 5) {
    return Reject(kNotSupported, call, "C is %s: more than 5 dims", Dims(c_layout.dims).c_str());
  }
  const Operand a_in{"A", &a_layout, A}, c_out{"C", &c_layout, C};
  Scaling scaling;
  CAFFE_EMU_RETURN_IF_FAILED(CheckCall(call, alpha, beta, c_out, {a_in}, &scaling));
  DeviceAccess access;
  const std::vector<double> as = Load(a_in);
  const std::vector<long> from = BroadcastIndices(a_layout.dims, c_layout.dims);
  std::vector<double> result(from.size());
  for (size_t i = 0; i < from.size(); ++i) result[i] = as[from[i]];
  Store(c_out, result, scaling);
  return kSuccess;
}

cudnnStatus_t cudnnPoolingForward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t poolingDesc,
                                  const void* alpha, const cudnnTensorDescriptor_t xDesc,
                                  const void* x, const void* beta,
                                  const cudnnTensorDescriptor_t yDesc, void* y) {
  const char* call = "cudnnPoolingForward";
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  PoolPlan plan;
  CAFFE_EMU_RETURN_IF_FAILED(PlanPooling(call, poolingDesc, xDesc, yDesc, &plan));
  const Operand x_in{"x", &plan.x, x}, y_out{"y", &plan.y, y};
  Scaling scaling;
  CAFFE_EMU_RETURN_IF_FAILED(CheckCall(call, alpha, beta, y_out, {x_in}, &scaling));
  DeviceAccess access;
  const std::vector<double> xs = Load(x_in);
  std::vector<double> ys(plan.y.count());
  const cudnnPoolingMode_t mode = poolingDesc->mode;
  const bool propagate_nan = poolingDesc->nan == CUDNN_PROPAGATE_NAN;
  ForEachWindow(plan, [&](long yi, const std::vector<long>& members) {
    if (IsMax(mode)) {
      double best = -std::numeric_limits<double>::infinity();
      bool saw_nan = false;
      for (long m : members) {
        saw_nan |= std::isnan(xs[m]);
        if (!std::isnan(xs[m])) best = std::max(best, xs[m]);
      }
      ys[yi] = saw_nan && propagate_nan ? std::numeric_limits<double>::quiet_NaN() : best;
    } else {
      double sum = 0;
      for (long m : members) sum += xs[m];
      ys[yi] = sum / AverageCount(mode, plan, members.size());
    }
  });
  Store(y_out, ys, scaling);
  return kSuccess;
}

cudnnStatus_t cudnnPoolingBackward(cudnnHandle_t handle, const cudnnPoolingDescriptor_t poolingDesc,
                                   const void* alpha, const cudnnTensorDescriptor_t yDesc,
                                   const void* y, const cudnnTensorDescriptor_t dyDesc,
                                   const void* dy, const cudnnTensorDescriptor_t xDesc,
                                   const void* x, const void* beta,
                                   const cudnnTensorDescriptor_t dxDesc, void* dx) {
  const char* call = "cudnnPoolingBackward";
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  PoolPlan plan;
  CAFFE_EMU_RETURN_IF_FAILED(PlanPooling(call, poolingDesc, xDesc, yDesc, &plan));
  std::vector<Layout> outputs, inputs;  // y and dy, x and dx
  CAFFE_EMU_RETURN_IF_FAILED(CheckAlike(call, {{"y", yDesc}, {"dy", dyDesc}}, &outputs));
  CAFFE_EMU_RETURN_IF_FAILED(CheckAlike(call, {{"x", xDesc}, {"dx", dxDesc}}, &inputs));
  const Operand y_in{"y", &plan.y, y}, dy_in{"dy", &outputs[1], dy}, x_in{"x", &plan.x, x};
  const Operand dx_out{"dx", &inputs[1], dx};
  Scaling scaling;
  CAFFE_EMU_RETURN_IF_FAILED(CheckCall(call, alpha, beta, dx_out, {y_in, dy_in, x_in}, &scaling));
  DeviceAccess access;
  const std::vector<double> ys = Load(y_in), dys = Load(dy_in), xs = Load(x_in);
  std::vector<double> dxs(plan.x.count(), 0.0);
  const cudnnPoolingMode_t mode = poolingDesc->mode;
  ForEachWindow(plan, [&](long yi, const std::vector<long>& members) {
    if (IsMax(mode)) {
      // The gradient goes to the window's first element that equals y: found from the x and y
      // given, so a y that is not this x's maximum routes it nowhere.
      for (long m : members) {
        if (xs[m] == ys[yi]) {
          dxs[m] += dys[yi];
          break;
        }
      }
    } else {
      const double share = dys[yi] / AverageCount(mode, plan, members.size());
      for (long m : members) dxs[m] += share;
    }
  });
  Store(dx_out, dxs, scaling);
  return kSuccess;
}

// y = x / (k + alpha / lrnN * sum over the window of x^2)^beta (cuDNN divides alpha by lrnN).
cudnnStatus_t cudnnLRNCrossChannelForward(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc,
                                          cudnnLRNMode_t lrnMode, const void* alpha,
                                          const cudnnTensorDescriptor_t xDesc, const void* x,
                                          const void* beta, const cudnnTensorDescriptor_t yDesc,
                                          void* y) {
  const char* call = "cudnnLRNCrossChannelForward";
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  std::vector<Layout> layouts;
  CAFFE_EMU_RETURN_IF_FAILED(CheckAlike(call, {{"x", xDesc}, {"y", yDesc}}, &layouts));
  CAFFE_EMU_RETURN_IF_FAILED(CheckLrn(call, normDesc, lrnMode, layouts[0]));
  const Operand x_in{"x", &layouts[0], x}, y_out{"y", &layouts[1], y};
  Scaling scaling;
  CAFFE_EMU_RETURN_IF_FAILED(CheckCall(call, alpha, beta, y_out, {x_in}, &scaling));
  DeviceAccess access;
  std::vector<double> values = Load(x_in);
  const std::vector<double> scale = LrnScale(*normDesc, layouts[0].dims, values);
  for (size_t i = 0; i < values.size(); ++i) values[i] *= std::pow(scale[i], -normDesc->beta);
  Store(y_out, values, scaling);
  return kSuccess;
}

// dx_j = dy_j * scale_j^-beta - 2 * alpha * beta / lrnN * x_j * sum_i(dy_i * y_i / scale_i),
// i over the channels whose windows hold j.
cudnnStatus_t cudnnLRNCrossChannelBackward(cudnnHandle_t handle, cudnnLRNDescriptor_t normDesc,
                                           cudnnLRNMode_t lrnMode, const void* alpha,
                                           const cudnnTensorDescriptor_t yDesc, const void* y,
                                           const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                           const cudnnTensorDescriptor_t xDesc, const void* x,
                                           const void* beta, const cudnnTensorDescriptor_t dxDesc,
                                           void* dx) {
  const char* call = "cudnnLRNCrossChannelBackward";
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  std::vector<Layout> layouts;
  CAFFE_EMU_RETURN_IF_FAILED(
      CheckAlike(call, {{"x", xDesc}, {"y", yDesc}, {"dy", dyDesc}, {"dx", dxDesc}}, &layouts));
  CAFFE_EMU_RETURN_IF_FAILED(CheckLrn(call, normDesc, lrnMode, layouts[0]));
  const Operand x_in{"x", &layouts[0], x}, y_in{"y", &layouts[1], y};
  const Operand dy_in{"dy", &layouts[2], dy}, dx_out{"dx", &layouts[3], dx};
  Scaling scaling;
  CAFFE_EMU_RETURN_IF_FAILED(CheckCall(call, alpha, beta, dx_out, {y_in, dy_in, x_in}, &scaling));
  DeviceAccess access;
  const std::vector<double> xs = Load(x_in), ys = Load(y_in), dys = Load(dy_in);
  const std::vector<int>& dims = layouts[0].dims;
  const std::vector<double> scale = LrnScale(*normDesc, dims, xs);
  const int channels = dims[1];
  const long inner = Product(dims, 2);
  const LrnWindow window(normDesc->n);
  const double ratio = 2 * normDesc->alpha * normDesc->beta / normDesc->n;
  std::vector<double> dxs(xs.size());
  for (long plane = 0; plane < dims[0]; ++plane) {
    for (int j = 0; j < channels; ++j) {
      for (long s = 0; s < inner; ++s) {
        double sum = 0;
        // Channel j lies in the windows of channels [j - ahead, j + behind].
        const int first = std::max(0, j - window.ahead);
        const int last = std::min(channels - 1, j + window.behind);
        for (int i = first; i <= last; ++i) {
          const long at = (plane * channels + i) * inner + s;
          sum += dys[at] * ys[at] / scale[at];
        }
        const long at = (plane * channels + j) * inner + s;
        dxs[at] = dys[at] * std::pow(scale[at], -normDesc->beta) - ratio * xs[at] * sum;
      }
    }
  }
  Store(dx_out, dxs, scaling);
  return kSuccess;
}

cudnnStatus_t cudnnActivationForward(cudnnHandle_t handle,
                                     cudnnActivationDescriptor_t activationDesc, const void* alpha,
                                     const cudnnTensorDescriptor_t xDesc, const void* x,
                                     const void* beta, const cudnnTensorDescriptor_t yDesc,
                                     void* y) {
  const char* call = "cudnnActivationForward";
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  CAFFE_EMU_RETURN_IF_FAILED(
      CheckSet(call, "the activation descriptor", activationDesc && activationDesc->set));
  std::vector<Layout> layouts;
  CAFFE_EMU_RETURN_IF_FAILED(CheckAlike(call, {{"x", xDesc}, {"y", yDesc}}, &layouts));
  const Operand x_in{"x", &layouts[0], x}, y_out{"y", &layouts[1], y};
  Scaling scaling;
  // "In-place operation is allowed": x may be y, with identical descriptors.
  CAFFE_EMU_RETURN_IF_FAILED(CheckCall(call, alpha, beta, y_out, {x_in}, &scaling, "x"));
  DeviceAccess access;
  std::vector<double> values = Load(x_in);
  for (double& value : values) value = Activate(*activationDesc, value);
  Store(y_out, values, scaling);
  return kSuccess;
}

cudnnStatus_t cudnnActivationBackward(cudnnHandle_t handle,
                                      cudnnActivationDescriptor_t activationDesc, const void* alpha,
                                      const cudnnTensorDescriptor_t yDesc, const void* y,
                                      const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                      const cudnnTensorDescriptor_t xDesc, const void* x,
                                      const void* beta, const cudnnTensorDescriptor_t dxDesc,
                                      void* dx) {
  const char* call = "cudnnActivationBackward";
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  CAFFE_EMU_RETURN_IF_FAILED(
      CheckSet(call, "the activation descriptor", activationDesc && activationDesc->set));
  std::vector<Layout> layouts;
  CAFFE_EMU_RETURN_IF_FAILED(
      CheckAlike(call, {{"x", xDesc}, {"y", yDesc}, {"dy", dyDesc}, {"dx", dxDesc}}, &layouts));
  const Operand x_in{"x", &layouts[0], x}, y_in{"y", &layouts[1], y};
  const Operand dy_in{"dy", &layouts[2], dy}, dx_out{"dx", &layouts[3], dx};
  Scaling scaling;
  // "In-place operation is allowed": dy may be dx, with identical descriptors.
  CAFFE_EMU_RETURN_IF_FAILED(
      CheckCall(call, alpha, beta, dx_out, {y_in, dy_in, x_in}, &scaling, "dy"));
  DeviceAccess access;
  const std::vector<double> xs = Load(x_in), ys = Load(y_in), dys = Load(dy_in);
  std::vector<double> dxs(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    dxs[i] = ActivateBackward(*activationDesc, xs[i], ys[i], dys[i]);
  }
  Store(dx_out, dxs, scaling);
  return kSuccess;
}

cudnnStatus_t cudnnSoftmaxForward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                  cudnnSoftmaxMode_t mode, const void* alpha,
                                  const cudnnTensorDescriptor_t xDesc, const void* x,
                                  const void* beta, const cudnnTensorDescriptor_t yDesc, void* y) {
  const char* call = "cudnnSoftmaxForward";
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  std::vector<Layout> layouts;
  CAFFE_EMU_RETURN_IF_FAILED(CheckAlike(call, {{"x", xDesc}, {"y", yDesc}}, &layouts));
  SoftmaxShape shape;
  CAFFE_EMU_RETURN_IF_FAILED(PlanSoftmax(call, algo, mode, layouts[0], &shape));
  const Operand x_in{"x", &layouts[0], x}, y_out{"y", &layouts[1], y};
  Scaling scaling;
  CAFFE_EMU_RETURN_IF_FAILED(CheckCall(call, alpha, beta, y_out, {x_in}, &scaling));
  DeviceAccess access;
  const std::vector<double> xs = Load(x_in);
  std::vector<double> ys(xs.size());
  for (long o = 0; o < shape.outer; ++o) {
    for (long i = 0; i < shape.inner; ++i) {
      // FAST exponentiates x as it is; ACCURATE and LOG subtract the maximum first.
      double shift = algo == CUDNN_SOFTMAX_FAST ? 0 : -std::numeric_limits<double>::infinity();
      for (long c = 0; algo != CUDNN_SOFTMAX_FAST && c < shape.channels; ++c) {
        shift = std::max(shift, xs[SoftmaxIndex(shape, o, c, i)]);
      }
      double sum = 0;
      for (long c = 0; c < shape.channels; ++c) {
        sum += std::exp(xs[SoftmaxIndex(shape, o, c, i)] - shift);
      }
      for (long c = 0; c < shape.channels; ++c) {
        const long at = SoftmaxIndex(shape, o, c, i);
        ys[at] = algo == CUDNN_SOFTMAX_LOG ? xs[at] - shift - std::log(sum)
                                           : std::exp(xs[at] - shift) / sum;
      }
    }
  }
  Store(y_out, ys, scaling);
  return kSuccess;
}

// dx = y * (dy - sum over the group of dy * y); for LOG, dx = dy - exp(y) * (sum of dy).
cudnnStatus_t cudnnSoftmaxBackward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                   cudnnSoftmaxMode_t mode, const void* alpha,
                                   const cudnnTensorDescriptor_t yDesc, const void* y,
                                   const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                   const void* beta, const cudnnTensorDescriptor_t dxDesc,
                                   void* dx) {
  const char* call = "cudnnSoftmaxBackward";
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  std::vector<Layout> layouts;
  CAFFE_EMU_RETURN_IF_FAILED(
      CheckAlike(call, {{"y", yDesc}, {"dy", dyDesc}, {"dx", dxDesc}}, &layouts));
  SoftmaxShape shape;
  CAFFE_EMU_RETURN_IF_FAILED(PlanSoftmax(call, algo, mode, layouts[0], &shape));
  const Operand y_in{"y", &layouts[0], y}, dy_in{"dy", &layouts[1], dy};
  const Operand dx_out{"dx", &layouts[2], dx};
  Scaling scaling;
  CAFFE_EMU_RETURN_IF_FAILED(CheckCall(call, alpha, beta, dx_out, {y_in, dy_in}, &scaling));
  DeviceAccess access;
  const std::vector<double> ys = Load(y_in), dys = Load(dy_in);
  std::vector<double> dxs(ys.size());
  for (long o = 0; o < shape.outer; ++o) {
    for (long i = 0; i < shape.inner; ++i) {
      double sum = 0;
      for (long c = 0; c < shape.channels; ++c) {
        const long at = SoftmaxIndex(shape, o, c, i);
        sum += algo == CUDNN_SOFTMAX_LOG ? dys[at] : dys[at] * ys[at];
      }
      for (long c = 0; c < shape.channels; ++c) {
        const long at = SoftmaxIndex(shape, o, c, i);
        dxs[at] =
            algo == CUDNN_SOFTMAX_LOG ? dys[at] - std::exp(ys[at]) * sum : ys[at] * (dys[at] - sum);
      }
    }
  }
  Store(dx_out, dxs, scaling);
  return kSuccess;
}
