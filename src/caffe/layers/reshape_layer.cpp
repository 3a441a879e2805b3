#include "caffe/layers/reshape_layer.hpp"

namespace caffe {

template <typename Dtype>
void ReshapeLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const BlobShape& shape = this->layer_param_.reshape_param().shape();
  copy_axes_.clear();
  inferred_axis_ = -1;
  constant_count_ = 1;
  for (int i = 0; i < shape.dim_size(); ++i) {
    const int64_t dim = shape.dim(i);
    if (dim == 0) {
      copy_axes_.push_back(i);
    } else if (dim == -1) {
      LAYER_CHECK_EQ(inferred_axis_, -1)
          << "reshape_param.shape has -1 at positions " << inferred_axis_ << " and " << i
          << "; at most one dim may be inferred";
      inferred_axis_ = i;
    } else {
      LAYER_CHECK_GT(dim, 0) << "reshape_param.shape dim " << i << " is " << dim
                             << "; dims must be positive, 0 (copy) or -1 (infer)";
      constant_count_ *= static_cast<int>(dim);
    }
  }
}

template <typename Dtype>
void ReshapeLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const ReshapeParameter& param = this->layer_param_.reshape_param();
  const int bottom_axes = bottom[0]->num_axes();
  // A negative axis counts from the end, where -1 is the position after the last axis.
  const int start_axis = param.axis() >= 0 ? param.axis() : bottom_axes + param.axis() + 1;
  LAYER_CHECK(start_axis >= 0 && start_axis <= bottom_axes)
      << "reshape_param.axis " << param.axis() << " is out of range for bottom[0] "
      << bottom[0]->shape_string() << " with " << bottom_axes << " axes";
  LAYER_CHECK_GE(param.num_axes(), -1)
      << "reshape_param.num_axes must be >= 0, or -1 for all remaining axes";
  const int end_axis = param.num_axes() == -1 ? bottom_axes : start_axis + param.num_axes();
  LAYER_CHECK_LE(end_axis, bottom_axes)
      << "reshape_param axis " << param.axis() << " + num_axes " << param.num_axes()
      << " goes past the " << bottom_axes << " axes of bottom[0] " << bottom[0]->shape_string();
  const BlobShape& new_dims = param.shape();
  const vector<int>& bottom_shape = bottom[0]->shape();
  vector<int> top_shape(bottom_shape.begin(), bottom_shape.begin() + start_axis);
  for (int i = 0; i < new_dims.dim_size(); ++i)
    top_shape.push_back(static_cast<int>(new_dims.dim(i)));
  top_shape.insert(top_shape.end(), bottom_shape.begin() + end_axis, bottom_shape.end());
  for (int copy_axis : copy_axes_) {
    LAYER_CHECK_GT(bottom_axes, start_axis + copy_axis)
        << "reshape_param.shape dim " << copy_axis << " is 0 (copy), but bottom[0] "
        << bottom[0]->shape_string() << " has no axis " << start_axis + copy_axis << " to copy";
    top_shape[start_axis + copy_axis] = bottom_shape[start_axis + copy_axis];
  }
  if (inferred_axis_ >= 0) {
    int64_t explicit_count = constant_count_;
    explicit_count *= bottom[0]->count(0, start_axis);
    explicit_count *= bottom[0]->count(end_axis);
    for (int copy_axis : copy_axes_) explicit_count *= top_shape[start_axis + copy_axis];
    LAYER_CHECK(explicit_count != 0 && bottom[0]->count() % explicit_count == 0)
        << "cannot infer the -1 dim of reshape_param.shape: bottom[0] " << bottom[0]->shape_string()
        << " has " << bottom[0]->count() << " values, not a multiple of the " << explicit_count
        << " given by the other dims";
    top_shape[start_axis + inferred_axis_] = static_cast<int>(bottom[0]->count() / explicit_count);
  }
  int64_t top_count = 1;
  for (int dim : top_shape) top_count *= dim;
  LAYER_CHECK_EQ(top_count, static_cast<int64_t>(bottom[0]->count()))
      << "cannot reshape bottom[0] " << bottom[0]->shape_string() << " to "
      << ShapeString(top_shape) << ": the counts differ";
  top[0]->Reshape(top_shape);
  top[0]->ShareData(*bottom[0]);
  top[0]->ShareDiff(*bottom[0]);
}

INSTANTIATE_CLASS(ReshapeLayer);
REGISTER_LAYER_CLASS(Reshape);

}  // namespace caffe
