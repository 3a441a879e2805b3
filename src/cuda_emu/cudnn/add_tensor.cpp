// The emulated cuDNN's cudnnAddTensor: C = alpha * A + beta * C, A repeated along its unit axes
// (how Caffe adds a bias).
#include <cudnn.h>

#include <vector>

#include "cudnn/internal.hpp"
#include "cudnn/queue.hpp"

namespace caffe_emu {
namespace {

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

using namespace caffe_emu;  // NOLINT: the C API below only forwards to it

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
