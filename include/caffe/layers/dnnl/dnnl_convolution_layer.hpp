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

#include "caffe/layers/convolution_layer.hpp"

namespace caffe {

class DnnlConvolutionLayer : public ConvolutionLayer<float> {
 public:
  /// only_where_faster: the engine came by default, so shapes oneDNN runs slower stay on Caffe's.
  DnnlConvolutionLayer(const LayerParameter& param, bool only_where_faster);
  ~DnnlConvolutionLayer() override;
  void Reshape(const Blobs<float>& bottom, const Blobs<float>& top) override;
  /// False where this layer's geometry runs on Caffe's engine (see above).
  bool runs_on_dnnl() const { return primitives_ != nullptr; }
  /// Whether the fp32 forward runs Winograd's algorithm (CAFFE_WINOGRAD; 3x3 of stride 1 where
  /// oneDNN has it), not the direct one.
  bool runs_winograd() const;
  /// In bf16 (forward_math or backward_math BFLOAT16) every geometry oneDNN takes runs here,
  /// faster or not in fp32: activations and weights are rounded to bf16 in the reorders into
  /// oneDNN's layouts, outputs and gradients come back in fp32.
  bool HasBf16Math() const override { return true; }

 protected:
  void Forward_cpu(const Blobs<float>& bottom, const Blobs<float>& top) override;
  void Backward_cpu(const Blobs<float>& top, const vector<bool>& propagate_down,
                    const Blobs<float>& bottom) override;

 private:
  struct Primitives;  // oneDNN's objects; dnnl.hpp stays out of this header
  /// The primitives for this geometry; blocked: activations may be channel-blocked in the blobs
  /// (throws oneDNN's error where it has no convolution for the geometry).
  std::unique_ptr<Primitives> MakePrimitives(const Blob<float>& bottom, const Blob<float>& top,
                                             bool blocked) const;
  std::unique_ptr<Primitives> primitives_;
  bool only_where_faster_;
  vector<int> primitive_bottom_shape_;  // the bottom shape the primitives were made for
  // Per top: whether this layer's last forward left it channel-blocked, and whether a layer after
  // it has since turned out to want it plain (it was plain again when this layer ran next).
  vector<bool> top_left_blocked_, top_plain_wanted_;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_DNNL_DNNL_CONVOLUTION_LAYER_HPP_
