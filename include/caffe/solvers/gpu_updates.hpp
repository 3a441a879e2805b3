// The gradient-descent solvers' update rules on the device (GPU builds only), one fused kernel per
// rule, in src/caffe/solvers/<name>_solver.cu. Each reads the gradient g (already normalised,
// regularised and clipped), advances the solver's history in place and overwrites g with the step
// that Blob::Update then subtracts from the weights. Element by element they do the arithmetic of
// the solver's ComputeUpdateValue on the CPU, in the same order; the host computes the scalars
// (local_rate, Adam's bias correction) exactly as the CPU path does. n may be 0.
#ifndef CAFFE_SOLVERS_GPU_UPDATES_HPP_
#define CAFFE_SOLVERS_GPU_UPDATES_HPP_

#ifndef CPU_ONLY

namespace caffe {

/// SGD: h = local_rate * g + momentum * h; g = h.
template <typename Dtype>
void sgd_update_gpu(int n, Dtype* g, Dtype* h, Dtype momentum, Dtype local_rate);

/// Nesterov: h' = local_rate * g + momentum * h; g = (1 + momentum) * h' - momentum * h.
template <typename Dtype>
void nesterov_update_gpu(int n, Dtype* g, Dtype* h, Dtype momentum, Dtype local_rate);

/// AdaGrad: h += g^2; g = local_rate * (g / (sqrt(h) + delta)).
template <typename Dtype>
void adagrad_update_gpu(int n, Dtype* g, Dtype* h, Dtype delta, Dtype local_rate);

/// RMSProp: h = (1 - rms_decay) * g^2 + rms_decay * h; g = local_rate * (g / (sqrt(h) + delta)).
template <typename Dtype>
void rmsprop_update_gpu(int n, Dtype* g, Dtype* h, Dtype rms_decay, Dtype delta, Dtype local_rate);

/// AdaDelta, with grad_history E[g^2] and update_history E[dx^2] decaying by momentum:
/// E[g^2] = (1 - momentum) * g^2 + momentum * E[g^2];
/// dx = g * sqrt((E[dx^2] + delta) / (E[g^2] + delta));
/// E[dx^2] = (1 - momentum) * dx^2 + momentum * E[dx^2]; g = local_rate * dx.
template <typename Dtype>
void adadelta_update_gpu(int n, Dtype* g, Dtype* grad_history, Dtype* update_history,
                         Dtype momentum, Dtype delta, Dtype local_rate);

/// Adam: m = (1 - beta1) * g + beta1 * m; v = (1 - beta2) * g^2 + beta2 * v;
/// g = corrected_rate * (m / (sqrt(v) + eps_hat)), corrected_rate = local_rate * correction.
template <typename Dtype>
void adam_update_gpu(int n, Dtype* g, Dtype* m, Dtype* v, Dtype beta1, Dtype beta2, Dtype eps_hat,
                     Dtype corrected_rate);

}  // namespace caffe

#endif  // CPU_ONLY
#endif  // CAFFE_SOLVERS_GPU_UPDATES_HPP_
