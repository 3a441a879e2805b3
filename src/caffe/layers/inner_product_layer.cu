// InnerProduct on the GPU: the CPU path's GEMMs through cuBLAS, and small kernels for the bias.
// Legend as in inner_product_layer.hpp: M examples, K inputs per example, N outputs.
#include <vector>

#include "caffe/kernels/math_functions.hpp"
#include "caffe/layers/inner_product_layer.hpp"

namespace caffe {

namespace {

// top (M x N) += bias per column.
template <typename Dtype>
__global__ void AddRowBiasKernel(const int n, const int outputs, const Dtype* bias, Dtype* top) {
  CUDA_KERNEL_LOOP(index, n) { top[index] += bias[index % outputs]; }
}

// bias_diff[n] += top_diff[0][n] + ... + top_diff[M - 1][n], one thread per output, adding in
// the CPU path's order (neighbouring threads read neighbouring values of each row).
template <typename Dtype>
__global__ void AccumulateColumnSumsKernel(const int outputs, const int examples,
                                           const Dtype* top_diff, Dtype* bias_diff) {
  CUDA_KERNEL_LOOP(column, outputs) {
    Dtype sum = bias_diff[column];
    for (int m = 0; m < examples; ++m) sum += top_diff[static_cast<long>(m) * outputs + column];
    bias_diff[column] = sum;
  }
}

}  // namespace

template <typename Dtype>
void InnerProductLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  if (examples_ <= 0) return;
  Dtype* top_data = top[0]->mutable_gpu_data();
  caffe_gpu_gemm<Dtype>(CblasNoTrans, transpose_ ? CblasNoTrans : CblasTrans, examples_, outputs_,
                        inputs_, Dtype(1), bottom[0]->gpu_data(), this->blobs_[0]->gpu_data(),
                        Dtype(0), top_data);
  if (bias_term_) {
    const int n = examples_ * outputs_;
    AddRowBiasKernel<Dtype><<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(
        n, outputs_, this->blobs_[1]->gpu_data(), top_data);
    CUDA_POST_KERNEL_CHECK;
  }
}

template <typename Dtype>
void InnerProductLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top,
                                            const vector<bool>& propagate_down,
                                            const Blobs<Dtype>& bottom) {
  if (examples_ <= 0) return;
  const Dtype* top_diff = top[0]->gpu_diff();
  // Param diffs accumulate, as on the CPU.
  if (this->param_propagate_down_[0]) {
    const Dtype* bottom_data = bottom[0]->gpu_data();
    Dtype* weight_diff = this->blobs_[0]->mutable_gpu_diff();
    if (transpose_) {  // dW (K, N) += bottom^T * top_diff
      caffe_gpu_gemm<Dtype>(CblasTrans, CblasNoTrans, inputs_, outputs_, examples_, Dtype(1),
                            bottom_data, top_diff, Dtype(1), weight_diff);
    } else {  // dW (N, K) += top_diff^T * bottom
      caffe_gpu_gemm<Dtype>(CblasTrans, CblasNoTrans, outputs_, inputs_, examples_, Dtype(1),
                            top_diff, bottom_data, Dtype(1), weight_diff);
    }
  }
  if (bias_term_ && this->param_propagate_down_[1]) {
    AccumulateColumnSumsKernel<Dtype><<<CAFFE_GET_BLOCKS(outputs_), CAFFE_CUDA_NUM_THREADS>>>(
        outputs_, examples_, top_diff, this->blobs_[1]->mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
  }
  if (propagate_down[0]) {
    caffe_gpu_gemm<Dtype>(CblasNoTrans, transpose_ ? CblasTrans : CblasNoTrans, examples_, inputs_,
                          outputs_, Dtype(1), top_diff, this->blobs_[0]->gpu_data(), Dtype(0),
                          bottom[0]->mutable_gpu_diff());
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(InnerProductLayer);

}  // namespace caffe
