// The emulated cuDNN's local response normalization across channels: the LRN descriptor (with
// cudnnCreateLRNDescriptor's defaults), forward and backward, as cuDNN defines it (alpha divided
// by the window size).
//
// Legend: N images, C channels, x input, y output, dx/dy gradients.
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cudnn/internal.hpp"
#include "cudnn/queue.hpp"

// cudnnCreateLRNDescriptor's defaults.
struct cudnnLRNStruct {
  unsigned n = 5;
  double alpha = 1e-4, beta = 0.75, k = 2.0;
};

namespace caffe_emu {
namespace {

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

}  // namespace
}  // namespace caffe_emu

using namespace caffe_emu;  // NOLINT: the C API below only forwards to it

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
