// Legend as in im2col_layer.hpp: N images, C channels, K kernel positions, o_i output dims.
#include "caffe/layers/im2col_layer.hpp"

#include <vector>

#include "caffe/kernels/im2col.hpp"

namespace caffe {

template <typename Dtype>
void Im2colLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const ConvolutionParameter& param = this->layer_param_.convolution_param();
  force_nd_im2col_ = param.force_nd_im2col();
  const int num_axes = bottom[0]->num_axes();
  LAYER_CHECK(param.axis() >= -num_axes && param.axis() < num_axes)
      << "convolution_param.axis is " << param.axis() << ", but bottom[0] "
      << bottom[0]->shape_string() << " has " << num_axes << " axes; must be in [" << -num_axes
      << ", " << num_axes << ")";
  channel_axis_ = bottom[0]->CanonicalAxisIndex(param.axis());
  num_spatial_axes_ = num_axes - channel_axis_ - 1;
  LAYER_CHECK_GE(num_spatial_axes_, 1)
      << "bottom[0] " << bottom[0]->shape_string() << " has no spatial axis after the channel "
      << "axis " << channel_axis_;

  // kernel_size, stride, pad, dilation: once for every axis, once per axis, or (except the
  // kernel) not at all; kernel/stride/pad also have 2-D *_h/*_w forms.
  auto per_axis = [&](const google::protobuf::RepeatedField<uint32_t>& values, bool has_h,
                      bool has_w, uint32_t h, uint32_t w, const char* field, const char* name,
                      int default_value, bool required) {
    std::vector<int> result(num_spatial_axes_, default_value);
    if (has_h || has_w) {
      LAYER_CHECK_EQ(num_spatial_axes_, 2)
          << name << "_h and " << name << "_w can only be used with 2 spatial axes; bottom[0] "
          << bottom[0]->shape_string() << " has " << num_spatial_axes_ << " after axis "
          << channel_axis_;
      LAYER_CHECK_EQ(values.size(), 0)
          << "give either " << field << " or " << name << "_h and " << name << "_w, not both";
      LAYER_CHECK(has_h && has_w) << name << "_h and " << name << "_w must be given together";
      result[0] = static_cast<int>(h);
      result[1] = static_cast<int>(w);
      return result;
    }
    const int given = values.size();
    if (given == 0 && !required) return result;
    LAYER_CHECK(given == 1 || given == num_spatial_axes_)
        << field << " must be given once, or once per spatial axis; it is given " << given
        << " times for " << num_spatial_axes_ << " spatial axes (bottom[0] "
        << bottom[0]->shape_string() << ", axis " << channel_axis_ << ")";
    for (int i = 0; i < num_spatial_axes_; ++i) {
      result[i] = static_cast<int>(values.Get(given == 1 ? 0 : i));
    }
    return result;
  };
  kernel_shape_ = per_axis(param.kernel_size(), param.has_kernel_h(), param.has_kernel_w(),
                           param.kernel_h(), param.kernel_w(), "kernel_size", "kernel", 1, true);
  stride_ = per_axis(param.stride(), param.has_stride_h(), param.has_stride_w(), param.stride_h(),
                     param.stride_w(), "stride", "stride", 1, false);
  pad_ = per_axis(param.pad(), param.has_pad_h(), param.has_pad_w(), param.pad_h(), param.pad_w(),
                  "pad", "pad", 0, false);
  dilation_ = per_axis(param.dilation(), false, false, 0, 0, "dilation", "dilation", 1, false);
  for (int i = 0; i < num_spatial_axes_; ++i) {
    LAYER_CHECK_GT(kernel_shape_[i], 0)
        << "kernel size along spatial axis " << i << " is 0; must be >= 1";
    LAYER_CHECK_GE(stride_[i], 1) << "stride along spatial axis " << i << " is 0; must be >= 1";
    LAYER_CHECK_GE(dilation_[i], 1) << "dilation along spatial axis " << i << " is 0; must be >= 1";
  }
}

template <typename Dtype>
void Im2colLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LAYER_CHECK_EQ(bottom[0]->num_axes(), channel_axis_ + 1 + num_spatial_axes_)
      << "bottom[0] " << bottom[0]->shape_string()
      << " changed its number of axes since setup; it may not";
  std::vector<int> top_shape = bottom[0]->shape();
  for (int i = 0; i < num_spatial_axes_; ++i) {
    const int axis = channel_axis_ + 1 + i;
    top_shape[channel_axis_] *= kernel_shape_[i];
    const int input = bottom[0]->shape(axis);
    const int kernel_extent = dilation_[i] * (kernel_shape_[i] - 1) + 1;
    LAYER_CHECK_LE(kernel_extent, input + 2 * pad_[i])
        << "the kernel (extent " << kernel_extent << " with dilation) does not fit in spatial "
        << "axis " << axis << " of bottom[0] " << bottom[0]->shape_string() << " padded by "
        << pad_[i] << " on each side";
    top_shape[axis] = ConvOutputSize(input, kernel_shape_[i], pad_[i], stride_[i], dilation_[i]);
  }
  top[0]->Reshape(top_shape);
  num_ = bottom[0]->count(0, channel_axis_);
  bottom_dim_ = bottom[0]->count(channel_axis_);
  top_dim_ = top[0]->count(channel_axis_);
}

template <typename Dtype>
void Im2colLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  const int* im_shape = bottom[0]->shape().data() + channel_axis_;
  const int* col_shape = top[0]->shape().data() + channel_axis_;
  for (int n = 0; n < num_; ++n) {
    if (use_2d()) {
      im2col_cpu(bottom_data + n * bottom_dim_, im_shape[0], im_shape[1], im_shape[2],
                 kernel_shape_[0], kernel_shape_[1], pad_[0], pad_[1], stride_[0], stride_[1],
                 dilation_[0], dilation_[1], top_data + n * top_dim_);
    } else {
      im2col_nd_cpu(bottom_data + n * bottom_dim_, num_spatial_axes_, im_shape, col_shape,
                    kernel_shape_.data(), pad_.data(), stride_.data(), dilation_.data(),
                    top_data + n * top_dim_);
    }
  }
}

template <typename Dtype>
void Im2colLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                      const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const int* im_shape = bottom[0]->shape().data() + channel_axis_;
  const int* col_shape = top[0]->shape().data() + channel_axis_;
  for (int n = 0; n < num_; ++n) {
    if (use_2d()) {
      col2im_cpu(top_diff + n * top_dim_, im_shape[0], im_shape[1], im_shape[2], kernel_shape_[0],
                 kernel_shape_[1], pad_[0], pad_[1], stride_[0], stride_[1], dilation_[0],
                 dilation_[1], bottom_diff + n * bottom_dim_);
    } else {
      col2im_nd_cpu(top_diff + n * top_dim_, num_spatial_axes_, im_shape, col_shape,
                    kernel_shape_.data(), pad_.data(), stride_.data(), dilation_.data(),
                    bottom_diff + n * bottom_dim_);
    }
  }
}

INSTANTIATE_CLASS(Im2colLayer);
REGISTER_LAYER_CLASS(Im2col);

}  // namespace caffe
