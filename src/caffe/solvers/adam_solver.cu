// AdamSolver's update on the device (ComputeUpdateValue in GPU mode), in one kernel: both moments
// advance and the gradient becomes the bias-corrected step (the correction comes from the host).
#include "caffe/common.hpp"
#include "caffe/solvers/gpu_updates.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void AdamUpdateKernel(int n, Dtype* g, Dtype* m, Dtype* v, Dtype beta1, Dtype beta2,
                                 Dtype eps_hat, Dtype corrected_rate) {
  CUDA_KERNEL_LOOP(i, n) {
    const Dtype gradient = g[i];
    const Dtype mean = (Dtype(1) - beta1) * gradient + beta1 * m[i];
    const Dtype mean_sq = (Dtype(1) - beta2) * (gradient * gradient) + beta2 * v[i];
    m[i] = mean;
    v[i] = mean_sq;
    g[i] = corrected_rate * (mean / (sqrt(mean_sq) + eps_hat));
  }
}

}  // namespace

template <typename Dtype>
void adam_update_gpu(int n, Dtype* g, Dtype* m, Dtype* v, Dtype beta1, Dtype beta2, Dtype eps_hat,
                     Dtype corrected_rate) {
  if (n <= 0) return;
  AdamUpdateKernel<Dtype><<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(n, g, m, v, beta1, beta2,
                                                                           eps_hat, corrected_rate);
  CUDA_POST_KERNEL_CHECK;
}

template void adam_update_gpu<float>(int, float*, float*, float*, float, float, float, float);
template void adam_update_gpu<double>(int, double*, double*, double*, double, double, double,
                                      double);

}  // namespace caffe
