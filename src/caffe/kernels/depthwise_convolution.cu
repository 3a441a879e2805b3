// Depthwise 2-D convolution on the GPU (the _gpu half of depthwise_convolution.hpp; legend there).
// Caffe's engine runs these layers as im2col plus one cuBLAS GEMM of a single output row per
// group, so a 1024-channel layer made 1024 GEMM calls per image; here each pass is one kernel.
// - Forward: one thread per output value sums its window.
// - Input gradient: one thread per input value gathers the outputs whose windows read it, so no
//   atomics are needed and the result is deterministic.
// - Weight gradient: one block per (output channel, tap); its threads take strided shares of the
//   N x OH x OW products and BlockReduce sums them in a fixed order, then the sum is added.
#include <climits>

#include "caffe/common.hpp"
#include "caffe/kernels/depthwise_convolution.hpp"
#include "caffe/kernels/gpu_block_reduce.cuh"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void DepthwiseForwardKernel(const int n, const DepthwiseGeometry g, const Dtype* x,
                                       const Dtype* w, const Dtype* bias, Dtype* y) {
  const int outputs = g.channels * g.multiplier;
  CUDA_KERNEL_LOOP(index, n) {
    const int ow = index % g.out_width;
    const int oh = (index / g.out_width) % g.out_height;
    const int o = (index / (g.out_width * g.out_height)) % outputs;
    const int image = index / (g.out_width * g.out_height * outputs);
    const Dtype* plane =
        x + (static_cast<long>(image) * g.channels + o / g.multiplier) * g.height * g.width;
    const Dtype* filter = w + static_cast<long>(o) * g.kernel_h * g.kernel_w;
    const int h0 = oh * g.stride_h - g.pad_h;
    const int w0 = ow * g.stride_w - g.pad_w;
    Dtype sum = 0;
    for (int i = 0; i < g.kernel_h; ++i) {
      const int h = h0 + i * g.dilation_h;
      if (h < 0 || h >= g.height) continue;
      for (int j = 0; j < g.kernel_w; ++j) {
        const int col = w0 + j * g.dilation_w;
        if (col >= 0 && col < g.width) sum += filter[i * g.kernel_w + j] * plane[h * g.width + col];
      }
    }
    y[index] = bias ? sum + bias[o] : sum;
  }
}

template <typename Dtype>
__global__ void DepthwiseBackwardDataKernel(const int n, const DepthwiseGeometry g, const Dtype* dy,
                                            const Dtype* w, Dtype* dx) {
  const int out_plane = g.out_height * g.out_width;
  CUDA_KERNEL_LOOP(index, n) {
    const int col = index % g.width;
    const int h = (index / g.width) % g.height;
    const int c = (index / (g.width * g.height)) % g.channels;
    const int image = index / (g.width * g.height * g.channels);
    Dtype sum = 0;
    for (int m = 0; m < g.multiplier; ++m) {
      const int o = c * g.multiplier + m;
      const Dtype* dy_plane =
          dy + (static_cast<long>(image) * g.channels * g.multiplier + o) * out_plane;
      const Dtype* filter = w + static_cast<long>(o) * g.kernel_h * g.kernel_w;
      for (int i = 0; i < g.kernel_h; ++i) {
        // Tap i reads row h from output row oh when oh * stride_h - pad_h + i * dilation_h == h.
        const int h_span = h + g.pad_h - i * g.dilation_h;
        if (h_span < 0 || h_span % g.stride_h != 0) continue;
        const int oh = h_span / g.stride_h;
        if (oh >= g.out_height) continue;
        for (int j = 0; j < g.kernel_w; ++j) {
          const int w_span = col + g.pad_w - j * g.dilation_w;
          if (w_span < 0 || w_span % g.stride_w != 0) continue;
          const int ow = w_span / g.stride_w;
          if (ow < g.out_width) sum += filter[i * g.kernel_w + j] * dy_plane[oh * g.out_width + ow];
        }
      }
    }
    dx[index] = sum;
  }
}

template <typename Dtype>
__global__ void DepthwiseBackwardWeightsKernel(const DepthwiseGeometry g, const Dtype* dy,
                                               const Dtype* x, Dtype* dw) {
  const int taps = g.kernel_h * g.kernel_w;
  const int o = blockIdx.x / taps;
  const int i = (blockIdx.x % taps) / g.kernel_w;
  const int j = blockIdx.x % g.kernel_w;
  const int outputs = g.channels * g.multiplier;
  const int out_plane = g.out_height * g.out_width;
  const long positions = static_cast<long>(g.num) * out_plane;
  Dtype sum = 0;
  for (long p = threadIdx.x; p < positions; p += blockDim.x) {
    const int image = static_cast<int>(p / out_plane);
    const int oh = static_cast<int>(p % out_plane) / g.out_width;
    const int ow = static_cast<int>(p % g.out_width);
    const int h = oh * g.stride_h - g.pad_h + i * g.dilation_h;
    const int col = ow * g.stride_w - g.pad_w + j * g.dilation_w;
    if (h < 0 || h >= g.height || col < 0 || col >= g.width) continue;
    const long x_plane = static_cast<long>(image) * g.channels + o / g.multiplier;
    sum += dy[(static_cast<long>(image) * outputs + o) * out_plane + oh * g.out_width + ow] *
           x[(x_plane * g.height + h) * g.width + col];
  }
  sum = BlockReduce(sum, BlockSumOp());
  if (threadIdx.x == 0) dw[blockIdx.x] += sum;
}

}  // namespace

template <typename Dtype>
void DepthwiseForwardGpu(const DepthwiseGeometry& g, const Dtype* x, const Dtype* w,
                         const Dtype* bias, Dtype* y) {
  const long values =
      static_cast<long>(g.num) * g.channels * g.multiplier * g.out_height * g.out_width;
  if (values <= 0) return;
  CHECK_LE(values, static_cast<long>(INT_MAX)) << "a blob of over 2^31 values";
  const int n = static_cast<int>(values);
  DepthwiseForwardKernel<Dtype>
      <<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(n, g, x, w, bias, y);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void DepthwiseBackwardDataGpu(const DepthwiseGeometry& g, const Dtype* dy, const Dtype* w,
                              Dtype* dx) {
  const long values = static_cast<long>(g.num) * g.channels * g.height * g.width;
  if (values <= 0) return;
  CHECK_LE(values, static_cast<long>(INT_MAX)) << "a blob of over 2^31 values";
  const int n = static_cast<int>(values);
  DepthwiseBackwardDataKernel<Dtype>
      <<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(n, g, dy, w, dx);
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void DepthwiseBackwardWeightsGpu(const DepthwiseGeometry& g, const Dtype* dy, const Dtype* x,
                                 Dtype* dw) {
  const int blocks = g.channels * g.multiplier * g.kernel_h * g.kernel_w;
  if (blocks <= 0 || g.num <= 0) return;
  DepthwiseBackwardWeightsKernel<Dtype><<<blocks, kBlockReduceThreads>>>(g, dy, x, dw);
  CUDA_POST_KERNEL_CHECK;
}

#define INSTANTIATE_DEPTHWISE_GPU(Dtype)                                                         \
  template void DepthwiseForwardGpu<Dtype>(const DepthwiseGeometry&, const Dtype*, const Dtype*, \
                                           const Dtype*, Dtype*);                                \
  template void DepthwiseBackwardDataGpu<Dtype>(const DepthwiseGeometry&, const Dtype*,          \
                                                const Dtype*, Dtype*);                           \
  template void DepthwiseBackwardWeightsGpu<Dtype>(const DepthwiseGeometry&, const Dtype*,       \
                                                   const Dtype*, Dtype*)
INSTANTIATE_DEPTHWISE_GPU(float);
INSTANTIATE_DEPTHWISE_GPU(double);

}  // namespace caffe
