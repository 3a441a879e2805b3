// Legend as in lstm_unit_layer.hpp: N streams, H hidden size, gates i, f, o, g in that order.
#include "caffe/layers/lstm_unit_layer.hpp"

#include <cmath>
#include <vector>

namespace caffe {

namespace {

template <typename Dtype>
inline Dtype Sigmoid(Dtype x) {
  return Dtype(1) / (Dtype(1) + std::exp(-x));
}

}  // namespace

template <typename Dtype>
void LSTMUnitLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const char* names[3] = {"bottom[0] (c_{t-1})", "bottom[1] (gate inputs)", "bottom[2] (cont)"};
  for (int i = 0; i < 3; ++i) {
    const int axes = i == 2 ? 2 : 3;
    LAYER_CHECK_EQ(bottom[i]->num_axes(), axes)
        << names[i] << " " << bottom[i]->shape_string() << " must have " << axes
        << " axes: (1 timestep, N streams" << (i == 2 ? ")" : ", values)");
    LAYER_CHECK_EQ(bottom[i]->shape(0), 1)
        << names[i] << " " << bottom[i]->shape_string() << " must hold a single timestep";
  }
  const int num = bottom[0]->shape(1);
  for (int i = 1; i < 3; ++i) {
    LAYER_CHECK_EQ(bottom[i]->shape(1), num)
        << names[i] << " " << bottom[i]->shape_string() << " has a different number of streams"
        << " than bottom[0] " << bottom[0]->shape_string();
  }
  hidden_dim_ = bottom[0]->shape(2);
  LAYER_CHECK_EQ(bottom[1]->shape(2), 4 * hidden_dim_)
      << "bottom[1] (gate inputs) " << bottom[1]->shape_string() << " must hold 4 gates of the "
      << hidden_dim_ << " cell values of bottom[0] " << bottom[0]->shape_string();
  top[0]->ReshapeLike(*bottom[0]);
  top[1]->ReshapeLike(*bottom[0]);
}

template <typename Dtype>
void LSTMUnitLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int num = bottom[0]->shape(1);
  const int hidden = hidden_dim_;
  const Dtype* c_prev = bottom[0]->cpu_data();
  const Dtype* gates = bottom[1]->cpu_data();
  const Dtype* cont = bottom[2]->cpu_data();
  Dtype* c = top[0]->mutable_cpu_data();
  Dtype* h = top[1]->mutable_cpu_data();
  for (int n = 0; n < num; ++n) {
    const Dtype* x = gates + n * 4 * hidden;
    for (int d = 0; d < hidden; ++d) {
      const Dtype i = Sigmoid(x[d]);
      const Dtype f = cont[n] == 0 ? Dtype(0) : cont[n] * Sigmoid(x[hidden + d]);
      const Dtype o = Sigmoid(x[2 * hidden + d]);
      const Dtype g = std::tanh(x[3 * hidden + d]);
      const int k = n * hidden + d;
      c[k] = f * c_prev[k] + i * g;
      h[k] = o * std::tanh(c[k]);
    }
  }
}

template <typename Dtype>
void LSTMUnitLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                        const Blobs<Dtype>& bottom) {
  LAYER_CHECK(!propagate_down[2]) << "cannot backpropagate to the sequence indicators (bottom[2])";
  if (!propagate_down[0] && !propagate_down[1]) return;
  const int num = bottom[0]->shape(1);
  const int hidden = hidden_dim_;
  const Dtype* c_prev = bottom[0]->cpu_data();
  const Dtype* gates = bottom[1]->cpu_data();
  const Dtype* cont = bottom[2]->cpu_data();
  const Dtype* c = top[0]->cpu_data();
  const Dtype* c_diff = top[0]->cpu_diff();
  const Dtype* h_diff = top[1]->cpu_diff();
  // Both diffs are computed together; BVLC writes both whatever propagate_down says.
  Dtype* c_prev_diff = bottom[0]->mutable_cpu_diff();
  Dtype* gates_diff = bottom[1]->mutable_cpu_diff();
  for (int n = 0; n < num; ++n) {
    const Dtype* x = gates + n * 4 * hidden;
    Dtype* dx = gates_diff + n * 4 * hidden;
    for (int d = 0; d < hidden; ++d) {
      const Dtype i = Sigmoid(x[d]);
      const Dtype f = cont[n] == 0 ? Dtype(0) : cont[n] * Sigmoid(x[hidden + d]);
      const Dtype o = Sigmoid(x[2 * hidden + d]);
      const Dtype g = std::tanh(x[3 * hidden + d]);
      const int k = n * hidden + d;
      const Dtype tanh_c = std::tanh(c[k]);
      // dL/dc_t through both outputs: c_t itself and h_t = o * tanh(c_t).
      const Dtype dc = c_diff[k] + h_diff[k] * o * (Dtype(1) - tanh_c * tanh_c);
      c_prev_diff[k] = dc * f;
      dx[d] = dc * g * i * (Dtype(1) - i);
      dx[hidden + d] = dc * c_prev[k] * f * (Dtype(1) - f);
      dx[2 * hidden + d] = h_diff[k] * tanh_c * o * (Dtype(1) - o);
      dx[3 * hidden + d] = dc * i * (Dtype(1) - g * g);
    }
  }
}

template <typename Dtype>
bool LSTMUnitLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                            const Blobs<Dtype>& top,
                                            const vector<bool>& propagate_down,
                                            MemoryUses* uses) const {
  Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  if (pass == Pass::kBackward && (propagate_down[0] || propagate_down[1])) {
    uses->AddDiff(*bottom[0], kOverwrite);
    uses->AddDiff(*bottom[1], kOverwrite);
  }
  return true;
}

INSTANTIATE_CLASS(LSTMUnitLayer);
REGISTER_LAYER_CLASS(LSTMUnit);

}  // namespace caffe
