// DnnlConvolutionLayer's own Winograd side: 3x3 convolutions of stride 1 in fp32 on CPUs where
// oneDNN has no Winograd algorithm (it has one only for AVX-512), by kernels/winograd_convolution
// (F(4x4, 3x3): about half the time of oneDNN's direct kernels on AVX2 at 128 channels and more).
// The activations stay in whatever channel blocks the blobs hold; the output is left in the
// blocks oneDNN's forward would have written (TopBlock), as the oneDNN path leaves it.
#include <oneapi/dnnl/dnnl.hpp>

#include "caffe/kernels/winograd_convolution.hpp"
#include "caffe/layers/dnnl/dnnl_convolution_layer.hpp"
#include "caffe/util/environment.hpp"

namespace caffe {

namespace {

// Adds the sum of dy (N, K, S) over images and positions, per output, to bias_diff; dy in channel
// blocks of `block` (1: plain).
void AddBiasGradient(const float* dy, int block, int num, int outputs, size_t spatial,
                     float* bias_diff) {
  for (int n = 0; n < num; ++n) {
    for (int first = 0; first < outputs; first += block) {
      const float* values = dy + (static_cast<size_t>(n) * outputs + first) * spatial;
      // In double: a plane of 56 x 56 values and more would drift in fp32. The block's lanes
      // side by side, as they lie in memory.
      double sums[16] = {};
      for (size_t s = 0; s < spatial; ++s) {
        for (int lane = 0; lane < block; ++lane) sums[lane] += values[s * block + lane];
      }
      for (int lane = 0; lane < block; ++lane) bias_diff[first + lane] += sums[lane];
    }
  }
}

}  // namespace

bool DnnlConvolutionLayer::TakesOwnWinograd() const {
  if (!WinogradFromEnvironment() || num_spatial_axes_ != 2 || group_ != 1 ||
      this->forward_math() == BFLOAT16 || this->backward_math() == BFLOAT16) {
    return false;
  }
  // oneDNN's own Winograd runs where it has AVX-512 (the Primitives' fp32 algorithm).
  if (dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core) return false;
  for (int i = 0; i < 2; ++i) {
    if (kernel_shape_[i] != 3 || stride_[i] != 1 || dilation_[i] != 1) return false;
  }
  return WinogradTakes(WinogradGeometryFor(1, 1));
}

WinogradGeometry DnnlConvolutionLayer::WinogradGeometryFor(int in_block, int out_block) const {
  WinogradGeometry g;
  g.num = num_;
  g.channels = channels_;
  g.outputs = num_output_;
  // A 3x3 window at stride 1 makes H + 2 pad - 2 outputs.
  g.height = output_shape_[0] + 2 - 2 * pad_[0];
  g.width = output_shape_[1] + 2 - 2 * pad_[1];
  g.pad_h = pad_[0];
  g.pad_w = pad_[1];
  g.in_block = in_block;
  g.out_block = out_block;
  return g;
}

void DnnlConvolutionLayer::WinogradForward(const Blobs<float>& bottom, const Blobs<float>& top,
                                           const float* scales, const float* bias, bool relu,
                                           float slope) {
  for (size_t i = 0; i < bottom.size(); ++i) {
    const int src_block = bottom[i]->cpu_data_block();
    const float* x = bottom[i]->cpu_data_in(src_block);
    const int out_block = TopBlock(i, *top[i]);
    float* y = top[i]->mutable_cpu_data_in(out_block, /*keep_values=*/false);
    WinogradConvolution(WinogradGeometryFor(src_block, out_block))
        .Forward(x, blobs_[0]->cpu_data(), scales, bias, relu, slope, y);
  }
}

void DnnlConvolutionLayer::WinogradBackward(const Blobs<float>& top,
                                            const vector<bool>& propagate_down,
                                            const Blobs<float>& bottom) {
  const bool weight_grad = param_propagate_down_[0];
  const bool bias_grad = bias_term_ && param_propagate_down_[1];
  for (size_t i = 0; i < top.size(); ++i) {
    const int dy_block = top[i]->cpu_diff_block();
    const float* dy = top[i]->cpu_diff_in(dy_block);
    const int src_block = bottom[i]->cpu_data_block();
    if (bias_grad) {
      AddBiasGradient(dy, dy_block, num_, num_output_, top[i]->count(2),
                      blobs_[1]->mutable_cpu_diff());
    }
    WinogradConvolution convolution(WinogradGeometryFor(src_block, dy_block));
    if (weight_grad) {
      convolution.BackwardWeights(bottom[i]->cpu_data_in(src_block), dy,
                                  blobs_[0]->mutable_cpu_diff());
    }
    if (propagate_down[i]) {
      // The bottom's gradient in the blocks of its data (its producer handed that on blocked).
      float* dx = bottom[i]->mutable_cpu_diff_in(src_block, /*keep_values=*/false);
      convolution.BackwardData(dy, blobs_[0]->cpu_data(), dx);
    }
  }
}

}  // namespace caffe
