// Legend as in deconvolution_layer.hpp. The bottom is the GEMM's output side of the shared
// convolution machinery and the top its image side, so forward is the convolution's input
// gradient (weights^T * bottom, then col2im) and backward runs the convolution's forward.
#include "caffe/layers/deconvolution_layer.hpp"

#include <vector>

namespace caffe {

template <typename Dtype>
void DeconvolutionLayer<Dtype>::compute_output_shape() {
  this->output_shape_.clear();
  for (int i = 0; i < this->num_spatial_axes_; ++i) {
    const int input = (*this->bottom_shape_)[this->channel_axis_ + 1 + i];
    const int extent = this->dilation_[i] * (this->kernel_shape_[i] - 1) + 1;
    const int output = this->stride_[i] * (input - 1) + extent - 2 * this->pad_[i];
    LAYER_CHECK_GT(output, 0) << "spatial axis " << i << " of bottom "
                              << ShapeString(*this->bottom_shape_) << " gives output size "
                              << output << " = stride " << this->stride_[i] << " * (" << input
                              << " - 1) + kernel extent " << extent << " - 2 * pad "
                              << this->pad_[i] << "; it must be >= 1";
    this->output_shape_.push_back(output);
  }
}

template <typename Dtype>
void DeconvolutionLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  this->bf16_gemm_ = this->forward_math() == BFLOAT16;
  const Dtype* weights = this->blobs_[0]->cpu_data();
  for (size_t i = 0; i < bottom.size(); ++i) {
    Dtype* top_data = top[i]->mutable_cpu_data();
    // col2im overwrites each image of the top, so no clearing is needed.
    this->BackwardGemm(bottom[i]->cpu_data(), nullptr, this->num_, weights, nullptr, top_data);
    if (this->bias_term_) {
      this->AddChannelBias(top_data, this->num_, this->num_output_, this->out_spatial_dim_,
                           this->blobs_[1]->cpu_data());
    }
  }
}

template <typename Dtype>
void DeconvolutionLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top,
                                             const vector<bool>& propagate_down,
                                             const Blobs<Dtype>& bottom) {
  this->bf16_gemm_ = this->backward_math() == BFLOAT16;
  const Dtype* weights = this->blobs_[0]->cpu_data();
  // Param diffs accumulate (the net clears them before each backward pass, as in BVLC).
  Dtype* weight_diff =
      this->param_propagate_down_[0] ? this->blobs_[0]->mutable_cpu_diff() : nullptr;
  for (size_t i = 0; i < top.size(); ++i) {
    const Dtype* top_diff = top[i]->cpu_diff();
    if (this->bias_term_ && this->param_propagate_down_[1]) {
      this->AccumulateChannelSums(top_diff, this->num_, this->num_output_, this->out_spatial_dim_,
                                  this->blobs_[1]->mutable_cpu_diff());
    }
    // The weight gradient pairs the bottom (the GEMM's output side) with the columns of the top
    // diff (its image side).
    if (weight_diff) {
      this->BackwardGemm(bottom[i]->cpu_data(), top_diff, this->num_, weights, weight_diff,
                         nullptr);
    }
    if (propagate_down[i]) {
      this->ImageToOutput(top_diff, this->num_, weights, nullptr, bottom[i]->mutable_cpu_diff());
    }
  }
}

INSTANTIATE_CLASS(DeconvolutionLayer);

// Its engines (layers/cudnn/, layers/dnnl/) are chosen by layer_engine.hpp.
REGISTER_LAYER_CLASS(Deconvolution);

}  // namespace caffe
