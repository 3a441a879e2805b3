// Legend as in reduction_layer.hpp: M outputs, D values reduced into each.
#include "caffe/layers/reduction_layer.hpp"

#include <cmath>
#include <vector>

namespace caffe {

template <typename Dtype>
void ReductionLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  op_ = this->layer_param_.reduction_param().operation();
}

template <typename Dtype>
void ReductionLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const ReductionParameter& param = this->layer_param_.reduction_param();
  const int num_axes = bottom[0]->num_axes();
  LAYER_CHECK(param.axis() >= -num_axes && param.axis() < num_axes)
      << "reduction_param.axis is " << param.axis() << ", but bottom[0] "
      << bottom[0]->shape_string() << " has " << num_axes << " axes; must be in [" << -num_axes
      << ", " << num_axes << ")";
  const int axis = bottom[0]->CanonicalAxisIndex(param.axis());
  // Everything from `axis` on is reduced: the top keeps the leading axes only.
  const std::vector<int> top_shape(bottom[0]->shape().begin(), bottom[0]->shape().begin() + axis);
  top[0]->Reshape(top_shape);
  outer_ = bottom[0]->count(0, axis);
  inner_ = bottom[0]->count(axis);
  coeff_ = param.coeff();
  if (op_ == ReductionParameter_ReductionOp_MEAN) coeff_ /= inner_;
}

template <typename Dtype>
void ReductionLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  for (int m = 0; m < outer_; ++m) {
    const Dtype* x = bottom_data + m * inner_;
    Dtype value = 0;
    switch (op_) {
      case ReductionParameter_ReductionOp_SUM:
      case ReductionParameter_ReductionOp_MEAN:
        for (int d = 0; d < inner_; ++d) value += x[d];
        break;
      case ReductionParameter_ReductionOp_ASUM:
        value = caffe_cpu_asum(inner_, x);
        break;
      case ReductionParameter_ReductionOp_SUMSQ:
        value = caffe_cpu_dot(inner_, x, x);
        break;
      default:
        LAYER_THROW() << "unknown reduction_param.operation " << op_;
    }
    top_data[m] = coeff_ == Dtype(1) ? value : coeff_ * value;
  }
}

template <typename Dtype>
void ReductionLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top,
                                         const vector<bool>& propagate_down,
                                         const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* bottom_data = bottom[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  for (int m = 0; m < outer_; ++m) {
    const Dtype* x = bottom_data + m * inner_;
    Dtype* dx = bottom_diff + m * inner_;
    const Dtype scale = top_diff[m] * coeff_;
    switch (op_) {
      case ReductionParameter_ReductionOp_SUM:
      case ReductionParameter_ReductionOp_MEAN:
        caffe_set(inner_, scale, dx);
        break;
      case ReductionParameter_ReductionOp_ASUM:
        for (int d = 0; d < inner_; ++d) dx[d] = (Dtype(x[d] > 0) - Dtype(x[d] < 0)) * scale;
        break;
      case ReductionParameter_ReductionOp_SUMSQ:
        caffe_cpu_scale(inner_, 2 * scale, x, dx);
        break;
      default:
        LAYER_THROW() << "unknown reduction_param.operation " << op_;
    }
  }
}

INSTANTIATE_CLASS(ReductionLayer);
REGISTER_LAYER_CLASS(Reduction);

}  // namespace caffe
