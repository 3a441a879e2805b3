// The emulated cuDNN's convolution passes: forward, backward data, backward filter (each a sum
// over the convolution's taps, with the algorithm and workspace the caller chose) and backward
// bias. A pass checks that its workspace is device memory of at least the size the getters
// report, and fills it with NaN before computing, as a GPU's scratch holds garbage.
//
// Legend: N images, C channels of x, K filters (channels of y), G groups, x input, y output,
// w filters (K, C / G, spatial...), dx/dy/dw/db gradients.
#include <cudnn.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cudnn/convolution.hpp"
#include "cudnn/convolution_algorithms.hpp"
#include "cudnn/internal.hpp"
#include "cudnn/queue.hpp"

namespace caffe_emu {
namespace {

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

// The workspace holds garbage on a GPU; here NaN, so that no result can depend on it.
void Scribble(void* workspace, size_t bytes) {
  if (bytes > 0) std::memset(workspace, 0xff, bytes);
}

}  // namespace

cudnnStatus_t RunConvolutionPass(const char* call, Pass pass, cudnnHandle_t handle, int algo,
                                 cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                                 cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y,
                                 void* workspace, size_t workspace_bytes, const void* alpha,
                                 const void* beta, const std::array<const char*, 3>& names,
                                 const std::array<const void*, 3>& data) {
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  ConvPlan plan;
  CAFFE_EMU_RETURN_IF_FAILED(PlanConvolution(call, x, w, conv, y, &plan));
  size_t needed = 0;
  CAFFE_EMU_RETURN_IF_FAILED(
      CheckAlgorithm(call, pass, algo, plan, workspace, workspace_bytes, &needed));
  const int out = pass == Pass::kForward ? 2 : pass == Pass::kBackwardData ? 0 : 1;
  const int a = out == 0 ? 1 : 0, b = out == 2 ? 1 : 2;  // the inputs, in x, w, y order
  const std::array<const Layout*, 3> layouts = {&plan.x, &plan.w, &plan.y};
  const Operand in_a{names[a], layouts[a], data[a]}, in_b{names[b], layouts[b], data[b]};
  const Operand output{names[out], layouts[out], data[out]};
  Scaling scaling;
  CAFFE_EMU_RETURN_IF_FAILED(CheckCall(call, alpha, beta, output, {in_a, in_b}, &scaling));
  CAFFE_EMU_CUDNN_COMPUTE;
  Scribble(workspace, needed);
  const std::vector<double> as = LoadOperand(plan, in_a), bs = LoadOperand(plan, in_b);
  std::vector<double> result(layouts[out]->count(), 0.0);
  ForEachTap(plan, [&](long xi, long wi, long yi) {
    const long at[3] = {xi, wi, yi};
    result[at[out]] += as[at[a]] * bs[at[b]];
  });
  Store(output, result, scaling);
  return kSuccess;
}

}  // namespace caffe_emu

using namespace caffe_emu;  // NOLINT: the C API below only forwards to it

// y = conv(x, w).
cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void* alpha,
                                      const cudnnTensorDescriptor_t xDesc, const void* x,
                                      const cudnnFilterDescriptor_t wDesc, const void* w,
                                      const cudnnConvolutionDescriptor_t convDesc,
                                      cudnnConvolutionFwdAlgo_t algo, void* workSpace,
                                      size_t workSpaceSizeInBytes, const void* beta,
                                      const cudnnTensorDescriptor_t yDesc, void* y) {
  CAFFE_EMU_CUDNN_QUEUED(cudnnConvolutionForward, handle, alpha, xDesc, x, wDesc, w, convDesc, algo,
                         workSpace, workSpaceSizeInBytes, beta, yDesc, y);
  return RunConvolutionPass("cudnnConvolutionForward", Pass::kForward, handle, algo, xDesc, wDesc,
                            convDesc, yDesc, workSpace, workSpaceSizeInBytes, alpha, beta,
                            {"x", "w", "y"}, {x, w, y});
}

// dx = the adjoint of conv(., w) applied to dy.
cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t handle, const void* alpha,
                                           const cudnnFilterDescriptor_t wDesc, const void* w,
                                           const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                           const cudnnConvolutionDescriptor_t convDesc,
                                           cudnnConvolutionBwdDataAlgo_t algo, void* workSpace,
                                           size_t workSpaceSizeInBytes, const void* beta,
                                           const cudnnTensorDescriptor_t dxDesc, void* dx) {
  CAFFE_EMU_CUDNN_QUEUED(cudnnConvolutionBackwardData, handle, alpha, wDesc, w, dyDesc, dy,
                         convDesc, algo, workSpace, workSpaceSizeInBytes, beta, dxDesc, dx);
  return RunConvolutionPass("cudnnConvolutionBackwardData", Pass::kBackwardData, handle, algo,
                            dxDesc, wDesc, convDesc, dyDesc, workSpace, workSpaceSizeInBytes, alpha,
                            beta, {"dx", "w", "dy"}, {dx, w, dy});
}

// dw = the gradient of sum(dy * conv(x, w)) by w.
cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void* alpha,
                                             const cudnnTensorDescriptor_t xDesc, const void* x,
                                             const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                             const cudnnConvolutionDescriptor_t convDesc,
                                             cudnnConvolutionBwdFilterAlgo_t algo, void* workSpace,
                                             size_t workSpaceSizeInBytes, const void* beta,
                                             const cudnnFilterDescriptor_t dwDesc, void* dw) {
  CAFFE_EMU_CUDNN_QUEUED(cudnnConvolutionBackwardFilter, handle, alpha, xDesc, x, dyDesc, dy,
                         convDesc, algo, workSpace, workSpaceSizeInBytes, beta, dwDesc, dw);
  return RunConvolutionPass("cudnnConvolutionBackwardFilter", Pass::kBackwardFilter, handle, algo,
                            xDesc, dwDesc, convDesc, dyDesc, workSpace, workSpaceSizeInBytes, alpha,
                            beta, {"x", "dw", "dy"}, {x, dw, dy});
}

// db[k] = the sum of dy over images and positions of channel k.
cudnnStatus_t cudnnConvolutionBackwardBias(cudnnHandle_t handle, const void* alpha,
                                           const cudnnTensorDescriptor_t dyDesc, const void* dy,
                                           const void* beta, const cudnnTensorDescriptor_t dbDesc,
                                           void* db) {
  CAFFE_EMU_CUDNN_QUEUED(cudnnConvolutionBackwardBias, handle, alpha, dyDesc, dy, beta, dbDesc, db);
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
  CAFFE_EMU_CUDNN_COMPUTE;
  const std::vector<double> dys = Load(dy_in);
  const long channels = dy_layout.dims[1], inner = Product(dy_layout.dims, 2);
  std::vector<double> sums(channels, 0.0);
  for (size_t i = 0; i < dys.size(); ++i) sums[i / inner % channels] += dys[i];
  Store(db_out, sums, scaling);
  return kSuccess;
}
