// AdaDeltaSolver's update on the device (ComputeUpdateValue in GPU mode), in one kernel: both
// running means (squared gradients, squared updates) advance and the gradient becomes the step.
#include "caffe/common.hpp"
#include "caffe/solvers/gpu_updates.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void AdaDeltaUpdateKernel(int n, Dtype* g, Dtype* grad_history, Dtype* update_history,
                                     Dtype momentum, Dtype delta, Dtype local_rate) {
  CUDA_KERNEL_LOOP(i, n) {
    const Dtype gradient = g[i];
    const Dtype mean_sq_grad =
        (Dtype(1) - momentum) * (gradient * gradient) + momentum * grad_history[i];
    grad_history[i] = mean_sq_grad;
    const Dtype update = gradient * sqrt((delta + update_history[i]) / (delta + mean_sq_grad));
    update_history[i] = (Dtype(1) - momentum) * (update * update) + momentum * update_history[i];
    g[i] = local_rate * update;
  }
}

}  // namespace

template <typename Dtype>
void adadelta_update_gpu(int n, Dtype* g, Dtype* grad_history, Dtype* update_history,
                         Dtype momentum, Dtype delta, Dtype local_rate) {
  if (n <= 0) return;
  AdaDeltaUpdateKernel<Dtype><<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(
      n, g, grad_history, update_history, momentum, delta, local_rate);
  CUDA_POST_KERNEL_CHECK;
}

template void adadelta_update_gpu<float>(int, float*, float*, float*, float, float, float);
template void adadelta_update_gpu<double>(int, double*, double*, double*, double, double, double);

}  // namespace caffe
