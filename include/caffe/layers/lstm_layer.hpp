// LSTM: the long short-term memory of Hochreiter & Schmidhuber (1997), without peepholes, as in
// BVLC Caffe, unrolled over the input's timesteps (see RecurrentLayer). Weights trained with BVLC
// Caffe load unchanged: the same parameter blobs, in the same order and layout.
// Legend: T timesteps, N streams, D input values per timestep and stream (x's axes from 2 on),
// D_s static input values per stream, H hidden size (num_output).
#ifndef CAFFE_LAYERS_LSTM_LAYER_HPP_
#define CAFFE_LAYERS_LSTM_LAYER_HPP_

#include <string>
#include <vector>

#include "caffe/layers/recurrent_layer.hpp"

namespace caffe {

/// For t = 1..T, with h_0 and c_0 carried over from the previous pass (or exposed as bottoms):
///   [i'; f'; o'; g'] = W_xc x_t + b_c + W_hc (cont_t h_{t-1}) (+ W_xc_static x_static),
///   i = sigmoid(i'), f = cont_t sigmoid(f'), o = sigmoid(o'), g = tanh(g'),
///   c_t = f c_{t-1} + i g,   h_t = o tanh(c_t)   (LSTMUnit).
/// bottoms: x (T, N, ...), cont (T, N), optional x_static (N, ...), then with expose_hidden
/// h_0, c_0 (1, N, H). tops: h (T, N, H), then with expose_hidden h_T, c_T (1, N, H).
/// blobs_: W_xc (4H, D), b_c (4H), [W_xc_static (4H, D_s)], W_hc (4H, H); gate rows in the
/// order i, f, o, g. recurrent_param: num_output (required), weight_filler, bias_filler,
/// debug_info, expose_hidden.
template <typename Dtype>
class LSTMLayer : public RecurrentLayer<Dtype> {
 public:
  using RecurrentLayer<Dtype>::RecurrentLayer;
  const char* type() const override { return "LSTM"; }

 protected:
  void FillUnrolledNet(NetParameter* net_param) const override;
  void RecurrentInputBlobNames(vector<string>* names) const override;
  void RecurrentOutputBlobNames(vector<string>* names) const override;
  void RecurrentInputShapes(vector<BlobShape>* shapes) const override;
  void OutputBlobNames(vector<string>* names) const override;
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_LSTM_LAYER_HPP_
