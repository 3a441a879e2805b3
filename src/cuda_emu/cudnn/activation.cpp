// The emulated cuDNN's activations: the activation descriptor, and forward and backward of ReLU,
// sigmoid, tanh, clipped ReLU and ELU (in place where cuDNN allows it).
//
// Legend: x input, y output, dx/dy gradients.
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cudnn/internal.hpp"
#include "cudnn/queue.hpp"

struct cudnnActivationStruct {
  bool set = false;
  cudnnActivationMode_t mode = CUDNN_ACTIVATION_RELU;
  cudnnNanPropagation_t nan = CUDNN_NOT_PROPAGATE_NAN;
  double coef = 0;  // clipped ReLU's ceiling, ELU's alpha
};

namespace caffe_emu {
namespace {

double Activate(const cudnnActivationStruct& f, double x) {
  if (std::isnan(x) &&
      (f.mode == CUDNN_ACTIVATION_RELU || f.mode == CUDNN_ACTIVATION_CLIPPED_RELU)) {
    return f.nan == CUDNN_PROPAGATE_NAN ? x : 0.0;
  }
  switch (f.mode) {
    case CUDNN_ACTIVATION_SIGMOID:
      return 1 / (1 + std::exp(-x));
    case CUDNN_ACTIVATION_RELU:
      return x > 0 ? x : 0.0;
    case CUDNN_ACTIVATION_TANH:
      return std::tanh(x);
    case CUDNN_ACTIVATION_CLIPPED_RELU:
      return std::min(x > 0 ? x : 0.0, f.coef);
    case CUDNN_ACTIVATION_ELU:
      return x > 0 ? x : f.coef * std::expm1(x);
  }
  return x;
}

// dy * f'(x), from the forward input x and output y: the ReLUs and ELU's positive side look
// at x, sigmoid, tanh and ELU's negative side at y.
double ActivateBackward(const cudnnActivationStruct& f, double x, double y, double dy) {
  switch (f.mode) {
    case CUDNN_ACTIVATION_SIGMOID:
      return dy * y * (1 - y);
    case CUDNN_ACTIVATION_RELU:
      return x > 0 ? dy : 0.0;
    case CUDNN_ACTIVATION_TANH:
      return dy * (1 - y * y);
    case CUDNN_ACTIVATION_CLIPPED_RELU:
      return x > 0 && x < f.coef ? dy : 0.0;
    case CUDNN_ACTIVATION_ELU:
      return x > 0 ? dy : dy * (y + f.coef);
  }
  return dy;
}

}  // namespace
}  // namespace caffe_emu

using namespace caffe_emu;  // NOLINT: the C API below only forwards to it

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
