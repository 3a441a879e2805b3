#include "caffe/layers/slice_layer.hpp"

namespace caffe {

template <typename Dtype>
void SliceLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const SliceParameter& param = this->layer_param_.slice_param();
  LAYER_CHECK(!(param.has_axis() && param.has_slice_dim()))
      << "slice_param sets both axis (" << param.axis() << ") and the deprecated slice_dim ("
      << param.slice_dim() << "); set only one";
  slice_points_.assign(param.slice_point().begin(), param.slice_point().end());
}

template <typename Dtype>
void SliceLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const SliceParameter& param = this->layer_param_.slice_param();
  const int num_axes = bottom[0]->num_axes();
  if (param.has_slice_dim()) {
    slice_axis_ = static_cast<int>(param.slice_dim());
    LAYER_CHECK_LT(slice_axis_, num_axes)
        << "slice_dim is " << param.slice_dim() << ", but bottom[0] " << bottom[0]->shape_string()
        << " has only " << num_axes << " axes";
  } else {
    LAYER_CHECK(param.axis() >= -num_axes && param.axis() < num_axes)
        << "slice_param.axis is " << param.axis() << ", but bottom[0] " << bottom[0]->shape_string()
        << " has " << num_axes << " axes; must be in [" << -num_axes << ", " << num_axes << ")";
    slice_axis_ = bottom[0]->CanonicalAxisIndex(param.axis());
  }
  const int num_tops = static_cast<int>(top.size());
  const int bottom_slice_dim = bottom[0]->shape(slice_axis_);
  outer_ = bottom[0]->count(0, slice_axis_);
  inner_ = bottom[0]->count(slice_axis_ + 1);
  vector<int> top_shape = bottom[0]->shape();
  if (!slice_points_.empty()) {
    LAYER_CHECK_EQ(static_cast<int>(slice_points_.size()), num_tops - 1)
        << "got " << slice_points_.size() << " slice_point(s) for " << num_tops
        << " tops; need one fewer than the number of tops";
    LAYER_CHECK_LE(num_tops, bottom_slice_dim)
        << "cannot cut axis " << slice_axis_ << " of bottom[0] " << bottom[0]->shape_string()
        << " into " << num_tops << " slices";
    int previous = 0;
    for (int k = 0; k < num_tops; ++k) {
      const int end = k + 1 < num_tops ? slice_points_[k] : bottom_slice_dim;
      if (k + 1 < num_tops) {
        LAYER_CHECK_GT(end, previous) << "slice_point " << k << " is " << end
                                      << "; slice points must be > 0 and strictly increasing";
      } else {
        LAYER_CHECK_GE(end, previous)
            << "the last slice_point is " << previous << ", beyond the " << bottom_slice_dim
            << " entries of axis " << slice_axis_ << " of bottom[0] " << bottom[0]->shape_string();
      }
      top_shape[slice_axis_] = end - previous;
      top[k]->Reshape(top_shape);
      previous = end;
    }
  } else {
    LAYER_CHECK_EQ(bottom_slice_dim % num_tops, 0)
        << "without slice_point the " << num_tops << " tops split axis " << slice_axis_
        << " of bottom[0] " << bottom[0]->shape_string() << " equally, but " << bottom_slice_dim
        << " is not a multiple of " << num_tops;
    top_shape[slice_axis_] = bottom_slice_dim / num_tops;
    for (auto* top_blob : top) top_blob->Reshape(top_shape);
  }
  if (num_tops == 1) {
    top[0]->ShareData(*bottom[0]);
    top[0]->ShareDiff(*bottom[0]);
  }
}

template <typename Dtype>
void SliceLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  if (top.size() == 1) return;
  const Dtype* bottom_data = bottom[0]->cpu_data();
  const int bottom_run = bottom[0]->shape(slice_axis_) * inner_;
  int offset = 0;  // where this top's run starts within each bottom run
  for (auto* top_blob : top) {
    Dtype* top_data = top_blob->mutable_cpu_data();
    const int run = top_blob->shape(slice_axis_) * inner_;
    for (int o = 0; o < outer_; ++o) {
      caffe_copy(run, bottom_data + o * bottom_run + offset, top_data + o * run);
    }
    offset += run;
  }
}

template <typename Dtype>
void SliceLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                     const Blobs<Dtype>& bottom) {
  if (!propagate_down[0] || top.size() == 1) return;
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const int bottom_run = bottom[0]->shape(slice_axis_) * inner_;
  int offset = 0;
  for (auto* top_blob : top) {
    const Dtype* top_diff = top_blob->cpu_diff();
    const int run = top_blob->shape(slice_axis_) * inner_;
    for (int o = 0; o < outer_; ++o) {
      caffe_copy(run, top_diff + o * run, bottom_diff + o * bottom_run + offset);
    }
    offset += run;
  }
}

INSTANTIATE_CLASS(SliceLayer);
REGISTER_LAYER_CLASS(Slice);

}  // namespace caffe
