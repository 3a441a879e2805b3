// LSTMUnit: one timestep of an LSTM cell, given the gate pre-activations. The LSTM layer's
// unrolled net runs one of these per timestep; it can also be used on its own.
// Legend: N independent streams, H hidden size (num_output of the LSTM); gate pre-activations
// come as 4H values per stream, in the order i (input), f (forget), o (output), g (candidate).
#ifndef CAFFE_LAYERS_LSTM_UNIT_LAYER_HPP_
#define CAFFE_LAYERS_LSTM_UNIT_LAYER_HPP_

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// bottom[0] c_{t-1}: (1, N, H); bottom[1] gate inputs (1, N, 4H) = [i', f', o', g'];
/// bottom[2] cont_t: (1, N), 0 where a sequence starts (the previous cell is forgotten).
/// i = sigmoid(i'), f = cont_t * sigmoid(f'), o = sigmoid(o'), g = tanh(g');
/// top[0] c_t = f * c_{t-1} + i * g: (1, N, H); top[1] h_t = o * tanh(c_t): (1, N, H).
/// No learned parameters; no gradient to cont_t. As BVLC, the forget gate's gradient is
/// dc * c_{t-1} * f * (1 - f) with f already multiplied by cont_t (exact for cont in {0, 1}).
template <typename Dtype>
class LSTMUnitLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "LSTMUnit"; }
  int ExactNumBottomBlobs() const override { return 3; }
  int ExactNumTopBlobs() const override { return 2; }
  /// The sequence indicators (bottom 2) take no gradient.
  bool AllowForceBackward(int bottom_index) const override { return bottom_index != 2; }
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Forward writes all of c_t and h_t; backward all of both diffs it writes.
  bool WritesWholeOutputs() const override { return true; }
  /// Backward writes the diffs of c_{t-1} and of the gate inputs together, even where only one
  /// is propagated: LMS must know of both.
  bool DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
                        const vector<bool>& propagate_down, MemoryUses* uses) const override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  /// Writes (overwrites) the diffs of c_{t-1} and of the gate inputs from the diffs of c_t, h_t.
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

 private:
  int hidden_dim_ = 0;  // H
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_LSTM_UNIT_LAYER_HPP_
