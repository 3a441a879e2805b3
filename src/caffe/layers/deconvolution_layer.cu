// Deconvolution on the GPU: the base class's im2col + cuBLAS helpers (base_conv_layer.cu) with
// the roles of Forward_cpu / Backward_cpu: forward is the convolution's input gradient (then the
// bias), backward runs the convolution's forward for the bottom diff.
#include <vector>

#include "caffe/layers/deconvolution_layer.hpp"

namespace caffe {

template <typename Dtype>
void DeconvolutionLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* weights = this->blobs_[0]->gpu_data();
  for (size_t i = 0; i < bottom.size(); ++i) {
    Dtype* top_data = top[i]->mutable_gpu_data();
    // col2im overwrites each image of the top, so no clearing is needed.
    this->BackwardGemmGpu(bottom[i]->gpu_data(), nullptr, this->num_, weights, nullptr, top_data);
    if (this->bias_term_) {
      this->AddChannelBiasGpu(top_data, this->num_, this->num_output_, this->out_spatial_dim_,
                              this->blobs_[1]->gpu_data());
    }
  }
}

template <typename Dtype>
void DeconvolutionLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top,
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
    // The weight gradient pairs the bottom (the GEMM's output side) with the columns of the top
    // diff (its image side).
    if (weight_diff) {
      this->BackwardGemmGpu(bottom[i]->gpu_data(), top_diff, this->num_, weights, weight_diff,
                            nullptr);
    }
    if (propagate_down[i]) {
      this->ImageToOutputGpu(top_diff, this->num_, weights, nullptr, bottom[i]->mutable_gpu_diff());
    }
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(DeconvolutionLayer);

}  // namespace caffe
