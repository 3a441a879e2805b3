// Setup of CuDNNDeconvolutionLayer (include/caffe/layers/cudnn/cudnn_deconvolution_layer.hpp); its
// passes are in cudnn_deconvolution_layer.cu. Empty in builds without cuDNN.
#ifdef USE_CUDNN

#include "caffe/layers/cudnn/cudnn_deconvolution_layer.hpp"

#include <vector>

namespace caffe {

template <typename Dtype>
void CuDNNDeconvolutionLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  DeconvolutionLayer<Dtype>::Reshape(bottom, top);
  use_cudnn_ = false;
  if (Caffe::mode() != Caffe::GPU) return;
  // The convolution runs from the top (num_output channels) to the bottom (channels).
  CuDNNConvolution::Geometry geometry;
  geometry.type = CuDNNDataType<Dtype>();
  geometry.num = this->num_;
  geometry.image_channels = this->num_output_;
  geometry.output_channels = this->channels_;
  geometry.group = this->group_;
  geometry.image_spatial = this->output_shape_;
  const std::vector<int>& bottom_shape = bottom[0]->shape();
  geometry.output_spatial.assign(bottom_shape.begin() + this->channel_axis_ + 1,
                                 bottom_shape.end());
  geometry.kernel = this->kernel_shape_;
  geometry.pad = this->pad_;
  geometry.stride = this->stride_;
  geometry.dilation = this->dilation_;
  use_cudnn_ = convolution_.Configure(geometry);
}

template <typename Dtype>
bool CuDNNDeconvolutionLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                                      const Blobs<Dtype>& top,
                                                      const vector<bool>& propagate_down,
                                                      MemoryUses* uses) const {
  if (!use_cudnn_) {
    return DeconvolutionLayer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  }
  return Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
}

INSTANTIATE_CLASS(CuDNNDeconvolutionLayer);

// The cuDNN engine of Deconvolution layers (layer_engine.hpp chooses).
REGISTER_LAYER_ENGINE(Deconvolution, kCuDNN, CuDNNDeconvolutionLayer,
                      [](const ::caffe::LayerParameter&) { return true; });

}  // namespace caffe

#endif  // USE_CUDNN
