// Forward and backward passes of CuDNNConvolutionLayer: cuDNN calls on the default stream. With
// the in-place ReLU after it (ForwardFused, BackwardFused: see the header), the bias and the ReLU
// run in one kernel each way. Empty in builds without cuDNN.
#ifdef USE_CUDNN

#include "caffe/kernels/gpu_channel_sums.cuh"
#include "caffe/kernels/gpu_relu.cuh"
#include "caffe/layers/cudnn/cudnn_convolution_layer.hpp"

namespace caffe {

namespace {

// y = ReLU(y + bias[c]) in place over (outer, channels, inner).
template <typename Dtype>
__global__ void BiasReLUKernel(int count, int channels, int inner, const Dtype* bias,
                               Dtype negative_slope, Dtype* y) {
  CUDA_KERNEL_LOOP(i, count) { y[i] = ReLUOf(y[i] + bias[(i / inner) % channels], negative_slope); }
}

// ChannelSumsKernel's term: the ReLU's gradient dv, in place on the top's diff, and its sum per
// channel (the bias gradient).
template <typename Dtype>
struct ReLUGradientBiasTerm {
  Dtype negative_slope;
  const Dtype* y;
  Dtype* dy;
  __device__ void operator()(size_t j, int, double (&sums)[1]) const {
    const Dtype dv = dy[j] * ReLUGradientFactor(y[j], negative_slope);
    dy[j] = dv;
    sums[0] += dv;
  }
};

}  // namespace

template <typename Dtype>
void CuDNNConvolutionLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom,
                                               const Blobs<Dtype>& top) {
  if (!use_cudnn_) {
    ConvolutionLayer<Dtype>::Forward_gpu(bottom, top);
    return;
  }
  const Dtype* weights = this->blobs_[0]->gpu_data();
  for (size_t i = 0; i < bottom.size(); ++i) {
    Dtype* top_data = top[i]->mutable_gpu_data();
    convolution_.Forward(bottom[i]->gpu_data(), weights, top_data);
    if (this->bias_term_) {
      convolution_.AddBias(CuDNNConvolution::Side::kOutput, this->blobs_[1]->gpu_data(), top_data);
    }
  }
}

template <typename Dtype>
void CuDNNConvolutionLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top,
                                                const vector<bool>& propagate_down,
                                                const Blobs<Dtype>& bottom) {
  if (!use_cudnn_) {
    ConvolutionLayer<Dtype>::Backward_gpu(top, propagate_down, bottom);
    return;
  }
  // Param diffs accumulate over the bottoms (and across passes until the net clears them).
  Dtype* bias_diff = this->bias_term_ && this->param_propagate_down_[1]
                         ? this->blobs_[1]->mutable_gpu_diff()
                         : nullptr;
  if (bias_diff) {
    for (size_t i = 0; i < top.size(); ++i) {
      convolution_.AccumulateBiasDiff(CuDNNConvolution::Side::kOutput, top[i]->gpu_diff(),
                                      bias_diff);
    }
  }
  BackwardWeightsAndBottoms(top, propagate_down, bottom);
}

template <typename Dtype>
void CuDNNConvolutionLayer<Dtype>::BackwardWeightsAndBottoms(const Blobs<Dtype>& top,
                                                             const vector<bool>& propagate_down,
                                                             const Blobs<Dtype>& bottom) {
  const Dtype* weights = this->blobs_[0]->gpu_data();
  // Param diffs accumulate over the bottoms (and across passes until the net clears them).
  Dtype* weight_diff =
      this->param_propagate_down_[0] ? this->blobs_[0]->mutable_gpu_diff() : nullptr;
  for (size_t i = 0; i < top.size(); ++i) {
    const Dtype* top_diff = top[i]->gpu_diff();
    if (weight_diff) convolution_.BackwardFilter(bottom[i]->gpu_data(), top_diff, weight_diff);
    if (propagate_down[i]) {
      convolution_.BackwardData(weights, top_diff, bottom[i]->mutable_gpu_diff());
    }
  }
}

template <typename Dtype>
void CuDNNConvolutionLayer<Dtype>::ForwardFused_gpu(const Blobs<Dtype>& bottom,
                                                    const Blobs<Dtype>& top) {
  CHECK(relu_ != nullptr) << this->error_prefix() << "runs with no ReLU";
  Dtype* top_data = top[0]->mutable_gpu_data();
  const int count = top[0]->count();
  const Dtype slope = relu_->negative_slope();
  if (use_cudnn_) {
    convolution_.Forward(bottom[0]->gpu_data(), this->blobs_[0]->gpu_data(), top_data);
    if (count == 0) return;
    BiasReLUKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
        count, this->num_output_, this->out_spatial_dim_, this->blobs_[1]->gpu_data(), slope,
        top_data);
  } else {
    ConvolutionLayer<Dtype>::Forward_gpu(bottom, top);  // adds the bias itself
    if (count == 0) return;
    ReLUForwardKernel<Dtype>
        <<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(count, slope, top_data, top_data);
  }
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void CuDNNConvolutionLayer<Dtype>::BackwardFused_gpu(
    const Blobs<Dtype>& top, const vector<bool>& propagate_down, const Blobs<Dtype>& bottom,
    const vector<vector<bool>>& followers_propagate_down) {
  CHECK(relu_ != nullptr) << this->error_prefix() << "runs with no ReLU";
  if (!followers_propagate_down[0][0]) return;  // no gradient reaches this layer
  const int count = top[0]->count();
  const Dtype slope = relu_->negative_slope();
  if (count > 0 && FusedSumsBias()) {
    const ChannelSumsGrid grid(this->num_, this->num_output_, this->out_spatial_dim_);
    double* partials = partials_.mutable_gpu_data();
    ChannelSumsKernel<1><<<grid.blocks, grid.threads>>>(
        grid, ReLUGradientBiasTerm<Dtype>{slope, top[0]->gpu_data(), top[0]->mutable_gpu_diff()},
        partials);
    CUDA_POST_KERNEL_CHECK;
    // Accumulated, as a param diff is (shared params, iter_size).
    StoreChannelSumKernel<1><<<CAFFE_GET_BLOCKS(this->num_output_), CAFFE_CUDA_NUM_THREADS>>>(
        this->num_output_, grid.slices, partials, 0, 1.0, true,
        this->blobs_[1]->mutable_gpu_diff());
    CUDA_POST_KERNEL_CHECK;
  } else if (count > 0) {
    Dtype* top_diff = top[0]->mutable_gpu_diff();
    ReLUBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
        count, slope, top[0]->gpu_data(), top_diff, top_diff);
    CUDA_POST_KERNEL_CHECK;
  }
  if (use_cudnn_) {
    BackwardWeightsAndBottoms(top, propagate_down, bottom);
  } else {
    ConvolutionLayer<Dtype>::Backward_gpu(top, propagate_down, bottom);  // from dv, bias too
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(CuDNNConvolutionLayer);
INSTANTIATE_LAYER_GPU_FUSED_FUNCS(CuDNNConvolutionLayer);

}  // namespace caffe

#endif  // USE_CUDNN
