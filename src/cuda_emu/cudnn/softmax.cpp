// The emulated cuDNN's softmax, forward and backward: over the channels at each position or over
// each image's whole instance, in the FAST, ACCURATE and LOG forms.
//
// Legend: x input, y output, dx/dy gradients; a group's `channels` values lie `inner` apart.
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cudnn/internal.hpp"
#include "cudnn/queue.hpp"

namespace caffe_emu {
namespace {

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

}  // namespace
}  // namespace caffe_emu

using namespace caffe_emu;  // NOLINT: the C API below only forwards to it

cudnnStatus_t cudnnSoftmaxForward(cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo,
                                  cudnnSoftmaxMode_t mode, const void* alpha,
                                  const cudnnTensorDescriptor_t xDesc, const void* x,
                                  const void* beta, const cudnnTensorDescriptor_t yDesc, void* y) {
  CAFFE_EMU_CUDNN_QUEUED(cudnnSoftmaxForward, handle, algo, mode, alpha, xDesc, x, beta, yDesc, y);
  const char* call = "cudnnSoftmaxForward";
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  std::vector<Layout> layouts;
  CAFFE_EMU_RETURN_IF_FAILED(CheckAlike(call, {{"x", xDesc}, {"y", yDesc}}, &layouts));
  SoftmaxShape shape{};  // PlanSoftmax sets it; {}: this file cannot see that Reject fails
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
  SoftmaxShape shape{};
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
