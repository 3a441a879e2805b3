// Convolution on oneDNN's CPU engine (float only; fp32 or bf16 arithmetic). Same parameters, blobs
// and results as ConvolutionLayer, whose setup and shapes it inherits; forward and backward run
// oneDNN's convolution primitives (direct, or Winograd's for 3x3 ones) instead of im2col + GEMM.
// Activations that come in oneDNN's channel blocks (memory/channel_layout.hpp) are read where they
// are; the output is left in blocks for the layers after it, until one of them turns out to want it
// plain; plain ones are reordered into the blocked layouts oneDNN's kernels want and back around
// each call. Geometries oneDNN cannot express (a negative right padding, an axis other than 1) run
// on the base class, as does everything in double; so do, when the engine was not asked for by
// name, the shapes where oneDNN is slower than im2col + GEMM (see FasterOnDnnl in the .cpp).
#ifndef CAFFE_LAYERS_DNNL_DNNL_CONVOLUTION_LAYER_HPP_
#define CAFFE_LAYERS_DNNL_DNNL_CONVOLUTION_LAYER_HPP_

#include <memory>

#include "caffe/kernels/winograd_convolution.hpp"
#include "caffe/layer_fusion.hpp"
#include "caffe/layers/batch_norm_layer.hpp"
#include "caffe/layers/convolution_layer.hpp"
#include "caffe/layers/relu_layer.hpp"
#include "caffe/layers/scale_layer.hpp"

namespace dnnl {
struct memory;
}  // namespace dnnl

namespace caffe {

class DnnlConvolutionLayer : public ConvolutionLayer<float>, public LayerFusion<float> {
 public:
  /// only_where_faster: the engine came by default, so shapes oneDNN runs slower stay on Caffe's.
  DnnlConvolutionLayer(const LayerParameter& param, bool only_where_faster);
  ~DnnlConvolutionLayer() override;
  void Reshape(const Blobs<float>& bottom, const Blobs<float>& top) override;
  /// False where this layer's geometry runs on Caffe's engine (see above).
  bool runs_on_dnnl() const { return primitives_ != nullptr; }
  /// Whether the fp32 passes run Winograd's algorithm (CAFFE_WINOGRAD; 3x3 of stride 1: oneDNN's
  /// where it has one, AVX-512, else kernels/winograd_convolution), not the direct one.
  bool runs_winograd() const;
  /// In bf16 (forward_math or backward_math BFLOAT16) every geometry oneDNN takes runs here,
  /// faster or not in fp32: activations and weights are rounded to bf16 in the reorders into
  /// oneDNN's layouts, outputs and gradients come back in fp32.
  bool HasBf16Math() const override { return true; }

  LayerFusion<float>* fusion() override { return this; }
  /// With stored statistics (TEST, or use_global_stats), the BatchNorm in place on this layer's
  /// top, then the in-place Scale with one value per channel and the in-place ReLU
  /// (negative_slope >= 0) after it where they follow, fold into the convolution: forward
  /// convolves with weights[o] * a[o] (scaled in the reorder into oneDNN's layout) and adds
  /// bias[o] * a[o] + b[o] (a = scale / sqrt(var + eps), b = shift - mean * a), the ReLU as
  /// oneDNN's post-op: the top is written once, where apart the BatchNorm group read and wrote it
  /// again and kept its normalized values for a backward. Backward (rare in TEST nets: `caffe
  /// time -phase TEST`, pycaffe) forwards the convolution and the layers after it again (the
  /// BatchNorm's own group where it took the Scale), then runs their backward, so every diff
  /// ends as theirs. Where oneDNN has no such primitive, the group's forward runs them that way
  /// too.
  bool FuseWithNext(Layer<float>* next, const Blobs<float>& bottom, const Blobs<float>& top,
                    const Blobs<float>& next_bottom, const Blobs<float>& next_top) override;
  bool DeclareMemoryUseFused(Pass pass, const Blobs<float>& bottom, const Blobs<float>& top,
                             const vector<bool>& propagate_down,
                             const vector<vector<bool>>& followers_propagate_down,
                             MemoryUses* uses) const override;

 protected:
  void Forward_cpu(const Blobs<float>& bottom, const Blobs<float>& top) override;
  void Backward_cpu(const Blobs<float>& top, const vector<bool>& propagate_down,
                    const Blobs<float>& bottom) override;
  void ForwardFused_cpu(const Blobs<float>& bottom, const Blobs<float>& top) override;
  void BackwardFused_cpu(const Blobs<float>& top, const vector<bool>& propagate_down,
                         const Blobs<float>& bottom,
                         const vector<vector<bool>>& followers_propagate_down) override;

 private:
  struct Primitives;  // oneDNN's objects; dnnl.hpp stays out of this header
  /// The primitives for this geometry; blocked: activations may be channel-blocked in the blobs
  /// (throws oneDNN's error where it has no convolution for the geometry).
  std::unique_ptr<Primitives> MakePrimitives(const Blob<float>& bottom, const Blob<float>& top,
                                             bool blocked) const;
  /// The forward with the weights times `scales` (one per output), `bias` (one per output,
  /// whatever bias_term) added and, where `relu`, the ReLU of negative slope `slope` after it;
  /// false, running nothing, where the layer runs on Caffe's engine or oneDNN has no such
  /// primitive.
  bool ForwardFolded(const Blobs<float>& bottom, const Blobs<float>& top,
                     const vector<float>& scales, const float* bias, bool relu, float slope);
  /// The forward primitive (the folded one where `folded`) over the images, a few at a time,
  /// with the weights already in its layout.
  void RunForward(bool folded, const dnnl::memory& weights, const float* bias,
                  const Blobs<float>& bottom, const Blobs<float>& top);
  // The own Winograd side (dnnl_convolution_winograd.cpp), for 3x3 convolutions of stride 1 in
  // fp32 where oneDNN has no Winograd: whether it takes this layer's geometry, the geometry with
  // the input and output in those channel blocks, and the three passes (the forward's scales,
  // bias and ReLU as ForwardFolded's, null and false for the plain forward).
  bool TakesOwnWinograd() const;
  WinogradGeometry WinogradGeometryFor(int in_block, int out_block) const;
  void WinogradForward(const Blobs<float>& bottom, const Blobs<float>& top, const float* scales,
                       const float* bias, bool relu, float slope);
  void WinogradBackward(const Blobs<float>& top, const vector<bool>& propagate_down,
                        const Blobs<float>& bottom);
  /// The channel block top `i` is to be written in by a forward now: the oneDNN forward's output
  /// block, or 1 once a layer after this one turned out to want it plain.
  int TopBlock(size_t i, const Blob<float>& top);
  /// The followers' forward apart, in order (all in place on `top`).
  void FollowersForward(const Blobs<float>& top);
  std::unique_ptr<Primitives> primitives_;
  // The layers folded in (FuseWithNext), in net order: a BatchNorm, then a Scale and a ReLU where
  // they follow.
  BatchNormLayer<float>* batch_norm_ = nullptr;
  ScaleLayer<float>* scale_ = nullptr;
  ReLULayer<float>* relu_ = nullptr;
  vector<Layer<float>*> followers_;
  bool batch_norm_group_ = false;  // the BatchNorm took the Scale (and ReLU) into its own group
  vector<float> mean_, scales_, folded_bias_;  // per output, for ForwardFolded
  bool only_where_faster_;
  vector<int> primitive_bottom_shape_;  // the bottom shape the primitives were made for
  bool own_winograd_ = false;           // the passes run kernels/winograd_convolution
  // Per top: whether this layer's last forward left it channel-blocked, and whether a layer after
  // it has since turned out to want it plain (it was plain again when this layer ran next).
  vector<bool> top_left_blocked_, top_plain_wanted_;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_DNNL_DNNL_CONVOLUTION_LAYER_HPP_
