// Convolution on cuDNN (builds with USE_CUDNN; chosen in GPU mode by GetConvolutionLayer for
// engine DEFAULT or CUDNN). Same parameters, blobs, shapes and results as ConvolutionLayer, whose
// setup it inherits: groups, stride, pad, dilation, bias, and 1 to 3 spatial axes. Geometries
// cuDNN cannot run (more than 3 spatial axes, tensors beyond int indexing, no algorithm within
// the workspace limit) run on ConvolutionLayer's GPU path, as does everything in CPU mode.
// Legend: N images, C channels, C_out num_output, G group.
#ifndef CAFFE_LAYERS_CUDNN_CUDNN_CONVOLUTION_LAYER_HPP_
#define CAFFE_LAYERS_CUDNN_CUDNN_CONVOLUTION_LAYER_HPP_

#ifdef USE_CUDNN

#include "caffe/layers/convolution_layer.hpp"
#include "caffe/layers/cudnn/cudnn.hpp"
#include "caffe/layers/relu_layer.hpp"

namespace caffe {

/// ConvolutionLayer through cudnnConvolutionForward / BackwardData / BackwardFilter (see
/// CuDNNConvolution for how the algorithms are chosen) and cuDNN's bias routines.
template <typename Dtype>
class CuDNNConvolutionLayer : public ConvolutionLayer<Dtype>, public LayerFusion<Dtype> {
 public:
  using ConvolutionLayer<Dtype>::ConvolutionLayer;
  /// ConvolutionLayer's checks and shapes, then (in GPU mode) cuDNN's plan for them.
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// False where the current shapes run on ConvolutionLayer's path (see above).
  bool runs_on_cudnn() const { return use_cudnn_; }
  /// LMS: on cuDNN, the bottoms, tops and learned blobs only (cuDNN's workspace is its own);
  /// otherwise also the inherited path's column buffers.
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;

  LayerFusion<Dtype>* fusion() override { return this; }

  /// With a bias and one top, the in-place ReLU right after it (negative_slope >= 0: every
  /// convolution of AlexNet, CaffeNet, GoogLeNet, VGG) runs in this layer's passes on the GPU.
  /// Forward adds the bias and rectifies in one pass over the top (apart: cuDNN's bias add and
  /// the ReLU, two passes that each read and write it); backward writes the ReLU's gradient dv
  /// over the top's diff and sums it per channel into the bias gradient in the same pass (apart:
  /// the ReLU's pass, then cuDNN's bias sum reads dv again). The weight and bottom gradients
  /// then come from dv as apart.
  bool FuseWithNext(Layer<Dtype>* next, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                    const Blobs<Dtype>& next_bottom, const Blobs<Dtype>& next_top) override;
  bool DeclareMemoryUseFused(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                             const vector<bool>& propagate_down,
                             const vector<vector<bool>>& followers_propagate_down,
                             MemoryUses* uses) const override;

 protected:
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
  // The group runs on the GPU only: the Net forms it in GPU mode and runs it in that mode.
  void ForwardFused_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void BackwardFused_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                         const Blobs<Dtype>& bottom,
                         const vector<vector<bool>>& followers_propagate_down) override;

 private:
  /// On cuDNN, each bottom's weight gradient (accumulated) and bottom gradient from its top's diff.
  void BackwardWeightsAndBottoms(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                 const Blobs<Dtype>& bottom);
  /// The fused backward's bias sum: on cuDNN with a learned bias (else cuDNN or the inherited
  /// path sums the bias gradient).
  bool FusedSumsBias() const { return use_cudnn_ && this->param_propagate_down(1); }
  void ReshapePartials();  // for the current shapes, when fused

  CuDNNConvolution convolution_;  // x = bottom, y = top
  bool use_cudnn_ = false;
  ReLULayer<Dtype>* relu_ = nullptr;  // the ReLU that runs with this layer (FuseWithNext)
  Blob<double> partials_;  // the fused backward's scratch: ChannelSumsKernel's partial bias sums
};

}  // namespace caffe

#endif  // USE_CUDNN
#endif  // CAFFE_LAYERS_CUDNN_CUDNN_CONVOLUTION_LAYER_HPP_
