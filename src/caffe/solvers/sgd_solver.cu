// SGDSolver's momentum update on the device (ComputeUpdateValue in GPU mode), fused into one
// kernel: the history advances and the gradient becomes the step in a single pass.
#include "caffe/common.hpp"
#include "caffe/solvers/gpu_updates.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void SGDUpdateKernel(int n, Dtype* g, Dtype* h, Dtype momentum, Dtype local_rate) {
  CUDA_KERNEL_LOOP(i, n) {
    const Dtype step = local_rate * g[i] + momentum * h[i];
    h[i] = step;
    g[i] = step;
  }
}

}  // namespace

template <typename Dtype>
void sgd_update_gpu(int n, Dtype* g, Dtype* h, Dtype momentum, Dtype local_rate) {
  if (n <= 0) return;
  SGDUpdateKernel<Dtype>
      <<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(n, g, h, momentum, local_rate);
  CUDA_POST_KERNEL_CHECK;
}

template void sgd_update_gpu<float>(int, float*, float*, float, float);
template void sgd_update_gpu<double>(int, double*, double*, double, double);

}  // namespace caffe
