// LRN on cuDNN (builds with USE_CUDNN; chosen in GPU mode by GetLRNLayer for engine DEFAULT or
// CUDNN, for ACROSS_CHANNELS only: cuDNN's within-channel normalization is a different
// formula). cuDNN's cross-channel LRN is Caffe's: top = x * (k + alpha / n * sum of x^2 over the
// n channels centred on c)^-beta. Parameters outside cuDNN's range (local_size above 16, k below
// 1e-5, beta below 0.01) run on LRNLayer's GPU path.
// Legend: N images, C channels, H/W height/width, n local_size.
#ifndef CAFFE_LAYERS_CUDNN_CUDNN_LRN_LAYER_HPP_
#define CAFFE_LAYERS_CUDNN_CUDNN_LRN_LAYER_HPP_

#ifdef USE_CUDNN

#include "caffe/layers/cudnn/cudnn.hpp"
#include "caffe/layers/lrn_layer.hpp"

namespace caffe {

/// LRNLayer (ACROSS_CHANNELS) through cudnnLRNCrossChannelForward / Backward.
/// bottom[0]: (N, C, H, W); top[0]: same shape.
template <typename Dtype>
class CuDNNLRNLayer : public LRNLayer<Dtype> {
 public:
  using LRNLayer<Dtype>::LRNLayer;
  /// LRNLayer's checks, then whether cuDNN can take the parameters.
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// LRNLayer's shapes, then (in GPU mode) cuDNN's descriptors for them.
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// False where the parameters or shapes run on LRNLayer's path.
  bool runs_on_cudnn() const { return use_cudnn_; }
  /// On cuDNN only the bottoms and tops (LRNLayer's saved buffers stay unused).
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;

 protected:
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;

 private:
  bool parameters_fit_ = false;  // ACROSS_CHANNELS, and n, k, beta within cuDNN's range
  bool use_cudnn_ = false;
  CuDNNTensorDescriptor tensor_desc_;
  CuDNNLRNDescriptor lrn_desc_;
};

}  // namespace caffe

#endif  // USE_CUDNN
#endif  // CAFFE_LAYERS_CUDNN_CUDNN_LRN_LAYER_HPP_
