// Im2col: the column matrix a convolution would multiply, as a blob (BVLC's Im2colLayer).
// Legend: N = product of the axes before `axis`; C channels (on `axis`); d_1..d_k the spatial
// dims after it; K = product of the kernel dims; o_1..o_k the output dims of the convolution.
#ifndef CAFFE_LAYERS_IM2COL_LAYER_HPP_
#define CAFFE_LAYERS_IM2COL_LAYER_HPP_

#include <vector>

#include "caffe/blob.hpp"
#include "caffe/layer.hpp"

namespace caffe {

/// top[n, (c * K + kernel offset), o...] = bottom[n, c, o * stride - pad + kernel offset *
/// dilation] (0 in the padding), i.e. im2col of each image. bottom[0]: (N..., C, d_1..d_k),
/// k >= 1; top[0]: (N..., C * K, o_1..o_k), o_i = (d_i + 2 pad_i - (dilation_i (kernel_i - 1) +
/// 1)) / stride_i + 1. Reads convolution_param: kernel_size (required; once, per axis, or
/// kernel_h/kernel_w), stride (1), pad (0), dilation (1), axis (1), force_nd_im2col (false).
/// Backward: col2im (the sum of every column entry back into the position it came from).
template <typename Dtype>
class Im2colLayer : public Layer<Dtype> {
 public:
  using Layer<Dtype>::Layer;
  const char* type() const override { return "Im2col"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  void LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;

 protected:
  void Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) override;
  void Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                    const Blobs<Dtype>& bottom) override;
#endif

 private:
  /// The 2-D routines serve 2 spatial axes unless force_nd_im2col is set.
  bool use_2d() const { return !force_nd_im2col_ && num_spatial_axes_ == 2; }

  bool force_nd_im2col_ = false;
  int channel_axis_ = 1;
  int num_spatial_axes_ = 0;
  std::vector<int> kernel_shape_, stride_, pad_, dilation_;  // one per spatial axis
  int num_ = 0;                                              // N
  int bottom_dim_ = 0;                                       // C * d_1 * ... * d_k
  int top_dim_ = 0;                                          // C * K * o_1 * ... * o_k
};

}  // namespace caffe

#endif  // CAFFE_LAYERS_IM2COL_LAYER_HPP_
