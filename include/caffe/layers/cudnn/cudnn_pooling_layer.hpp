// Pooling on cuDNN (builds with USE_CUDNN; chosen in GPU mode by GetPoolingLayer for engine
// DEFAULT or CUDNN, for MAX and AVE without the argmax top). cuDNN sizes the output with floor
// rounding and lets every window run to the padded edge, while Caffe rounds up by default and
// clips the last windows (and AVE's divisor) to the padded input. Where the two output sizes
// agree, the windows are the same and none is clipped, so cuDNN's MAX (padding ignored) and AVE
// counting the padding (divisor = kernel size) give Caffe's results; other shapes (e.g. the usual
// 3x3 stride-2 pooling of an even input, which CEIL rounds up) run on PoolingLayer's GPU path.
// cuDNN's MAX backward finds each window's maximum again from x and y; the layer keeps its own
// copy of y, since a later in-place layer (ReLU, Scale) may change the top before backward (the
// reason BVLC sent MAX pooling to Caffe's kernels).
// Legend: N images, C channels, spatial axes as in pooling_layer.hpp.
#ifndef CAFFE_LAYERS_CUDNN_CUDNN_POOLING_LAYER_HPP_
#define CAFFE_LAYERS_CUDNN_CUDNN_POOLING_LAYER_HPP_

#ifdef USE_CUDNN

#include <vector>

#include "caffe/layers/cudnn/cudnn.hpp"
#include "caffe/layers/pooling_layer.hpp"

namespace caffe {

/// PoolingLayer through cudnnPoolingForward / Backward where cuDNN's windows are Caffe's (above).
/// bottom[0]: (N, C, spatial...) with 1 to 3 spatial axes; top[0]: (N, C, pooled...).
template <typename Dtype>
class CuDNNPoolingLayer : public PoolingLayer<Dtype> {
 public:
  using PoolingLayer<Dtype>::PoolingLayer;
  /// PoolingLayer's checks, then the kernel, pad and stride of each spatial axis.
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// PoolingLayer's shapes, then (in GPU mode) whether cuDNN matches them, and its descriptors.
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// False where the current shapes run on PoolingLayer's path.
  bool runs_on_cudnn() const { return use_cudnn_; }
  /// LMS: PoolingLayer's buffers, plus the copy of the top kept for MAX's backward.
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;

 protected:
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;

 private:
  // One entry per spatial axis, from the parameters (the kernel of global pooling is set by
  // Reshape to the input's size).
  std::vector<int> kernel_, pad_, stride_;
  bool global_pooling_ = false;
  bool use_cudnn_ = false;
  CuDNNTensorDescriptor bottom_desc_, top_desc_;
  CuDNNPoolingDescriptor pooling_desc_;
  Blob<Dtype> max_top_;  // MAX: the top as forward wrote it, for backward
};

}  // namespace caffe

#endif  // USE_CUDNN
#endif  // CAFFE_LAYERS_CUDNN_CUDNN_POOLING_LAYER_HPP_
