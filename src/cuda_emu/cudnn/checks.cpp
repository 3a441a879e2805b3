// The emulated cuDNN's argument and shape checks (cudnn/internal.hpp): each prints why a call
// fails, with the emulator's prefix, and returns the status cuDNN documents.
#include <cudnn.h>

#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

#include "cudnn/internal.hpp"
#include "emu_state.hpp"

namespace caffe_emu {

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

}  // namespace caffe_emu
