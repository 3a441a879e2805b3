// Embed on the GPU. Legend as in embed_layer.hpp: M indices, K table rows, N embedding size.
// Forward gathers one table row per index (one thread per output value) and, like the CPU path,
// rejects an index that is not an integer in [0, K): the kernel records the first bad position
// in a device int, read back after the launch (4 bytes, the one synchronization of this layer).
// Backward scatters each top diff row into its table row with atomicAdd (several indices may
// name one row), so the weight diff's rounding order varies from run to run.
#include <vector>

#include "caffe/kernels/math_functions.hpp"
#include "caffe/layers/embed_layer.hpp"

namespace caffe {

namespace {

// No bad index seen: the value caffe_gpu_memset(0x7f) leaves in every byte.
constexpr int kNoInvalidIndex = 0x7f7f7f7f;

template <typename Dtype>
__device__ inline bool ValidIndex(Dtype value, int input_dim) {
  return value >= 0 && value < input_dim && value == static_cast<Dtype>(static_cast<int>(value));
}

template <typename Dtype>
__global__ void EmbedForwardKernel(const int n, const Dtype* indices, const Dtype* weight,
                                   const Dtype* bias, const int input_dim, const int num_output,
                                   Dtype* top, int* first_invalid) {
  CUDA_KERNEL_LOOP(index, n) {
    const int m = index / num_output;
    const int column = index % num_output;
    const Dtype value = indices[m];
    if (!ValidIndex(value, input_dim)) {
      atomicMin(first_invalid, m);
      top[index] = 0;
      continue;
    }
    const Dtype row_value = weight[static_cast<long>(value) * num_output + column];
    top[index] = bias ? row_value + bias[column] : row_value;
  }
}

template <typename Dtype>
__global__ void EmbedBackwardKernel(const int n, const Dtype* indices, const Dtype* top_diff,
                                    const int input_dim, const int num_output, Dtype* weight_diff) {
  CUDA_KERNEL_LOOP(index, n) {
    const Dtype value = indices[index / num_output];
    // Forward has rejected bad indices; skipping them keeps a changed bottom in bounds.
    if (!ValidIndex(value, input_dim)) continue;
    atomicAdd(weight_diff + static_cast<long>(value) * num_output + index % num_output,
              top_diff[index]);
  }
}

// bias_diff[c] += the sum over m of top_diff[m][c], summed first as on the CPU.
template <typename Dtype>
__global__ void EmbedBiasBackwardKernel(const int num_output, const int indices,
                                        const Dtype* top_diff, Dtype* bias_diff) {
  CUDA_KERNEL_LOOP(column, num_output) {
    Dtype sum = 0;
    for (int m = 0; m < indices; ++m) sum += top_diff[static_cast<long>(m) * num_output + column];
    bias_diff[column] += sum;
  }
}

}  // namespace

template <typename Dtype>
void EmbedLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int n = indices_ * num_output_;
  if (n <= 0) return;
  int* first_invalid = first_invalid_.mutable_gpu_data();
  caffe_gpu_memset(sizeof(int), 0x7f, first_invalid);
  EmbedForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(
      n, bottom[0]->gpu_data(), this->blobs_[0]->gpu_data(),
      bias_term_ ? this->blobs_[1]->gpu_data() : nullptr, input_dim_, num_output_,
      top[0]->mutable_gpu_data(), first_invalid);
  CUDA_POST_KERNEL_CHECK;
  const int position = first_invalid_.cpu_data()[0];
  if (position != kNoInvalidIndex) {
    LAYER_THROW() << "bottom[0] value " << bottom[0]->cpu_data()[position] << " at position "
                  << position << " is not a valid index: indices must be integers in "
                  << "[0, input_dim) = [0, " << input_dim_ << ")";
  }
}

template <typename Dtype>
void EmbedLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                     const Blobs<Dtype>& bottom) {
  LAYER_CHECK(!propagate_down[0])
      << "cannot backpropagate to its input: bottom[0] holds indices, which have no gradient";
  const int n = indices_ * num_output_;
  if (n <= 0) return;
  const Dtype* top_diff = top[0]->gpu_diff();
  if (this->param_propagate_down_[0]) {
    EmbedBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(n), CAFFE_CUDA_NUM_THREADS>>>(
        n, bottom[0]->gpu_data(), top_diff, input_dim_, num_output_,
        this->blobs_[0]->mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
  }
  if (bias_term_ && this->param_propagate_down_[1]) {
    EmbedBiasBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(num_output_), CAFFE_CUDA_NUM_THREADS>>>(
        num_output_, indices_, top_diff, this->blobs_[1]->mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(EmbedLayer);

}  // namespace caffe
