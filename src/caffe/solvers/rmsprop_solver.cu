// RMSPropSolver's update on the device (ComputeUpdateValue in GPU mode), in one kernel: the running
// mean of squared gradients advances and the gradient becomes lr * g / (sqrt(mean) + delta).
#include "caffe/common.hpp"
#include "caffe/solvers/gpu_updates.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void RMSPropUpdateKernel(int n, Dtype* g, Dtype* h, Dtype rms_decay, Dtype delta,
                                    Dtype local_rate) {
  CUDA_KERNEL_LOOP(i, n) {
    const Dtype gradient = g[i];
    const Dtype history = (Dtype(1) - rms_decay) * (gradient * gradient) + rms_decay * h[i];
    h[i] = history;
    g[i] = local_rate * (gradient / (sqrt(history) + delta));
  }
}

}  // namespace

template <typename Dtype>
void rmsprop_update_gpu(int n, Dtype* g, Dtype* h, Dtype rms_decay, Dtype delta, Dtype local_rate) {
  if (n <= 0) return;
  RMSPropUpdateKernel<Dtype>
      <<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(n, g, h, rms_decay, delta, local_rate);
  CUDA_POST_KERNEL_CHECK;
}

template void rmsprop_update_gpu<float>(int, float*, float*, float, float, float);
template void rmsprop_update_gpu<double>(int, double*, double*, double, double, double);

}  // namespace caffe
