// Local response normalization: each value is divided by a power of the sum of squares of its
// neighbours, across channels or within the channel's spatial neighbourhood (BVLC semantics).
// Legend: N images, C channels, H/W height/width, n local_size, p = (n - 1) / 2.
#ifndef CAFFE_LAYERS_LRN_LAYER_HPP_
#define CAFFE_LAYERS_LRN_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"
#include "caffe/proto/caffe.pb.h"

namespace caffe {

/// bottom[0]: (N, C, H, W); top[0]: same shape.
/// ACROSS_CHANNELS: top = x * (k + alpha / n * sum_{c' = c - p .. c + p} x[c']^2)^-beta, channels
/// outside [0, C) counting as 0.
/// WITHIN_CHANNEL: top = x * (1 + alpha / n^2 * sum over the n x n window centred on (h, w) of
/// x^2)^-beta, positions outside the image counting as 0; k is not used (BVLC builds this from
/// AVE pooling with pad p and a Power layer with shift 1).
template <typename Dtype>
class LRNLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "LRN"; }
  // Forward writes all of each top, Backward all of each propagated bottom diff (LMS).
  bool WritesWholeOutputs() const override { return true; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Adds scale_ (and on the GPU scale_pow_), written forward and read backward, and the CPU
  /// kernels' scratch.
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;

  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

 private:
  void CrossChannelForward(const Dtype* bottom_data, Dtype* top_data);
  void CrossChannelBackward(const Dtype* top_data, const Dtype* top_diff, const Dtype* bottom_data,
                            Dtype* bottom_diff);
  void WithinChannelForward(const Dtype* bottom_data, Dtype* top_data);
  void WithinChannelBackward(const Dtype* top_diff, const Dtype* bottom_data, Dtype* bottom_diff);
  // out = the sum of each value's n x n neighbourhood in one (H, W) plane (zero padded);
  // `rows` is H x W scratch.
  void BoxSum(const Dtype* in, Dtype* rows, Dtype* out) const;
  // y[i] = x[i]^-beta_.
  void PowNegBeta(int count, const Dtype* x, Dtype* y) const;

  int size_ = 5;     // n
  int pre_pad_ = 2;  // p
  Dtype alpha_ = 1, beta_ = 0.75, k_ = 1;
  bool across_channels_ = true;
  int num_ = 0, channels_ = 0, height_ = 0, width_ = 0;
  // Saved by forward for backward, shape of bottom: scale_ is the base of the power (ACROSS:
  // k + alpha / n * sum of squares; WITHIN: 1 + alpha * mean of squares), scale_pow_ =
  // scale_^-beta (GPU only: the CPU path computes it again in backward, as BVLC, to save memory).
  Blob<Dtype> scale_;
  Blob<Dtype> scale_pow_;
  // Scratch: ACROSS, one image's per-channel terms with p zero planes either side
  // ((C + n - 1) x H x W) and one plane of window sums; WITHIN, three (H, W) planes.
  Blob<Dtype> scratch_;  // per thread
  int threads_ = 1;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_LRN_LAYER_HPP_
