// ContrastiveLoss on the GPU: one thread per pair forms d_n^2 and the pair's loss, cuBLAS sums
// the losses into the host scalar; backward is one thread per feature value.
// Legend as in contrastive_loss_layer.hpp: N pairs, C feature dimension, y_n similarity label.
#include "caffe/layers/contrastive_loss_layer.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void ContrastiveLossForwardKernel(int num, int channels, const Dtype* diff,
                                             const Dtype* similar, Dtype margin,
                                             bool legacy_version, Dtype* dist_sq,
                                             Dtype* pair_loss) {
  CUDA_KERNEL_LOOP(n, num) {
    const Dtype* pair_diff = diff + static_cast<size_t>(n) * channels;
    Dtype sum_sq = 0;
    for (int c = 0; c < channels; ++c) sum_sq += pair_diff[c] * pair_diff[c];
    dist_sq[n] = sum_sq;
    if (static_cast<int>(similar[n])) {
      pair_loss[n] = sum_sq;
    } else if (legacy_version) {
      // `a < 0 ? 0 : a` as std::max on the CPU, so a NaN distance stays NaN (fmax drops it).
      const Dtype excess = margin - sum_sq;
      pair_loss[n] = excess < Dtype(0) ? Dtype(0) : excess;
    } else {
      const Dtype gap = margin - sqrt(sum_sq);
      const Dtype shortfall = gap < Dtype(0) ? Dtype(0) : gap;
      pair_loss[n] = shortfall * shortfall;
    }
  }
}

// alpha = +-top_diff / N, the sign of the bottom being written.
template <typename Dtype>
__global__ void ContrastiveLossBackwardKernel(int count, int channels, const Dtype* diff,
                                              const Dtype* dist_sq, const Dtype* similar,
                                              Dtype margin, bool legacy_version, Dtype alpha,
                                              Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(j, count) {
    const int n = j / channels;
    if (static_cast<int>(similar[n])) {
      bottom_diff[j] = alpha * diff[j];
      continue;
    }
    Dtype shortfall, beta;
    if (legacy_version) {
      shortfall = margin - dist_sq[n];
      beta = -alpha;
    } else {
      const Dtype dist = sqrt(dist_sq[n]);
      shortfall = margin - dist;
      // BVLC's epsilon keeps coincident pairs finite; it is part of its gradient.
      beta = -alpha * shortfall / (dist + Dtype(1e-4));
    }
    bottom_diff[j] = shortfall > Dtype(0) ? beta * diff[j] : Dtype(0);
  }
}

}  // namespace

template <typename Dtype>
void ContrastiveLossLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int num = bottom[0]->shape(0);
  const int channels = bottom[0]->count(1);
  caffe_gpu_sub(bottom[0]->count(), bottom[0]->gpu_data(), bottom[1]->gpu_data(),
                diff_.mutable_gpu_data());
  const ContrastiveLossParameter& param = this->layer_param_.contrastive_loss_param();
  Dtype loss = 0;
  if (num > 0) {
    // dist_sq_'s diff is otherwise unused: it holds each pair's loss until it is summed.
    ContrastiveLossForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(num), CAFFE_CUDA_NUM_THREADS>>>(
        num, channels, diff_.gpu_data(), bottom[2]->gpu_data(), Dtype(param.margin()),
        param.legacy_version(), dist_sq_.mutable_gpu_data(), dist_sq_.mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
    // Every pair's loss is >= 0, so the sum of absolute values is the sum.
    caffe_gpu_asum(num, dist_sq_.gpu_diff(), &loss);
  }
  top[0]->mutable_cpu_data()[0] = loss / Dtype(num) / Dtype(2);
}

template <typename Dtype>
void ContrastiveLossLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top,
                                               const vector<bool>& propagate_down,
                                               const Blobs<Dtype>& bottom) {
  const ContrastiveLossParameter& param = this->layer_param_.contrastive_loss_param();
  const int num = bottom[0]->shape(0);
  const int channels = bottom[0]->count(1);
  const int count = bottom[0]->count();
  if (count == 0) return;
  for (int i = 0; i < 2; ++i) {
    if (!propagate_down[i]) continue;
    const Dtype sign = i == 0 ? 1 : -1;
    const Dtype alpha = sign * top[0]->cpu_diff()[0] / Dtype(num);
    ContrastiveLossBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
        count, channels, diff_.gpu_data(), dist_sq_.gpu_data(), bottom[2]->gpu_data(),
        Dtype(param.margin()), param.legacy_version(), alpha, bottom[i]->mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(ContrastiveLossLayer);

}  // namespace caffe
