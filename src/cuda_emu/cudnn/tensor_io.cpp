// The emulated cuDNN's tensor I/O (cudnn/internal.hpp): the checks every computing call makes of
// its operands (device memory, no output overlapping an input, host scalars), reading a tensor
// through its strides, and blending a result into one (alpha * result + beta * out).
#include <cudnn.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "cudnn/internal.hpp"
#include "emu_state.hpp"

namespace caffe_emu {

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

// ---- Declared in cudnn/internal.hpp ----

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

}  // namespace caffe_emu
