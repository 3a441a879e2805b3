// SigmoidCrossEntropyLoss on the GPU: the inner Sigmoid layer runs in GPU mode (for the
// gradient), one thread per value evaluates the overflow-free loss, and cuBLAS sums the losses
// and the "counted" flags into the host scalars the normalizer needs.
// Legend as in sigmoid_cross_entropy_loss_layer.hpp: N batch, D values per item.
#include "caffe/layers/sigmoid_cross_entropy_loss_layer.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void SigmoidCrossEntropyLossForwardKernel(int count, const Dtype* input,
                                                     const Dtype* target, bool has_ignore_label,
                                                     int ignore_label, Dtype* value_loss,
                                                     Dtype* value_counted) {
  CUDA_KERNEL_LOOP(i, count) {
    if (has_ignore_label && static_cast<int>(target[i]) == ignore_label) {
      value_loss[i] = 0;
      value_counted[i] = 0;
      continue;
    }
    // exp() only ever sees -|x|, as on the CPU.
    const Dtype x = input[i];
    const Dtype positive = x >= 0;
    value_loss[i] = log(1 + exp(x - 2 * x * positive)) - x * (target[i] - positive);
    value_counted[i] = 1;
  }
}

template <typename Dtype>
__global__ void SigmoidCrossEntropyLossIgnoreKernel(int count, const Dtype* target,
                                                    int ignore_label, Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(i, count) {
    if (static_cast<int>(target[i]) == ignore_label) bottom_diff[i] = 0;
  }
}

}  // namespace

template <typename Dtype>
void SigmoidCrossEntropyLossLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom,
                                                      const Blobs<Dtype>& top) {
  sigmoid_layer_->Forward(sigmoid_bottom_vec_, sigmoid_top_vec_);
  const int count = bottom[0]->count();
  Dtype loss = 0;
  Dtype valid_count = 0;
  if (count > 0) {
    SigmoidCrossEntropyLossForwardKernel<Dtype>
        <<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
            count, bottom[0]->gpu_data(), bottom[1]->gpu_data(), has_ignore_label_, ignore_label_,
            value_loss_.mutable_gpu_data(), value_counted_.mutable_gpu_data());
    CUDA_POST_KERNEL_CHECK;
    // Ignored values hold 0, so the dot with the flags is the plain sum (with its sign).
    caffe_gpu_dot(count, value_loss_.gpu_data(), value_counted_.gpu_data(), &loss);
    caffe_gpu_asum(count, value_counted_.gpu_data(), &valid_count);
  }
  normalizer_ = LossLayer<Dtype>::GetNormalizer(normalization_, outer_num_, inner_num_,
                                                static_cast<int>(valid_count));
  top[0]->mutable_cpu_data()[0] = loss / normalizer_;
}

template <typename Dtype>
void SigmoidCrossEntropyLossLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top,
                                                       const vector<bool>& propagate_down,
                                                       const Blobs<Dtype>& bottom) {
  LAYER_CHECK(!propagate_down[1]) << "cannot backpropagate to the targets (bottom[1])";
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  const Dtype* target = bottom[1]->gpu_data();
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  caffe_gpu_sub(count, sigmoid_output_.gpu_data(), target, bottom_diff);
  if (has_ignore_label_ && count > 0) {
    SigmoidCrossEntropyLossIgnoreKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
        count, target, ignore_label_, bottom_diff);
    CUDA_POST_KERNEL_CHECK;
  }
  caffe_gpu_scal(count, top[0]->cpu_diff()[0] / normalizer_, bottom_diff);
}

INSTANTIATE_LAYER_GPU_FUNCS(SigmoidCrossEntropyLossLayer);

}  // namespace caffe
