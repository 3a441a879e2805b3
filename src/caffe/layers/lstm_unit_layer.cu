// LSTMUnit on the GPU: one thread per (stream, hidden unit) evaluates the gates and the cell,
// forward and backward, exactly as the CPU loop body does.
// Legend as in lstm_unit_layer.hpp: N streams, H hidden size, gates i, f, o, g in that order.
#include "caffe/layers/lstm_unit_layer.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__device__ Dtype LSTMSigmoid(Dtype x) {
  return Dtype(1) / (Dtype(1) + exp(-x));
}

template <typename Dtype>
__global__ void LSTMUnitForwardKernel(int count, int hidden, const Dtype* c_prev,
                                      const Dtype* gates, const Dtype* cont, Dtype* c, Dtype* h) {
  CUDA_KERNEL_LOOP(k, count) {
    const int n = k / hidden;
    const int d = k % hidden;
    const Dtype* x = gates + static_cast<size_t>(n) * 4 * hidden;
    const Dtype i = LSTMSigmoid(x[d]);
    const Dtype f = cont[n] == 0 ? Dtype(0) : cont[n] * LSTMSigmoid(x[hidden + d]);
    const Dtype o = LSTMSigmoid(x[2 * hidden + d]);
    const Dtype g = tanh(x[3 * hidden + d]);
    const Dtype c_k = f * c_prev[k] + i * g;
    c[k] = c_k;
    h[k] = o * tanh(c_k);
  }
}

template <typename Dtype>
__global__ void LSTMUnitBackwardKernel(int count, int hidden, const Dtype* c_prev,
                                       const Dtype* gates, const Dtype* cont, const Dtype* c,
                                       const Dtype* c_diff, const Dtype* h_diff, Dtype* c_prev_diff,
                                       Dtype* gates_diff) {
  CUDA_KERNEL_LOOP(k, count) {
    const int n = k / hidden;
    const int d = k % hidden;
    const Dtype* x = gates + static_cast<size_t>(n) * 4 * hidden;
    Dtype* dx = gates_diff + static_cast<size_t>(n) * 4 * hidden;
    const Dtype i = LSTMSigmoid(x[d]);
    const Dtype f = cont[n] == 0 ? Dtype(0) : cont[n] * LSTMSigmoid(x[hidden + d]);
    const Dtype o = LSTMSigmoid(x[2 * hidden + d]);
    const Dtype g = tanh(x[3 * hidden + d]);
    const Dtype tanh_c = tanh(c[k]);
    // dL/dc_t through both outputs: c_t itself and h_t = o * tanh(c_t).
    const Dtype dc = c_diff[k] + h_diff[k] * o * (Dtype(1) - tanh_c * tanh_c);
    c_prev_diff[k] = dc * f;
    dx[d] = dc * g * i * (Dtype(1) - i);
    dx[hidden + d] = dc * c_prev[k] * f * (Dtype(1) - f);
    dx[2 * hidden + d] = h_diff[k] * tanh_c * o * (Dtype(1) - o);
    dx[3 * hidden + d] = dc * i * (Dtype(1) - g * g);
  }
}

}  // namespace

template <typename Dtype>
void LSTMUnitLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = top[1]->count();
  if (count == 0) return;
  LSTMUnitForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, hidden_dim_, bottom[0]->gpu_data(), bottom[1]->gpu_data(), bottom[2]->gpu_data(),
      top[0]->mutable_gpu_data(), top[1]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void LSTMUnitLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                        const Blobs<Dtype>& bottom) {
  LAYER_CHECK(!propagate_down[2]) << "cannot backpropagate to the sequence indicators (bottom[2])";
  if (!propagate_down[0] && !propagate_down[1]) return;
  const int count = top[1]->count();
  if (count == 0) return;
  // Both diffs are computed together; BVLC writes both whatever propagate_down says.
  LSTMUnitBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, hidden_dim_, bottom[0]->gpu_data(), bottom[1]->gpu_data(), bottom[2]->gpu_data(),
      top[0]->gpu_data(), top[0]->gpu_diff(), top[1]->gpu_diff(), bottom[0]->mutable_gpu_diff(),
      bottom[1]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(LSTMUnitLayer);

}  // namespace caffe
