#include "caffe/layers/flatten_layer.hpp"

namespace caffe {

template <typename Dtype>
void FlattenLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const FlattenParameter& param = this->layer_param_.flatten_param();
  const int num_axes = bottom[0]->num_axes();
  for (int axis : {param.axis(), param.end_axis()}) {
    LAYER_CHECK(axis >= -num_axes && axis < num_axes)
        << "flatten_param axis " << param.axis() << " / end_axis " << param.end_axis()
        << " out of range for bottom[0] " << bottom[0]->shape_string() << " with " << num_axes
        << " axes; each must be in [" << -num_axes << ", " << num_axes << ")";
  }
  const int start_axis = bottom[0]->CanonicalAxisIndex(param.axis());
  const int end_axis = bottom[0]->CanonicalAxisIndex(param.end_axis());
  LAYER_CHECK_LE(start_axis, end_axis)
      << "flatten_param.axis (" << param.axis() << ") comes after end_axis (" << param.end_axis()
      << ") for bottom[0] " << bottom[0]->shape_string();
  vector<int> top_shape(bottom[0]->shape().begin(), bottom[0]->shape().begin() + start_axis);
  top_shape.push_back(bottom[0]->count(start_axis, end_axis + 1));
  top_shape.insert(top_shape.end(), bottom[0]->shape().begin() + end_axis + 1,
                   bottom[0]->shape().end());
  top[0]->Reshape(top_shape);
  // The blobs share their memory from here on, not from Forward and Backward on: the memory a
  // blob gave up would otherwise be freed inside those passes, under anything that holds it for
  // that step (LMS's plan names it and pins it, a HostView maps it).
  top[0]->ShareData(*bottom[0]);
  // The top's diff follows the bottom's, as its data does (and every other view layer's): a
  // bottom that is itself a view (a Reshape's top) keeps the memory it shares, so the gradient
  // reaches the blob under it.
  top[0]->ShareDiff(*bottom[0]);
}

template <typename Dtype>
void FlattenLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  // Nothing to do: Reshape, which Forward runs first, made the top share the bottom's data.
}

template <typename Dtype>
void FlattenLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                       const Blobs<Dtype>& bottom) {
  // Nothing to do: Reshape made the bottom share the top's diff.
}

INSTANTIATE_CLASS(FlattenLayer);
REGISTER_LAYER_CLASS(Flatten);

}  // namespace caffe
