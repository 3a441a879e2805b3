#include "caffe/layers/hinge_loss_layer.hpp"

#include <algorithm>

namespace caffe {

template <typename Dtype>
void HingeLossLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  LossLayer<Dtype>::Reshape(bottom, top);
  LAYER_CHECK_EQ(bottom[1]->count(), bottom[0]->shape(0))
      << "needs one label per item: bottom[0] " << bottom[0]->shape_string() << " has "
      << bottom[0]->shape(0) << " items, bottom[1] " << bottom[1]->shape_string() << " holds "
      << bottom[1]->count() << " labels";
  margins_.ReshapeLike(*bottom[0]);
}

template <typename Dtype>
void HingeLossLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int num = bottom[0]->shape(0);
  const int count = bottom[0]->count();
  const int dim = count / num;
  const Dtype* label = bottom[1]->cpu_data();
  for (int n = 0; n < num; ++n) {
    const int label_value = static_cast<int>(label[n]);
    LAYER_CHECK(label_value >= 0 && label_value < dim)
        << "label " << label_value << " of item " << n << " is out of range; labels must be in [0, "
        << dim << ") for " << dim << " classes";
  }
  Dtype* margins = margins_.mutable_cpu_data();
  caffe_copy(count, bottom[0]->cpu_data(), margins);
  for (int n = 0; n < num; ++n) margins[n * dim + static_cast<int>(label[n])] *= -1;
  for (int i = 0; i < count; ++i) margins[i] = std::max(Dtype(0), 1 + margins[i]);
  Dtype loss = 0;
  switch (this->layer_param_.hinge_loss_param().norm()) {
    case HingeLossParameter::L1:
      loss = caffe_cpu_asum(count, margins);
      break;
    case HingeLossParameter::L2:
      loss = caffe_cpu_dot(count, margins, margins);
      break;
  }
  top[0]->mutable_cpu_data()[0] = loss / Dtype(num);
}

template <typename Dtype>
void HingeLossLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top,
                                         const vector<bool>& propagate_down,
                                         const Blobs<Dtype>& bottom) {
  LAYER_CHECK(!propagate_down[1]) << "cannot backpropagate to the labels (bottom[1])";
  if (!propagate_down[0]) return;
  const int num = bottom[0]->shape(0);
  const int count = bottom[0]->count();
  const int dim = count / num;
  const Dtype* label = bottom[1]->cpu_data();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  // d margin_nk / d x_nk = -t_nk where the margin is positive.
  caffe_copy(count, margins_.cpu_data(), bottom_diff);
  for (int n = 0; n < num; ++n) bottom_diff[n * dim + static_cast<int>(label[n])] *= -1;
  const Dtype loss_weight = top[0]->cpu_diff()[0];
  switch (this->layer_param_.hinge_loss_param().norm()) {
    case HingeLossParameter::L1:
      caffe_cpu_sign(count, bottom_diff, bottom_diff);
      caffe_scal(count, loss_weight / Dtype(num), bottom_diff);
      break;
    case HingeLossParameter::L2:
      caffe_scal(count, loss_weight * 2 / Dtype(num), bottom_diff);
      break;
  }
}

INSTANTIATE_CLASS(HingeLossLayer);
REGISTER_LAYER_CLASS(HingeLoss);

}  // namespace caffe
