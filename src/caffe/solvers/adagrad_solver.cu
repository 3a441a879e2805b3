// AdaGradSolver's update on the device (ComputeUpdateValue in GPU mode), in one kernel: the sum of
// squared gradients grows and the gradient becomes lr * g / (sqrt(sum) + delta).
#include "caffe/common.hpp"
#include "caffe/solvers/gpu_updates.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void AdaGradUpdateKernel(int n, Dtype* g, Dtype* h, Dtype delta, Dtype local_rate) {
  CUDA_KERNEL_LOOP(i, n) {
    const Dtype gradient = g[i];
    const Dtype history = gradient * gradient + h[i];
    h[i] = history;
    g[i] = local_rate * (gradient / (sqrt(history) + delta));
  }
}

}  // namespace

template <typename Dtype>
void adagrad_update_gpu(int n, Dtype* g, Dtype* h, Dtype delta, Dtype local_rate) {
  if (n <= 0) return;
  AdaGradUpdateKernel<Dtype>
      <<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(n, g, h, delta, local_rate);
  CUDA_POST_KERNEL_CHECK;
}

template void adagrad_update_gpu<float>(int, float*, float*, float, float);
template void adagrad_update_gpu<double>(int, double*, double*, double, double);

}  // namespace caffe
