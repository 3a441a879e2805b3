// The emulated cuDNN's pooling: the pooling descriptor, and forward and backward of max and
// average pooling (with or without the padding in the count), 2-D or 3-D.
//
// Legend: N images, C channels, x input, y output, dx/dy gradients.
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cudnn/internal.hpp"
#include "cudnn/queue.hpp"

struct cudnnPoolingStruct {
  bool set = false;
  cudnnPoolingMode_t mode = CUDNN_POOLING_MAX;
  cudnnNanPropagation_t nan = CUDNN_NOT_PROPAGATE_NAN;
  std::vector<int> window, pad, stride;  // one per spatial axis
};

namespace caffe_emu {
namespace {

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

}  // namespace
}  // namespace caffe_emu

using namespace caffe_emu;  // NOLINT: the C API below only forwards to it

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
