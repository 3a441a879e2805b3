// Layers run as one (Net::RunsFused): where a layer can do the next layers' work in its own
// passes over memory (a BatchNorm, the in-place Scale after it and the ReLU after that; a sum of
// two and its ReLU; on GPUs a cuDNN convolution and its ReLU; with stored statistics a oneDNN
// convolution and the BatchNorm, Scale and ReLU after it), the group runs as one: fewer
// passes read and write the activations. Every layer keeps its blobs and runs alone as usual (a
// forward that stops inside the group, debug_info); the group's results are the layers' (within
// rounding: some sums differ in order). Such a layer is also a LayerFusion, which Layer::fusion()
// returns.
#ifndef CAFFE_LAYER_FUSION_HPP_
#define CAFFE_LAYER_FUSION_HPP_

#include <vector>

#include "caffe/common.hpp"
#include "caffe/memory/memory_use.hpp"

namespace caffe {

template <typename Dtype>
class Layer;

/// What a layer that can run the next layers in its own passes adds to Layer.
template <typename Dtype>
class LayerFusion {
 public:
  virtual ~LayerFusion() = default;

  /// Asked by the Net at setup, in the mode of that time: whether this layer takes `next` (with
  /// its bottoms and tops) into its passes, after the followers it took already; if so it keeps
  /// `next`, and the Net asks again with the layer after it.
  virtual bool FuseWithNext(Layer<Dtype>* next, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                            const Blobs<Dtype>& next_bottom, const Blobs<Dtype>& next_top) = 0;
  /// The group's forward (no loss: the Net fuses no layer with a loss weight), on the mode's
  /// device: ForwardFused_cpu or ForwardFused_gpu.
  void ForwardFused(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
    if (Caffe::mode() == Caffe::GPU) {
      ForwardFused_gpu(bottom, top);
    } else {
      ForwardFused_cpu(bottom, top);
    }
  }
  /// The group's backward: the followers' parameter and bottom gradients (where
  /// `followers_propagate_down`, one entry per follower, in net order), then this layer's
  /// (where `propagate_down`), leaving every diff as the layers' backward would.
  void BackwardFused(const Blobs<Dtype>& top, const std::vector<bool>& propagate_down,
                     const Blobs<Dtype>& bottom,
                     const std::vector<std::vector<bool>>& followers_propagate_down) {
    if (Caffe::mode() == Caffe::GPU) {
      BackwardFused_gpu(top, propagate_down, bottom, followers_propagate_down);
    } else {
      BackwardFused_cpu(top, propagate_down, bottom, followers_propagate_down);
    }
  }
  /// What the group's `pass` uses, for LMS (the planner asks this instead of the layers).
  virtual bool DeclareMemoryUseFused(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<std::vector<bool>>& followers_propagate_down,
                                     MemoryUses* uses) const = 0;

 protected:
  /// The group's passes. A group forms in one mode and runs only in it (Net::RunsFused), so a
  /// layer that fuses only on GPUs leaves the CPU's as they are, which fail.
  virtual void ForwardFused_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
    LOG(FATAL) << "a fused group ran on the CPU, where its head never forms one";
  }
  virtual void ForwardFused_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
    ForwardFused_cpu(bottom, top);
  }
  virtual void BackwardFused_cpu(const Blobs<Dtype>& top, const std::vector<bool>& propagate_down,
                                 const Blobs<Dtype>& bottom,
                                 const std::vector<std::vector<bool>>& followers_propagate_down) {
    LOG(FATAL) << "a fused group ran on the CPU, where its head never forms one";
  }
  virtual void BackwardFused_gpu(const Blobs<Dtype>& top, const std::vector<bool>& propagate_down,
                                 const Blobs<Dtype>& bottom,
                                 const std::vector<std::vector<bool>>& followers_propagate_down) {
    BackwardFused_cpu(top, propagate_down, bottom, followers_propagate_down);
  }
};

}  // namespace caffe

#endif  // CAFFE_LAYER_FUSION_HPP_
