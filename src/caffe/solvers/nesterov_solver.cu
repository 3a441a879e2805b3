// NesterovSolver's update on the device (ComputeUpdateValue in GPU mode): the momentum history
// advances and the gradient becomes the look-ahead step, in one kernel.
#include "caffe/common.hpp"
#include "caffe/solvers/gpu_updates.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void NesterovUpdateKernel(int n, Dtype* g, Dtype* h, Dtype momentum, Dtype local_rate) {
  CUDA_KERNEL_LOOP(i, n) {
    const Dtype previous = h[i];
    const Dtype current = local_rate * g[i] + momentum * previous;
    h[i] = current;
    g[i] = (Dtype(1) + momentum) * current + (-momentum) * previous;
  }
}

}  // namespace

template <typename Dtype>
void nesterov_update_gpu(int n, Dtype* g, Dtype* h, Dtype momentum, Dtype local_rate) {
  if (n <= 0) return;
  NesterovUpdateKernel<Dtype>
      <<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(n, g, h, momentum, local_rate);
  CUDA_POST_KERNEL_CHECK;
}

template void nesterov_update_gpu<float>(int, float*, float*, float, float);
template void nesterov_update_gpu<double>(int, double*, double*, double, double);

}  // namespace caffe
