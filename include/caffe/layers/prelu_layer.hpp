// PReLU: the parametric rectified linear unit, with a learned negative slope per channel (or one
// shared by all channels).
// Legend: N batch, C channels (axis 1), S = product of the axes after the channel axis.
#ifndef CAFFE_LAYERS_PRELU_LAYER_HPP_
#define CAFFE_LAYERS_PRELU_LAYER_HPP_

#include "caffe/layers/neuron_layer.hpp"

namespace caffe {

/// top[n, c, s] = max(x, 0) + a_c * min(x, 0), x = bottom[n, c, s].
/// bottom[0]: (N, C, ...) with at least 2 axes; top[0]: the same shape, may be bottom[0] itself
/// (then a copy of the bottom is kept for backward, as BVLC). blobs_[0]: the slopes a, shape (C),
/// or a 0-axis scalar with channel_shared; filled by prelu_param.filler (default constant 0.25).
/// Backward: a_diff[c] += sum over n, s of top_diff * x * (x <= 0);
/// bottom_diff = top_diff * (x > 0 ? 1 : a_c).
template <typename Dtype>
class PReLULayer : public NeuronLayer<Dtype> {
 public:
  using NeuronLayer<Dtype>::NeuronLayer;
  const char* type() const override { return "PReLU"; }
  /// Creates (or checks the given) slopes.
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Adds the in-place copy of the bottom (written forward, read backward) and the GPU
  /// backward's partial sums.
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

  bool channel_shared_ = false;
  int channels_ = 0;
  Blob<Dtype> bottom_memory_;  // the input, saved by an in-place forward for backward
  // The slope gradient sums an (outer, slopes, inner) array: (N, C, S), or (1, 1, count) with a
  // shared slope.
  int slope_outer_ = 0;
  int slope_inner_ = 0;
  Blob<double> partials_;       // GPU backward scratch: ChannelSumsKernel's partial sums per slope
  vector<double> thread_sums_;  // CPU backward: each thread's slope-gradient sums
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_PRELU_LAYER_HPP_
