// Convolution on the GPU: the base class's im2col + cuBLAS helpers (base_conv_layer.cu), called
// as Forward_cpu / Backward_cpu call their CPU counterparts; 2-D depthwise convolutions take
// their own kernels (kernels/depthwise_convolution.cu), as on the CPU.
#include <vector>

#include "caffe/kernels/depthwise_convolution.hpp"
#include "caffe/layers/convolution_layer.hpp"

namespace caffe {

template <typename Dtype>
void ConvolutionLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* weights = this->blobs_[0]->gpu_data();
  const Dtype* bias = this->bias_term_ ? this->blobs_[1]->gpu_data() : nullptr;
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (RunsDepthwise()) {
      DepthwiseForwardGpu(DepthwiseShape(), bottom[i]->gpu_data(), weights, bias,
                          top[i]->mutable_gpu_data());
    } else {
      this->ImageToOutputGpu(bottom[i]->gpu_data(), this->num_, weights, bias,
                             top[i]->mutable_gpu_data());
    }
  }
}

template <typename Dtype>
void ConvolutionLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top,
                                           const vector<bool>& propagate_down,
                                           const Blobs<Dtype>& bottom) {
  const Dtype* weights = this->blobs_[0]->gpu_data();
  // Param diffs accumulate, as on the CPU.
  Dtype* weight_diff =
      this->param_propagate_down_[0] ? this->blobs_[0]->mutable_gpu_diff() : nullptr;
  for (size_t i = 0; i < top.size(); ++i) {
    const Dtype* top_diff = top[i]->gpu_diff();
    if (this->bias_term_ && this->param_propagate_down_[1]) {
      this->AccumulateChannelSumsGpu(top_diff, this->num_, this->num_output_,
                                     this->out_spatial_dim_, this->blobs_[1]->mutable_gpu_diff());
    }
    Dtype* bottom_diff = propagate_down[i] ? bottom[i]->mutable_gpu_diff() : nullptr;
    if (RunsDepthwise()) {
      const DepthwiseGeometry shape = DepthwiseShape();
      if (weight_diff) {
        DepthwiseBackwardWeightsGpu(shape, top_diff, bottom[i]->gpu_data(), weight_diff);
      }
      if (bottom_diff) DepthwiseBackwardDataGpu(shape, top_diff, weights, bottom_diff);
    } else if (weight_diff || bottom_diff) {
      this->BackwardGemmGpu(top_diff, weight_diff ? bottom[i]->gpu_data() : nullptr, this->num_,
                            weights, weight_diff, bottom_diff);
    }
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(ConvolutionLayer);

}  // namespace caffe
