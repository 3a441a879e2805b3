// Im2col on the GPU: im2col_gpu / col2im_gpu (or their N-D forms) per image, as the CPU path.
#include <vector>

#include "caffe/kernels/im2col.hpp"
#include "caffe/layers/im2col_layer.hpp"

namespace caffe {

template <typename Dtype>
void Im2colLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* bottom_data = bottom[0]->gpu_data();
  Dtype* top_data = top[0]->mutable_gpu_data();
  // Host shape arrays: the _gpu routines take them as the _cpu ones do.
  const int* im_shape = bottom[0]->shape().data() + channel_axis_;
  const int* col_shape = top[0]->shape().data() + channel_axis_;
  for (int n = 0; n < num_; ++n) {
    const Dtype* im = bottom_data + static_cast<long>(n) * bottom_dim_;
    Dtype* col = top_data + static_cast<long>(n) * top_dim_;
    if (use_2d()) {
      im2col_gpu(im, im_shape[0], im_shape[1], im_shape[2], kernel_shape_[0], kernel_shape_[1],
                 pad_[0], pad_[1], stride_[0], stride_[1], dilation_[0], dilation_[1], col);
    } else {
      im2col_nd_gpu(im, num_spatial_axes_, im_shape, col_shape, kernel_shape_.data(), pad_.data(),
                    stride_.data(), dilation_.data(), col);
    }
  }
}

template <typename Dtype>
void Im2colLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                      const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_diff = top[0]->gpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  const int* im_shape = bottom[0]->shape().data() + channel_axis_;
  const int* col_shape = top[0]->shape().data() + channel_axis_;
  for (int n = 0; n < num_; ++n) {
    const Dtype* col = top_diff + static_cast<long>(n) * top_dim_;
    Dtype* im = bottom_diff + static_cast<long>(n) * bottom_dim_;
    if (use_2d()) {
      col2im_gpu(col, im_shape[0], im_shape[1], im_shape[2], kernel_shape_[0], kernel_shape_[1],
                 pad_[0], pad_[1], stride_[0], stride_[1], dilation_[0], dilation_[1], im);
    } else {
      col2im_nd_gpu(col, num_spatial_axes_, im_shape, col_shape, kernel_shape_.data(), pad_.data(),
                    stride_.data(), dilation_.data(), im);
    }
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(Im2colLayer);

}  // namespace caffe
