// Convolution on cuDNN (builds with USE_CUDNN; chosen in GPU mode by GetConvolutionLayer for
// engine DEFAULT or CUDNN). Same parameters, blobs, shapes and results as ConvolutionLayer, whose
// setup it inherits: groups, stride, pad, dilation, bias, and 1 to 3 spatial axes. Geometries
// cuDNN cannot run (more than 3 spatial axes, tensors beyond int indexing, no algorithm within
// the workspace limit) run on ConvolutionLayer's GPU path, as does everything in CPU mode.
// Legend: N images, C channels, C_out num_output, G group.
#ifndef CAFFE_LAYERS_CUDNN_CONVOLUTION_LAYER_HPP_
#define CAFFE_LAYERS_CUDNN_CONVOLUTION_LAYER_HPP_

#ifdef USE_CUDNN

#include "caffe/layers/convolution_layer.hpp"
#include "caffe/util/cudnn.hpp"

namespace caffe {

/// ConvolutionLayer through cudnnConvolutionForward / BackwardData / BackwardFilter (see
/// CudnnConvolution for how the algorithms are chosen) and cuDNN's bias routines.
template <typename Dtype>
class CuDNNConvolutionLayer : public ConvolutionLayer<Dtype> {
 public:
  using ConvolutionLayer<Dtype>::ConvolutionLayer;
  /// ConvolutionLayer's checks and shapes, then (in GPU mode) cuDNN's plan for them.
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// False where the current shapes run on ConvolutionLayer's path (see above).
  bool runs_on_cudnn() const { return use_cudnn_; }
  /// LMS: on cuDNN, the bottoms, tops and learned blobs only (cuDNN's workspace is its own);
  /// otherwise also the inherited path's column buffers.
  bool DeclareMemoryUse(lms::Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, lms::MemoryUses* uses) const override;

 protected:
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;

 private:
  CudnnConvolution convolution_;  // x = bottom, y = top
  bool use_cudnn_ = false;
};

}  // namespace caffe

#endif  // USE_CUDNN
#endif  // CAFFE_LAYERS_CUDNN_CONVOLUTION_LAYER_HPP_
