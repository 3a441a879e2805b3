#include "caffe/layers/absval_layer.hpp"

#include <cmath>

#include "caffe/util/cpu_threads.hpp"

namespace caffe {

template <typename Dtype>
void AbsValLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  caffe_parallel_for(bottom[0]->count(), [=](int i) { top_data[i] = std::fabs(bottom_data[i]); });
}

template <typename Dtype>
void AbsValLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                      const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* bottom_data = bottom[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  caffe_parallel_for(bottom[0]->count(), [=](int i) {
    const Dtype sign = Dtype(bottom_data[i] > 0) - Dtype(bottom_data[i] < 0);
    bottom_diff[i] = sign * top_diff[i];
  });
}

INSTANTIATE_CLASS(AbsValLayer);
REGISTER_LAYER_CLASS(AbsVal);

}  // namespace caffe
