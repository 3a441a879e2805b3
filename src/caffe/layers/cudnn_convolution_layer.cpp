// Setup of CuDNNConvolutionLayer (include/caffe/layers/cudnn_convolution_layer.hpp); its passes
// are in cudnn_convolution_layer.cu. Empty in builds without cuDNN.
#ifdef USE_CUDNN

#include "caffe/layers/cudnn_convolution_layer.hpp"

#include <vector>

namespace caffe {

template <typename Dtype>
void CuDNNConvolutionLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  ConvolutionLayer<Dtype>::Reshape(bottom, top);
  // cuDNN's plan needs the GPU; a pass in CPU mode runs the inherited CPU code anyway.
  use_cudnn_ = false;
  if (Caffe::mode() != Caffe::GPU) return;
  CudnnConvolution::Geometry geometry;
  geometry.type = CudnnDataType<Dtype>();
  geometry.num = this->num_;
  geometry.image_channels = this->channels_;
  geometry.output_channels = this->num_output_;
  geometry.group = this->group_;
  const std::vector<int>& bottom_shape = bottom[0]->shape();
  geometry.image_spatial.assign(bottom_shape.begin() + this->channel_axis_ + 1,
                                bottom_shape.end());
  geometry.output_spatial = this->output_shape_;
  geometry.kernel = this->kernel_shape_;
  geometry.pad = this->pad_;
  geometry.stride = this->stride_;
  geometry.dilation = this->dilation_;
  use_cudnn_ = convolution_.Configure(geometry);
}

template <typename Dtype>
bool CuDNNConvolutionLayer<Dtype>::DeclareMemoryUse(lms::Pass pass, const Blobs<Dtype>& bottom,
    const Blobs<Dtype>& top, const vector<bool>& propagate_down, lms::MemoryUses* uses) const {
  if (!use_cudnn_) {
    return ConvolutionLayer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  }
  return Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
}

INSTANTIATE_CLASS(CuDNNConvolutionLayer);

}  // namespace caffe

#endif  // USE_CUDNN
