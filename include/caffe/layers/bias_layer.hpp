// Bias: adds a bias broadcast over the other axes to the bottom.
// Legend: outer = product of bottom[0]'s dims before `axis`, D = the bias's count (its dims match
// bottom[0]'s from `axis` on), inner = product of the dims after the bias's.
#ifndef CAFFE_LAYERS_BIAS_LAYER_HPP_
#define CAFFE_LAYERS_BIAS_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// top[o, d, i] = bottom[0][o, d, i] + bias[d].
/// One bottom: bias is learned, blobs_[0], shape = bottom[0]'s dims [axis, axis + num_axes)
/// (bias_param axis 1, num_axes 1; -1 = to the end, 0 = a scalar), filled by `filler` (default
/// constant 0). Two bottoms: bias = bottom[1], whose shape must match bottom[0]'s from axis on.
/// top[0]: bottom[0]'s shape; in place allowed.
template <typename Dtype>
class BiasLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "Bias"; }
  int MinBottomBlobs() const override { return 1; }
  int MaxBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }
  bool AllowsInPlace(int bottom_index, int) const override { return bottom_index == 0; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Adds the GPU backward's partial sums (scratch).
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// bottom[0]_diff = top_diff; bias_diff (+)= sum_{o,i} top_diff (the learned blob accumulates,
  /// bottom[1] is overwritten).
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

  int outer_ = 0;
  int bias_dim_ = 0;  // D
  int inner_ = 0;
  Blob<double> partials_;  // GPU backward scratch: ChannelSumsKernel's partial sums per d
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_BIAS_LAYER_HPP_
