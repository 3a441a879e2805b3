// Forward and backward passes of CuDNNDeconvolutionLayer: cuDNN's convolution routines with the
// roles of x and y swapped (see the header). Empty in builds without cuDNN.
#ifdef USE_CUDNN

#include "caffe/layers/cudnn/cudnn_deconvolution_layer.hpp"

namespace caffe {

template <typename Dtype>
void CuDNNDeconvolutionLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom,
                                                 const Blobs<Dtype>& top) {
  if (!use_cudnn_) {
    DeconvolutionLayer<Dtype>::Forward_gpu(bottom, top);
    return;
  }
  const Dtype* weights = this->blobs_[0]->gpu_data();
  for (size_t i = 0; i < bottom.size(); ++i) {
    Dtype* top_data = top[i]->mutable_gpu_data();
    convolution_.BackwardData(weights, bottom[i]->gpu_data(), top_data);
    if (this->bias_term_) {
      convolution_.AddBias(CuDNNConvolution::Side::kImage, this->blobs_[1]->gpu_data(), top_data);
    }
  }
}

template <typename Dtype>
void CuDNNDeconvolutionLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top,
                                                  const vector<bool>& propagate_down,
                                                  const Blobs<Dtype>& bottom) {
  if (!use_cudnn_) {
    DeconvolutionLayer<Dtype>::Backward_gpu(top, propagate_down, bottom);
    return;
  }
  const Dtype* weights = this->blobs_[0]->gpu_data();
  // Param diffs accumulate over the bottoms (and across passes until the net clears them).
  Dtype* weight_diff =
      this->param_propagate_down_[0] ? this->blobs_[0]->mutable_gpu_diff() : nullptr;
  Dtype* bias_diff = this->bias_term_ && this->param_propagate_down_[1]
                         ? this->blobs_[1]->mutable_gpu_diff()
                         : nullptr;
  for (size_t i = 0; i < top.size(); ++i) {
    const Dtype* top_diff = top[i]->gpu_diff();
    if (bias_diff) {
      convolution_.AccumulateBiasDiff(CuDNNConvolution::Side::kImage, top_diff, bias_diff);
    }
    if (weight_diff) convolution_.BackwardFilter(top_diff, bottom[i]->gpu_data(), weight_diff);
    if (propagate_down[i]) {
      convolution_.Forward(top_diff, weights, bottom[i]->mutable_gpu_diff());
    }
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(CuDNNDeconvolutionLayer);

}  // namespace caffe

#endif  // USE_CUDNN
