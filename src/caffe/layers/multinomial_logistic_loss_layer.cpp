#include "caffe/layers/multinomial_logistic_loss_layer.hpp"

#include <algorithm>
#include <cmath>

namespace caffe {

namespace {
// BVLC's kLOG_THRESHOLD: the smallest probability whose log is taken (a float, as in BVLC).
constexpr float kLogThreshold = 1e-20f;
}  // namespace

template <typename Dtype>
void MultinomialLogisticLossLayer<Dtype>::Reshape(const Blobs<Dtype>& bottom,
                                                  const Blobs<Dtype>& top) {
  LossLayer<Dtype>::Reshape(bottom, top);
  LAYER_CHECK(bottom[1]->num_axes() <= 4 && bottom[1]->count() == bottom[1]->shape(0))
      << "bottom[1] must hold one label per item, (N) or (N, 1, 1, 1); got "
      << bottom[1]->shape_string();
}

template <typename Dtype>
void MultinomialLogisticLossLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom,
                                                      const Blobs<Dtype>& top) {
  const Dtype* prob = bottom[0]->cpu_data();
  const Dtype* label = bottom[1]->cpu_data();
  const int num = bottom[0]->shape(0);
  const int dim = bottom[0]->count() / num;
  Dtype loss = 0;
  for (int n = 0; n < num; ++n) {
    const int label_value = static_cast<int>(label[n]);
    LAYER_CHECK(label_value >= 0 && label_value < dim)
        << "label " << label_value << " of item " << n << " is out of range; labels must be in [0, "
        << dim << ") for " << dim << " classes";
    loss -= std::log(std::max(prob[n * dim + label_value], Dtype(kLogThreshold)));
  }
  top[0]->mutable_cpu_data()[0] = loss / Dtype(num);
}

template <typename Dtype>
void MultinomialLogisticLossLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top,
                                                       const vector<bool>& propagate_down,
                                                       const Blobs<Dtype>& bottom) {
  LAYER_CHECK(!propagate_down[1]) << "cannot backpropagate to the labels (bottom[1])";
  if (!propagate_down[0]) return;
  const Dtype* prob = bottom[0]->cpu_data();
  const Dtype* label = bottom[1]->cpu_data();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const int num = bottom[0]->shape(0);
  const int dim = bottom[0]->count() / num;
  caffe_set(bottom[0]->count(), Dtype(0), bottom_diff);
  const Dtype scale = -top[0]->cpu_diff()[0] / Dtype(num);
  for (int n = 0; n < num; ++n) {
    const int label_value = static_cast<int>(label[n]);
    bottom_diff[n * dim + label_value] =
        scale / std::max(prob[n * dim + label_value], Dtype(kLogThreshold));
  }
}

INSTANTIATE_CLASS(MultinomialLogisticLossLayer);
REGISTER_LAYER_CLASS(MultinomialLogisticLoss);

}  // namespace caffe
