// Setup of CuDNNConvolutionLayer (include/caffe/layers/cudnn/cudnn_convolution_layer.hpp); its
// passes are in cudnn_convolution_layer.cu. Empty in builds without cuDNN.
#ifdef USE_CUDNN

#include "caffe/layers/cudnn/cudnn_convolution_layer.hpp"

#include <vector>

#include "caffe/kernels/gpu_channel_sums.hpp"

namespace caffe {

template <typename Dtype>
void CuDNNConvolutionLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  ConvolutionLayer<Dtype>::Reshape(bottom, top);
  if (relu_ != nullptr) ReshapePartials();
  // cuDNN's plan needs the GPU; a pass in CPU mode runs the inherited CPU code anyway.
  use_cudnn_ = false;
  if (Caffe::mode() != Caffe::GPU) return;
  CuDNNConvolution::Geometry geometry;
  geometry.type = CuDNNDataType<Dtype>();
  geometry.num = this->num_;
  geometry.image_channels = this->channels_;
  geometry.output_channels = this->num_output_;
  geometry.group = this->group_;
  const std::vector<int>& bottom_shape = bottom[0]->shape();
  geometry.image_spatial.assign(bottom_shape.begin() + this->channel_axis_ + 1, bottom_shape.end());
  geometry.output_spatial = this->output_shape_;
  geometry.kernel = this->kernel_shape_;
  geometry.pad = this->pad_;
  geometry.stride = this->stride_;
  geometry.dilation = this->dilation_;
  use_cudnn_ = convolution_.Configure(geometry);
}

template <typename Dtype>
bool CuDNNConvolutionLayer<Dtype>::DeclareMemoryUse(Pass pass, const Blobs<Dtype>& bottom,
                                                    const Blobs<Dtype>& top,
                                                    const vector<bool>& propagate_down,
                                                    MemoryUses* uses) const {
  if (!use_cudnn_) {
    return ConvolutionLayer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  }
  return Layer<Dtype>::DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
}

template <typename Dtype>
bool CuDNNConvolutionLayer<Dtype>::FuseWithNext(Layer<Dtype>* next, const Blobs<Dtype>& bottom,
                                                const Blobs<Dtype>& top,
                                                const Blobs<Dtype>& next_bottom,
                                                const Blobs<Dtype>& next_top) {
  // Without a bias there is no pass to save; several tops would each need their ReLU. The group
  // runs on the GPU only.
  if (relu_ != nullptr || !this->bias_term_ || top.size() != 1 || Caffe::mode() != Caffe::GPU) {
    return false;
  }
  relu_ = ReLULayer<Dtype>::FusableInPlaceOn(top[0], next, next_bottom, next_top);
  if (relu_ == nullptr) return false;
  ReshapePartials();
  return true;
}

template <typename Dtype>
void CuDNNConvolutionLayer<Dtype>::ReshapePartials() {
  partials_.Reshape(
      vector<int>{ChannelSumPartials(this->num_, this->num_output_, this->out_spatial_dim_, 1)});
}

template <typename Dtype>
bool CuDNNConvolutionLayer<Dtype>::DeclareMemoryUseFused(
    Pass pass, const Blobs<Dtype>& bottom, const Blobs<Dtype>& top,
    const vector<bool>& propagate_down, const vector<vector<bool>>& followers_propagate_down,
    MemoryUses* uses) const {
  // Forward: the ReLU works in place on the top this layer writes.
  if (pass == Pass::kForward) return DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  if (!followers_propagate_down[0][0]) return true;  // no gradient reaches this layer
  DeclareMemoryUse(pass, bottom, top, propagate_down, uses);
  uses->AddData(*top[0], kRead);  // the ReLU's output: where its gradient passes
  uses->AddDiff(*top[0], kReadWrite);
  if (FusedSumsBias()) uses->AddData(partials_, kScratch);
  return true;
}

INSTANTIATE_CLASS(CuDNNConvolutionLayer);

// The cuDNN engine of Convolution layers (layer_engine.hpp chooses).
REGISTER_LAYER_ENGINE(Convolution, kCuDNN, CuDNNConvolutionLayer,
                      [](const ::caffe::LayerParameter&) { return true; });

}  // namespace caffe

#endif  // USE_CUDNN
