#include "caffe/layers/convolution_layer.hpp"

#include <string>
#include <type_traits>
#include <vector>

#include "caffe/kernels/depthwise_convolution.hpp"
#include "caffe/kernels/im2col.hpp"
#include "caffe/layer_factory.hpp"

namespace caffe {

template <typename Dtype>
void ConvolutionLayer<Dtype>::compute_output_shape() {
  this->output_shape_.clear();
  for (int i = 0; i < this->num_spatial_axes_; ++i) {
    const int input = (*this->bottom_shape_)[this->channel_axis_ + 1 + i];
    const int output = ConvOutputSize(input, this->kernel_shape_[i], this->pad_[i],
                                      this->stride_[i], this->dilation_[i]);
    LAYER_CHECK_GT(output, 0) << "the kernel (extent "
                              << this->dilation_[i] * (this->kernel_shape_[i] - 1) + 1
                              << " with dilation) does not fit spatial axis " << i << " of bottom "
                              << ShapeString(*this->bottom_shape_) << " padded by " << this->pad_[i]
                              << " on each side";
    this->output_shape_.push_back(output);
  }
}

template <typename Dtype>
bool ConvolutionLayer<Dtype>::RunsDepthwise() const {
  return this->num_spatial_axes_ == 2 && this->group_ > 1 && this->group_ == this->channels_ &&
         this->num_output_ % this->channels_ == 0;
}

template <typename Dtype>
DepthwiseGeometry ConvolutionLayer<Dtype>::DepthwiseShape() const {
  DepthwiseGeometry g;
  g.num = this->num_;
  g.channels = this->channels_;
  g.multiplier = this->num_output_ / this->channels_;
  g.height = (*this->bottom_shape_)[this->channel_axis_ + 1];
  g.width = (*this->bottom_shape_)[this->channel_axis_ + 2];
  g.out_height = this->output_shape_[0];
  g.out_width = this->output_shape_[1];
  g.kernel_h = this->kernel_shape_[0];
  g.kernel_w = this->kernel_shape_[1];
  g.stride_h = this->stride_[0];
  g.stride_w = this->stride_[1];
  g.pad_h = this->pad_[0];
  g.pad_w = this->pad_[1];
  g.dilation_h = this->dilation_[0];
  g.dilation_w = this->dilation_[1];
  return g;
}

template <typename Dtype>
bool ConvolutionLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                               const Blobs<Dtype>& top,
                                               const vector<bool>& propagate_down,
                                               MemoryUses* uses) const {
  if (RunsDepthwise()) {
    return Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  }
  return BaseConvolutionLayer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
}

template <typename Dtype>
void ConvolutionLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  this->bf16_gemm_ = this->forward_math() == BFLOAT16;
  const Dtype* weights = this->blobs_[0]->cpu_data();
  const Dtype* bias = this->bias_term_ ? this->blobs_[1]->cpu_data() : nullptr;
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (RunsDepthwise()) {
      DepthwiseForward(DepthwiseShape(), bottom[i]->cpu_data(), weights, bias,
                       top[i]->mutable_cpu_data());
    } else {
      this->ImageToOutput(bottom[i]->cpu_data(), this->num_, weights, bias,
                          top[i]->mutable_cpu_data());
    }
  }
}

template <typename Dtype>
void ConvolutionLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top,
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
    Dtype* bottom_diff = propagate_down[i] ? bottom[i]->mutable_cpu_diff() : nullptr;
    if (RunsDepthwise()) {
      const DepthwiseGeometry shape = DepthwiseShape();
      if (weight_diff) {
        DepthwiseBackwardWeights(shape, top_diff, bottom[i]->cpu_data(), weight_diff);
      }
      if (bottom_diff) DepthwiseBackwardData(shape, top_diff, weights, bottom_diff);
    } else if (weight_diff || bottom_diff) {
      this->BackwardGemm(top_diff, bottom[i]->cpu_data(), this->num_, weights, weight_diff,
                         bottom_diff);
    }
  }
}

INSTANTIATE_CLASS(ConvolutionLayer);

// Its engines (layers/cudnn/, layers/dnnl/) are chosen by layer_engine.hpp.
REGISTER_LAYER_CLASS(Convolution);

}  // namespace caffe
