// SoftmaxWithLoss on the GPU: the inner Softmax layer runs in GPU mode, then one thread per
// (outer, inner) position looks up its label's probability. The per-position losses and
// "counted" flags are summed by cuBLAS into host scalars, which the normalizer needs anyway.
// An out-of-range label is reported exactly as on the CPU: the kernels record the first bad
// position, and the host throws for it.
// Legend as in softmax_with_loss_layer.hpp: outer, C classes, inner; a position is (outer, inner).
#include <cfloat>
#include <climits>

#include "caffe/layers/softmax_with_loss_layer.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void SoftmaxLossForwardKernel(int positions, int channels, int inner, const Dtype* prob,
                                         const Dtype* label, bool has_ignore_label,
                                         int ignore_label, Dtype* position_loss,
                                         Dtype* position_counted, int* first_bad_label) {
  CUDA_KERNEL_LOOP(position, positions) {
    position_loss[position] = 0;
    position_counted[position] = 0;
    const int label_value = static_cast<int>(label[position]);
    if (has_ignore_label && label_value == ignore_label) continue;
    if (label_value < 0 || label_value >= channels) {
      atomicMin(first_bad_label, position);
      continue;
    }
    const int o = position / inner;
    const int i = position % inner;
    const Dtype p = prob[(static_cast<size_t>(o) * channels + label_value) * inner + i];
    // As std::max on the CPU: a NaN probability gives a NaN loss (fmax would drop the NaN).
    position_loss[position] = -log(p < Dtype(FLT_MIN) ? Dtype(FLT_MIN) : p);
    position_counted[position] = 1;
  }
}

// bottom_diff holds the probabilities on entry; subtracts the one-hot label, or zeroes the
// position's column where its label is ignored.
template <typename Dtype>
__global__ void SoftmaxLossBackwardKernel(int positions, int channels, int inner,
                                          const Dtype* label, bool has_ignore_label,
                                          int ignore_label, Dtype* bottom_diff,
                                          Dtype* position_counted, int* first_bad_label) {
  CUDA_KERNEL_LOOP(position, positions) {
    position_counted[position] = 0;
    const int o = position / inner;
    const int i = position % inner;
    Dtype* column = bottom_diff + static_cast<size_t>(o) * channels * inner + i;
    const int label_value = static_cast<int>(label[position]);
    if (has_ignore_label && label_value == ignore_label) {
      for (int c = 0; c < channels; ++c) column[c * inner] = 0;
      continue;
    }
    if (label_value < 0 || label_value >= channels) {
      atomicMin(first_bad_label, position);
      continue;
    }
    column[label_value * inner] -= 1;
    position_counted[position] = 1;
  }
}

}  // namespace

template <typename Dtype>
void SoftmaxWithLossLayer<Dtype>::ThrowIfBadLabelOnGpu(const Blob<Dtype>& label) {
  const int position = first_bad_label_.cpu_data()[0];
  if (position != INT_MAX) CheckLabel(static_cast<int>(label.cpu_data()[position]), position);
}

template <typename Dtype>
void SoftmaxWithLossLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  softmax_layer_->Forward(softmax_bottom_vec_, softmax_top_vec_);
  const int positions = outer_num_ * inner_num_;
  first_bad_label_.mutable_cpu_data()[0] = INT_MAX;  // none yet
  Dtype loss = 0;
  Dtype valid_count = 0;
  if (positions > 0) {
    SoftmaxLossForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(positions), CAFFE_CUDA_NUM_THREADS>>>(
        positions, channels_, inner_num_, prob_.gpu_data(), bottom[1]->gpu_data(),
        has_ignore_label_, ignore_label_, position_loss_.mutable_gpu_data(),
        position_counted_.mutable_gpu_data(), first_bad_label_.mutable_gpu_data());
    CUDA_POST_KERNEL_CHECK;
    ThrowIfBadLabelOnGpu(*bottom[1]);
    // Uncounted positions hold 0, so the dot with the flags is the plain sum (with its sign).
    caffe_gpu_dot(positions, position_loss_.gpu_data(), position_counted_.gpu_data(), &loss);
    caffe_gpu_asum(positions, position_counted_.gpu_data(), &valid_count);
  }
  top[0]->mutable_cpu_data()[0] =
      loss / LossLayer<Dtype>::GetNormalizer(normalization_, outer_num_, inner_num_,
                                             static_cast<int>(valid_count));
  if (top.size() == 2) top[1]->ShareData(prob_);
}

template <typename Dtype>
void SoftmaxWithLossLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top,
                                               const vector<bool>& propagate_down,
                                               const Blobs<Dtype>& bottom) {
  LAYER_CHECK(!propagate_down[1]) << "cannot backpropagate to the labels (bottom[1])";
  if (!propagate_down[0]) return;
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  caffe_gpu_copy(prob_.count(), prob_.gpu_data(), bottom_diff);
  const int positions = outer_num_ * inner_num_;
  first_bad_label_.mutable_cpu_data()[0] = INT_MAX;
  Dtype valid_count = 0;
  if (positions > 0) {
    SoftmaxLossBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(positions), CAFFE_CUDA_NUM_THREADS>>>(
        positions, channels_, inner_num_, bottom[1]->gpu_data(), has_ignore_label_, ignore_label_,
        bottom_diff, position_counted_.mutable_gpu_data(), first_bad_label_.mutable_gpu_data());
    CUDA_POST_KERNEL_CHECK;
    ThrowIfBadLabelOnGpu(*bottom[1]);
    caffe_gpu_asum(positions, position_counted_.gpu_data(), &valid_count);
  }
  const Dtype scale = top[0]->cpu_diff()[0] /
                      LossLayer<Dtype>::GetNormalizer(normalization_, outer_num_, inner_num_,
                                                      static_cast<int>(valid_count));
  caffe_gpu_scal(prob_.count(), scale, bottom_diff);
}

INSTANTIATE_LAYER_GPU_FUNCS(SoftmaxWithLossLayer);

}  // namespace caffe
