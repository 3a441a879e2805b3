#include "caffe/layers/concat_layer.hpp"

namespace caffe {

template <typename Dtype>
void ConcatLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const ConcatParameter& param = this->layer_param_.concat_param();
  LAYER_CHECK(!(param.has_axis() && param.has_concat_dim()))
      << "concat_param sets both axis (" << param.axis() << ") and the deprecated concat_dim ("
      << param.concat_dim() << "); set only one";
}

template <typename Dtype>
void ConcatLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const ConcatParameter& param = this->layer_param_.concat_param();
  const int num_axes = bottom[0]->num_axes();
  if (param.has_concat_dim()) {
    concat_axis_ = static_cast<int>(param.concat_dim());
    LAYER_CHECK_LT(concat_axis_, num_axes)
        << "concat_dim is " << param.concat_dim() << ", but bottom[0] " << bottom[0]->shape_string()
        << " has only " << num_axes << " axes";
  } else {
    LAYER_CHECK(param.axis() >= -num_axes && param.axis() < num_axes)
        << "concat_param.axis is " << param.axis() << ", but bottom[0] "
        << bottom[0]->shape_string() << " has " << num_axes << " axes; must be in [" << -num_axes
        << ", " << num_axes << ")";
    concat_axis_ = bottom[0]->CanonicalAxisIndex(param.axis());
  }
  vector<int> top_shape = bottom[0]->shape();
  outer_ = bottom[0]->count(0, concat_axis_);
  inner_ = bottom[0]->count(concat_axis_ + 1);
  for (size_t i = 1; i < bottom.size(); ++i) {
    bool compatible = bottom[i]->num_axes() == num_axes;
    for (int j = 0; compatible && j < num_axes; ++j) {
      compatible = j == concat_axis_ || bottom[i]->shape(j) == top_shape[j];
    }
    LAYER_CHECK(compatible) << "bottom[" << i << "] " << bottom[i]->shape_string()
                            << " does not match bottom[0] " << bottom[0]->shape_string()
                            << "; all bottoms must have the same shape except on axis "
                            << concat_axis_;
    top_shape[concat_axis_] += bottom[i]->shape(concat_axis_);
  }
  top[0]->Reshape(top_shape);
  if (bottom.size() == 1) {
    top[0]->ShareData(*bottom[0]);
    top[0]->ShareDiff(*bottom[0]);
  }
}

template <typename Dtype>
int ConcatLayer<Dtype>::BlockFor(const Blobs<Dtype>& bottom) const {
  const int block = bottom[0]->cpu_data_block();
  if (concat_axis_ != 1) return 1;
  for (const auto* bottom_blob : bottom) {
    if (bottom_blob->shape(1) % block != 0) return 1;
  }
  return block;
}

template <typename Dtype>
void ConcatLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  if (bottom.size() == 1) return;
  block_ = BlockFor(bottom);
  Dtype* top_data = top[0]->mutable_cpu_data_in(block_, /*keep_values=*/false);
  const int top_run = top[0]->shape(concat_axis_) * inner_;
  int offset = 0;  // where this bottom's run starts within each top run
  for (auto* bottom_blob : bottom) {
    const Dtype* bottom_data = bottom_blob->cpu_data_in(block_);
    const int run = bottom_blob->shape(concat_axis_) * inner_;
    for (int o = 0; o < outer_; ++o) {
      caffe_copy(run, bottom_data + o * run, top_data + o * top_run + offset);
    }
    offset += run;
  }
}

template <typename Dtype>
void ConcatLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                      const Blobs<Dtype>& bottom) {
  if (bottom.size() == 1) return;
  const Dtype* top_diff = top[0]->cpu_diff_in(block_);
  const int top_run = top[0]->shape(concat_axis_) * inner_;
  int offset = 0;
  for (size_t i = 0; i < bottom.size(); ++i) {
    const int run = bottom[i]->shape(concat_axis_) * inner_;
    if (propagate_down[i]) {
      Dtype* bottom_diff = bottom[i]->mutable_cpu_diff_in(block_, /*keep_values=*/false);
      for (int o = 0; o < outer_; ++o) {
        caffe_copy(run, top_diff + o * top_run + offset, bottom_diff + o * run);
      }
    }
    offset += run;
  }
}

INSTANTIATE_CLASS(ConcatLayer);
REGISTER_LAYER_CLASS(Concat);

}  // namespace caffe
