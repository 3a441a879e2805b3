// Deconvolution on cuDNN (builds with USE_CUDNN; chosen in GPU mode by GetDeconvolutionLayer for
// engine DEFAULT or CUDNN). Same parameters, blobs, shapes and results as DeconvolutionLayer,
// whose setup it inherits. Deconvolution is the adjoint of the convolution from its top (the
// image side x) to its bottom (the output side y) with the same weights (C, C_out / G, k...):
// forward is that convolution's backward-data pass, the bottom's gradient its forward pass, and
// the weight gradient its backward-filter pass with x = top diff and dy = bottom. Geometries
// cuDNN cannot run go to DeconvolutionLayer's GPU path, as CuDNNConvolutionLayer does.
// Legend: N images, C bottom channels, C_out num_output, G group.
#ifndef CAFFE_LAYERS_CUDNN_CUDNN_DECONVOLUTION_LAYER_HPP_
#define CAFFE_LAYERS_CUDNN_CUDNN_DECONVOLUTION_LAYER_HPP_

#ifdef USE_CUDNN

#include "caffe/layers/cudnn/cudnn.hpp"
#include "caffe/layers/deconvolution_layer.hpp"

namespace caffe {

/// DeconvolutionLayer through cuDNN's convolution routines (see above).
template <typename Dtype>
class CuDNNDeconvolutionLayer : public DeconvolutionLayer<Dtype> {
 public:
  using DeconvolutionLayer<Dtype>::DeconvolutionLayer;
  /// DeconvolutionLayer's checks and shapes, then (in GPU mode) cuDNN's plan for them.
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// False where the current shapes run on DeconvolutionLayer's path.
  bool runs_on_cudnn() const { return use_cudnn_; }
  /// LMS: on cuDNN, the bottoms, tops and learned blobs only (cuDNN's workspace is its own);
  /// otherwise also the inherited path's column buffers.
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;

 protected:
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;

 private:
  CuDNNConvolution convolution_;  // x = top, y = bottom
  bool use_cudnn_ = false;
};

}  // namespace caffe

#endif  // USE_CUDNN
#endif  // CAFFE_LAYERS_CUDNN_CUDNN_DECONVOLUTION_LAYER_HPP_
