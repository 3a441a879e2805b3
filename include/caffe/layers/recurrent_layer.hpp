// RecurrentLayer: the shared machinery of RNN and LSTM. As in BVLC Caffe, the recurrence is
// unrolled over the T timesteps of the input into an internal Net (built from the NetParameter a
// subclass writes in FillUnrolledNet), whose parameters are shared across timesteps by name; this
// layer's learned blobs are that net's owned parameters, in the net's order. The hidden state at
// the last timestep is carried into the next forward pass unless a sequence restarts (cont 0) or
// expose_hidden hands it to the caller.
// Legend: T timesteps, N independent streams, H hidden size (num_output).
#ifndef CAFFE_LAYERS_RECURRENT_LAYER_HPP_
#define CAFFE_LAYERS_RECURRENT_LAYER_HPP_

#include <memory>
#include <string>
#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"
#include "caffe/net.hpp"
#include "caffe/proto/caffe.pb.h"

namespace caffe {

/// bottom[0] x: (T, N, ...); bottom[1] cont: (T, N), 0 at the first timestep of a sequence, 1
/// where it continues; optional x_static: (N, ...), the same input at every timestep; then, with
/// expose_hidden, the initial hidden state blobs (the subclass's RecurrentInputBlobNames, each
/// (1, N, H)). top[0]: the output sequence (T, N, H); with expose_hidden, then the hidden state
/// blobs after the last timestep. No gradient to cont; the unrolled net writes the gradient of x
/// (and x_static) into their diffs whenever the layer runs backward, as BVLC does; the exposed
/// hidden states take and give no gradient (BVLC: backpropagation stops at batch boundaries).
template <typename Dtype>
class RecurrentLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  /// Checks the bottoms, builds the unrolled net and collects its parameters into blobs_.
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Follows a new N (T is fixed at setup) and shares the bottoms and tops with the unrolled net.
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Zeroes the hidden state carried into the next forward pass.
  virtual void Reset();

  const char* type() const override { return "Recurrent"; }
  int MinBottomBlobs() const override;
  int MaxBottomBlobs() const override { return MinBottomBlobs() + 1; }
  int ExactNumTopBlobs() const override;
  /// The sequence indicators (bottom 1) take no gradient.
  bool AllowForceBackward(int bottom_index) const override { return bottom_index != 1; }
  /// LMS: the bottoms, tops and parameters, the hidden state carried between passes, and what
  /// the unrolled net's layers declare for the pass (one step holds the whole unrolled net).
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;

  /// The unrolled net (after LayerSetUp).
  const Net<Dtype>& unrolled_net() const { return *unrolled_net_; }

 protected:
  /// Writes the unrolled architecture into `net_param`, which already holds the Input layer of
  /// "x", "cont" (and "x_static"); names here are unprefixed (the layer name is added after).
  virtual void FillUnrolledNet(NetParameter* net_param) const = 0;
  /// Names of the hidden state blobs at timestep 0 (inputs of the unrolled net).
  virtual void RecurrentInputBlobNames(vector<string>* names) const = 0;
  /// Their shapes, in the same order.
  virtual void RecurrentInputShapes(vector<BlobShape>* shapes) const = 0;
  /// Names of the hidden state blobs at timestep T, paired with the input names.
  virtual void RecurrentOutputBlobNames(vector<string>* names) const = 0;
  /// Names of the unrolled net's blobs that become this layer's tops.
  virtual void OutputBlobNames(vector<string>* names) const = 0;

  /// Adds the layers LSTM and RNN share that bring x and cont to each timestep: "cont_slice"
  /// (cont into cont_t), "x_transform" (W_x<g> x + b_<g>, params "W_x<g>" and "b_<g>", from
  /// biased_hidden_param), with a static input "W_x<g>_x_static" (hidden_param over x_static,
  /// param "W_x<g>_static", reshaped to (1, N, dim)), and "W_x<g>_x_slice" (W_x<g>_x into
  /// timesteps). The caller adds the two slices' per-timestep tops.
  void AddInputTransform(const string& g, int dim, const LayerParameter& hidden_param,
                         const LayerParameter& biased_hidden_param, NetParameter* net_param,
                         LayerParameter** cont_slice_param, LayerParameter** x_slice_param) const;

  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;

  int num_timesteps_ = 0;  // T
  int num_streams_ = 0;    // N
  bool static_input_ = false;
  bool expose_hidden_ = false;

 private:
  // Checks x (T, N, ...) and cont (T, N) against each other (and T against setup's).
  void CheckSequenceBottoms(const Blobs<Dtype>& bottom) const;

  std::unique_ptr<Net<Dtype>> unrolled_net_;
  // The last layer before the pseudo-losses, which exist only to make the net run backward.
  int last_layer_index_ = 0;
  Blob<Dtype>* x_input_blob_ = nullptr;
  Blob<Dtype>* x_static_input_blob_ = nullptr;
  Blob<Dtype>* cont_input_blob_ = nullptr;
  vector<Blob<Dtype>*> recur_input_blobs_;
  vector<Blob<Dtype>*> recur_output_blobs_;
  vector<Blob<Dtype>*> output_blobs_;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_RECURRENT_LAYER_HPP_
