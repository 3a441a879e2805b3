// Layer: the unit of computation of a Net. A layer reads its bottom blobs and writes its top blobs
// in Forward, and in Backward turns the tops' diffs into the bottoms' diffs and its parameters'
// diffs. Subclasses implement Reshape and Forward_cpu/Backward_cpu (and, with the GPU backend,
// Forward_gpu/Backward_gpu, which default to the CPU code).
#ifndef CAFFE_LAYER_HPP_
#define CAFFE_LAYER_HPP_

#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/common.hpp"
#include "caffe/kernels/math_functions.hpp"
#include "caffe/layer_factory.hpp"
#include "caffe/layer_fusion.hpp"
#include "caffe/memory/memory_use.hpp"
#include "caffe/proto/caffe.pb.h"

// Checks on a layer's parameters and input shapes: a failure is a caffe::Error whose message
// starts with the layer's type and name, e.g. "Convolution layer 'conv1': kernel_h is 0".
#define LAYER_CHECK(condition) CAFFE_CHECK(condition) << this->error_prefix()
#define LAYER_CHECK_EQ(a, b) CAFFE_CHECK_EQ(a, b) << this->error_prefix()
#define LAYER_CHECK_NE(a, b) CAFFE_CHECK_NE(a, b) << this->error_prefix()
#define LAYER_CHECK_LE(a, b) CAFFE_CHECK_LE(a, b) << this->error_prefix()
#define LAYER_CHECK_LT(a, b) CAFFE_CHECK_LT(a, b) << this->error_prefix()
#define LAYER_CHECK_GE(a, b) CAFFE_CHECK_GE(a, b) << this->error_prefix()
#define LAYER_CHECK_GT(a, b) CAFFE_CHECK_GT(a, b) << this->error_prefix()
#define LAYER_THROW() CAFFE_THROW() << this->error_prefix()

namespace caffe {

template <typename Dtype>
class Layer {
 public:
  /// Stores the parameters only; learned blobs given in the param (from a .caffemodel) are
  /// copied here, everything else happens in SetUp.
  explicit Layer(const LayerParameter& param);
  virtual ~Layer() = default;

  /// Checks the blob counts, runs LayerSetUp and Reshape, and sets the loss weights.
  void SetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top);

  /// One-time setup: read the parameters, create the learned blobs.
  virtual void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {}
  /// Checks the bottoms' shapes and sizes the tops and any buffers; called before every Forward.
  virtual void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) = 0;

  /// Reshapes, computes the tops, and returns this layer's weighted loss.
  Dtype Forward(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top);
  /// Computes the bottoms' diffs (where propagate_down says so) and accumulates param diffs.
  void Backward(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                const Blobs<Dtype>& bottom);

  vector<shared_ptr<Blob<Dtype>>>& blobs() { return blobs_; }
  const LayerParameter& layer_param() const { return layer_param_; }
  /// Writes the parameters and learned blobs (and their diffs if asked).
  virtual void ToProto(LayerParameter* param, bool write_diff = false);

  Dtype loss(int top_index) const {
    return top_index < static_cast<int>(loss_.size()) ? loss_[top_index] : Dtype(0);
  }
  void set_loss(int top_index, Dtype value);
  /// Loss scaling (solver loss_scale): the loss tops' diffs, where backward starts, become their
  /// loss weights times `scale`; Forward still returns the unscaled loss.
  void SetLossScale(Dtype scale, const Blobs<Dtype>& top);

  /// The arithmetic of this layer's forward and backward passes as the net chose it
  /// (net/layer_precision.hpp): FLOAT, or BFLOAT16 where a prototxt or `caffe -precision` asked
  /// for 16 bits, this layer HasBf16Math and the machine does bf16 in hardware.
  Type forward_math() const { return forward_math_; }
  Type backward_math() const { return backward_math_; }
  void set_math(Type forward, Type backward) {
    forward_math_ = forward;
    backward_math_ = backward;
  }
  /// Whether this layer computes in bf16 when set_math asks (its inputs and weights rounded to
  /// bf16, products summed in fp32): the layers whose time is matrix products. Others, losses
  /// and normalisation statistics among them, always compute in their Dtype.
  virtual bool HasBf16Math() const { return false; }

  /// The layer type string, as written in a prototxt's `type:`.
  virtual const char* type() const { return ""; }

  // Declared arity, checked by SetUp: -1 means "no constraint".
  virtual int ExactNumBottomBlobs() const { return -1; }
  virtual int MinBottomBlobs() const { return -1; }
  virtual int MaxBottomBlobs() const { return -1; }
  virtual int ExactNumTopBlobs() const { return -1; }
  virtual int MinTopBlobs() const { return -1; }
  virtual int MaxTopBlobs() const { return -1; }
  virtual bool EqualNumBottomTopBlobs() const { return false; }
  /// If true, the Net creates anonymous tops up to the minimum required.
  virtual bool AutoTopBlobs() const { return false; }
  /// Whether force_backward may make this bottom receive a gradient (false for e.g. labels).
  virtual bool AllowForceBackward(int bottom_index) const { return true; }
  /// Whether top[top_index] may be bottom[bottom_index] itself (`bottom: "x" top: "x"`), with
  /// the same results as with a top of its own. SetUp refuses it, with an error, where not.
  virtual bool AllowsInPlace(int bottom_index, int top_index) const { return false; }

  bool param_propagate_down(int param_id) const {
    return param_id < static_cast<int>(param_propagate_down_.size())
               ? param_propagate_down_[param_id]
               : false;
  }
  void set_param_propagate_down(int param_id, bool value);

  /// "Convolution layer 'conv1': ", the start of every error this layer reports.
  string error_prefix() const;

  /// Large Model Support (docs/LMS.md): adds to `uses` every buffer this layer reads or writes in
  /// one `pass`, so the planner can swap them in ahead and out after their last use. The default
  /// lists bottoms, tops and learned blobs (data and diff as the pass uses them), tops and bottom
  /// diffs as overwritten when WritesWholeOutputs(); layers with internal buffers add those.
  /// Returns false when the layer cannot say (e.g. it runs a net of its own): the planner then
  /// warns once and swaps its buffers on demand.
  virtual bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                                const vector<bool>& propagate_down, MemoryUses* uses) const;
  /// Whether Forward writes every element of every top, and Backward every element of each bottom
  /// diff it propagates, without reading their old values. LMS then gives them device memory
  /// without copying the old values in. Off by default (an Input layer's top, written by the
  /// user, must be copied in); layers whose kernels are checked to overwrite opt in.
  virtual bool WritesWholeOutputs() const { return false; }
  /// Whether Backward reads top[i]'s data, and bottom[i]'s data: the default declaration lists
  /// only these, so that LMS brings back (and holds) no activation a gradient does not need. True
  /// unless a layer's kernels, on every engine, are checked not to read it.
  virtual bool BackwardReadsTopData(int top_index) const { return true; }
  virtual bool BackwardReadsBottomData(int bottom_index) const { return true; }

  /// Where this layer can do the next layers' work in its own passes over memory (a BatchNorm
  /// with the Scale and ReLU after it): its LayerFusion (layer_fusion.hpp), else null.
  virtual LayerFusion<Dtype>* fusion() { return nullptr; }
  const LayerFusion<Dtype>* fusion() const { return const_cast<Layer*>(this)->fusion(); }

 protected:
  virtual void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) = 0;
  virtual void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
    Forward_cpu(bottom, top);
  }
  virtual void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                            const Blobs<Dtype>& bottom) = 0;
  virtual void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                            const Blobs<Dtype>& bottom) {
    Backward_cpu(top, propagate_down, bottom);
  }
  /// Checks the numbers of bottoms and tops against the declared arity.
  virtual void CheckBlobCounts(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top);
  /// Throws where a top is one of the bottoms and AllowsInPlace says no.
  void CheckInPlace(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) const;
  /// Stores each top's loss weight in its diff, where Forward reads it.
  void SetLossWeights(const Blobs<Dtype>& top);

  LayerParameter layer_param_;
  Phase phase_;
  vector<shared_ptr<Blob<Dtype>>> blobs_;  // learned parameters
  vector<bool> param_propagate_down_;      // whether each learned blob gets a diff
  vector<Dtype> loss_;                     // loss weight of each top (0: not a loss)
  Dtype loss_scale_ = 1;                   // SetLossScale's; the tops' diffs hold loss_ x it
  Type forward_math_ = FLOAT, backward_math_ = FLOAT;

  DISABLE_COPY_AND_ASSIGN(Layer);
};

}  // namespace caffe

#endif  // CAFFE_LAYER_HPP_
