// The CUDA emulator's cuDNN: descriptors hold what they were set to; each call checks its
// arguments as cuDNN documents (CUDNN_STATUS_BAD_PARAM or NOT_SUPPORTED, with the reason on
// stderr), checks that every tensor is device memory of the handle's GPU inside one allocation
// and that the output shares no element with an input (except where cuDNN allows the call in
// place), then computes the documented result in double with plain loops and blends it:
// out = alpha * result + beta * out, where out is not read when beta is 0 (it may hold NaN).
// alpha and beta are host pointers to float for float tensors, to double for double ones.
//
// This file: handles, the tensor, filter, pooling, LRN and activation descriptors, AddTensor,
// pooling, LRN, activations, softmax and the error strings, and the helpers both parts share
// (declared in cudnn_internal.hpp). Convolutions are in cudnn_convolution.cpp.
//
// Legend: N images, C channels, x input, y output, dx/dy gradients. Tensors are read into
// row-major (packed) arrays of double, whatever their strides, and written back through the
// strides.
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

#include "cudnn_internal.hpp"
#include "cudnn_queue.hpp"
#include "emu_state.hpp"
#include "streams.hpp"

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

namespace caffe_emu {

// ---- Checks shared with cudnn_convolution.cpp (cudnn_internal.hpp) ----

cudnnStatus_t Reject(cudnnStatus_t status, const char* call, const char* format, ...) {
  std::fprintf(stderr, "CUDA emulator: %s: ", call);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  return status;
}

std::string Dims(const std::vector<int>& dims) {
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "x" : "") + std::to_string(dims[i]);
  return text;
}

const char* TypeName(cudnnDataType_t type) {
  return type == CUDNN_DATA_FLOAT ? "float" : type == CUDNN_DATA_DOUBLE ? "double" : "half";
}

long Product(const std::vector<int>& values, size_t from) {
  long product = 1;
  for (size_t i = from; i < values.size(); ++i) product *= values[i];
  return product;
}

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

Layout TensorLayout(cudnnTensorDescriptor_t tensor) {
  return {tensor->type, tensor->dims,
          std::vector<long>(tensor->strides.begin(), tensor->strides.end())};
}

namespace {

// ---- Behind CheckCall and Store ----

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

// alpha and beta: host pointers to the tensors' element type.
cudnnStatus_t ReadScalars(const char* call, cudnnDataType_t type, const void* alpha,
                          const void* beta, Scaling* scaling) {
  if (!HostScalar(call, "alpha", alpha) || !HostScalar(call, "beta", beta)) return kBadParam;
  auto read = [type](const void* pointer) {
    return type == CUDNN_DATA_FLOAT ? *static_cast<const float*>(pointer)
                                    : *static_cast<const double*>(pointer);
  };
  scaling->alpha = read(alpha);
  scaling->beta = read(beta);
  return kSuccess;
}

template <typename T>
void Blend(const std::vector<long>& offsets, const std::vector<double>& result, double alpha,
           double beta, T* data) {
  for (size_t i = 0; i < offsets.size(); ++i) {
    // beta 0 does not read the output, which may hold anything.
    const double prior = beta == 0 ? 0.0 : beta * data[offsets[i]];
    data[offsets[i]] = static_cast<T>(alpha * result[i] + prior);
  }
}

}  // namespace

// ---- Tensor I/O shared with cudnn_convolution.cpp (cudnn_internal.hpp) ----

std::vector<double> Load(const Layout& layout, const void* data) {
  const std::vector<long> offsets = layout.Offsets();
  std::vector<double> values(offsets.size());
  for (size_t i = 0; i < offsets.size(); ++i) {
    values[i] = layout.type == CUDNN_DATA_FLOAT ? static_cast<const float*>(data)[offsets[i]]
                                                : static_cast<const double*>(data)[offsets[i]];
  }
  return values;
}

void Store(const Layout& layout, void* data, const std::vector<double>& result, double alpha,
           double beta) {
  if (layout.type == CUDNN_DATA_FLOAT) {
    Blend(layout.Offsets(), result, alpha, beta, static_cast<float*>(data));
  } else {
    Blend(layout.Offsets(), result, alpha, beta, static_cast<double*>(data));
  }
}

cudnnStatus_t CheckCall(const char* call, const void* alpha, const void* beta,
                        const Operand& output, std::initializer_list<Operand> inputs,
                        Scaling* scaling, const char* in_place) {
  CAFFE_EMU_RETURN_IF_FAILED(ReadScalars(call, output.layout->type, alpha, beta, scaling));
  CAFFE_EMU_RETURN_IF_FAILED(CheckOperands(call, inputs));
  CAFFE_EMU_RETURN_IF_FAILED(CheckOperands(call, {output}));
  return CheckSeparate(call, output, inputs, in_place);
}

namespace {

// ---- Shape checks ----

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

}  // namespace
}  // namespace caffe_emu

namespace caffe_emu {
thread_local CudnnRun cudnn_run = CudnnRun::kCall;
}  // namespace caffe_emu

using namespace caffe_emu;  // NOLINT: the C API below only forwards to it

// ---- Handles and descriptors ----

size_t cudnnGetVersion() { return CUDNN_VERSION; }

const char* cudnnGetErrorString(cudnnStatus_t status) {
  switch (status) {
    case CUDNN_STATUS_SUCCESS: return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_INTERNAL_ERROR: return "CUDNN_STATUS_INTERNAL_ERROR";
    case CUDNN_STATUS_EXECUTION_FAILED: return "CUDNN_STATUS_EXECUTION_FAILED";
    case CUDNN_STATUS_ALLOC_FAILED: return "CUDNN_STATUS_ALLOC_FAILED";
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
  Drain(handle->stream);  // its queued calls use it
  delete handle;
  return kSuccess;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId) {
  if (handle == nullptr) return Reject(kBadParam, "cudnnSetStream", "the handle is null");
  if (!KnownStream(streamId)) return Reject(kBadParam, "cudnnSetStream", "unknown stream");
  handle->stream = streamId;
  return kSuccess;
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

// ---- Element-wise, pooling and normalization ----

// C = A broadcast along its unit axes.
cudnnStatus_t cudnnAddTensor(cudnnHandle_t handle, const void* alpha,
                             const cudnnTensorDescriptor_t aDesc, const void* A, const void* beta,
                             const cudnnTensorDescriptor_t cDesc, void* C) {
  CAFFE_EMU_CUDNN_QUEUED(cudnnAddTensor, handle, alpha, aDesc, A, beta, cDesc, C);
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
  CAFFE_EMU_CUDNN_COMPUTE;
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
  CAFFE_EMU_CUDNN_QUEUED(cudnnPoolingForward, handle, poolingDesc, alpha, xDesc, x, beta, yDesc, y);
  const char* call = "cudnnPoolingForward";
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  PoolPlan plan;
  CAFFE_EMU_RETURN_IF_FAILED(PlanPooling(call, poolingDesc, xDesc, yDesc, &plan));
  const Operand x_in{"x", &plan.x, x}, y_out{"y", &plan.y, y};
  Scaling scaling;
  CAFFE_EMU_RETURN_IF_FAILED(CheckCall(call, alpha, beta, y_out, {x_in}, &scaling));
  CAFFE_EMU_CUDNN_COMPUTE;
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
  CAFFE_EMU_CUDNN_QUEUED(cudnnPoolingBackward, handle, poolingDesc, alpha, yDesc, y, dyDesc, dy,
                         xDesc, x, beta, dxDesc, dx);
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
  CAFFE_EMU_CUDNN_COMPUTE;
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
  CAFFE_EMU_CUDNN_QUEUED(cudnnLRNCrossChannelForward, handle, normDesc, lrnMode, alpha, xDesc, x,
                         beta, yDesc, y);
  const char* call = "cudnnLRNCrossChannelForward";
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  std::vector<Layout> layouts;
  CAFFE_EMU_RETURN_IF_FAILED(CheckAlike(call, {{"x", xDesc}, {"y", yDesc}}, &layouts));
  CAFFE_EMU_RETURN_IF_FAILED(CheckLrn(call, normDesc, lrnMode, layouts[0]));
  const Operand x_in{"x", &layouts[0], x}, y_out{"y", &layouts[1], y};
  Scaling scaling;
  CAFFE_EMU_RETURN_IF_FAILED(CheckCall(call, alpha, beta, y_out, {x_in}, &scaling));
  CAFFE_EMU_CUDNN_COMPUTE;
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
  CAFFE_EMU_CUDNN_QUEUED(cudnnLRNCrossChannelBackward, handle, normDesc, lrnMode, alpha, yDesc, y,
                         dyDesc, dy, xDesc, x, beta, dxDesc, dx);
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
  CAFFE_EMU_CUDNN_COMPUTE;
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
  CAFFE_EMU_CUDNN_QUEUED(cudnnActivationForward, handle, activationDesc, alpha, xDesc, x, beta,
                         yDesc, y);
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
  CAFFE_EMU_CUDNN_COMPUTE;
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
  CAFFE_EMU_CUDNN_QUEUED(cudnnActivationBackward, handle, activationDesc, alpha, yDesc, y, dyDesc,
                         dy, xDesc, x, beta, dxDesc, dx);
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
  CAFFE_EMU_CUDNN_COMPUTE;
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
  CAFFE_EMU_CUDNN_QUEUED(cudnnSoftmaxForward, handle, algo, mode, alpha, xDesc, x, beta, yDesc, y);
  const char* call = "cudnnSoftmaxForward";
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  std::vector<Layout> layouts;
  CAFFE_EMU_RETURN_IF_FAILED(CheckAlike(call, {{"x", xDesc}, {"y", yDesc}}, &layouts));
  SoftmaxShape shape;
  CAFFE_EMU_RETURN_IF_FAILED(PlanSoftmax(call, algo, mode, layouts[0], &shape));
  const Operand x_in{"x", &layouts[0], x}, y_out{"y", &layouts[1], y};
  Scaling scaling;
  CAFFE_EMU_RETURN_IF_FAILED(CheckCall(call, alpha, beta, y_out, {x_in}, &scaling));
  CAFFE_EMU_CUDNN_COMPUTE;
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
  CAFFE_EMU_CUDNN_QUEUED(cudnnSoftmaxBackward, handle, algo, mode, alpha, yDesc, y, dyDesc, dy,
                         beta, dxDesc, dx);
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
  CAFFE_EMU_CUDNN_COMPUTE;
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
