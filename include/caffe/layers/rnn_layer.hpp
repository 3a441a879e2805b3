// RNN: the simple (Elman) recurrent network of BVLC Caffe, unrolled over the input's timesteps
// (see RecurrentLayer). Weights trained with BVLC Caffe load unchanged.
// Legend: T timesteps, N streams, D input values per timestep and stream (x's axes from 2 on),
// D_s static input values per stream, H hidden size (num_output).
#ifndef CAFFE_LAYERS_RNN_LAYER_HPP_
#define CAFFE_LAYERS_RNN_LAYER_HPP_

#include <string>
#include <vector>

#include "caffe/layers/recurrent_layer.hpp"

namespace caffe {

/// For t = 1..T, with h_0 carried over from the previous pass (or exposed as a bottom):
///   h_t = tanh(W_hh (cont_t h_{t-1}) + W_xh x_t + b_h (+ W_xh_static x_static)),
///   o_t = tanh(W_ho h_t + b_o).
/// bottoms: x (T, N, ...), cont (T, N), optional x_static (N, ...), then with expose_hidden
/// h_0 (1, N, H). tops: o (T, N, H), then with expose_hidden h_T (1, N, H).
/// blobs_: W_xh (H, D), b_h (H), [W_xh_static (H, D_s)], W_hh (H, H), W_ho (H, H), b_o (H).
/// recurrent_param: num_output (required), weight_filler, bias_filler, debug_info, expose_hidden.
template <typename Dtype>
class RNNLayer : public RecurrentLayer<Dtype> {
 public:
  using RecurrentLayer<Dtype>::RecurrentLayer;
  const char* type() const override { return "RNN"; }

 protected:
  void FillUnrolledNet(NetParameter* net_param) const override;
  void RecurrentInputBlobNames(vector<string>* names) const override;
  void RecurrentOutputBlobNames(vector<string>* names) const override;
  void RecurrentInputShapes(vector<BlobShape>* shapes) const override;
  void OutputBlobNames(vector<string>* names) const override;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_RNN_LAYER_HPP_
