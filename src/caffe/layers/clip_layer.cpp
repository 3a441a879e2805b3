#include "caffe/layers/clip_layer.hpp"

#include <algorithm>

#include "caffe/util/cpu_threads.hpp"

namespace caffe {

template <typename Dtype>
void ClipLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const ClipParameter& param = this->layer_param_.clip_param();
  LAYER_CHECK(param.has_min() && param.has_max())
      << "clip_param needs both min and max (given: min " << (param.has_min() ? "yes" : "no")
      << ", max " << (param.has_max() ? "yes" : "no") << ")";
  LAYER_CHECK_LE(param.min(), param.max()) << "clip_param.min must be <= clip_param.max";
  min_ = param.min();
  max_ = param.max();
}

template <typename Dtype>
void ClipLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  const Dtype min = min_, max = max_;
  caffe_parallel_for(bottom[0]->count(),
                     [=](int i) { top_data[i] = std::max(min, std::min(bottom_data[i], max)); });
}

template <typename Dtype>
void ClipLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                    const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const Dtype* bottom_data = bottom[0]->cpu_data();
  const Dtype* top_diff = top[0]->cpu_diff();
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff();
  const Dtype min = min_, max = max_;
  // The bounds themselves pass the gradient (BVLC's rule).
  caffe_parallel_for(bottom[0]->count(), [=](int i) {
    bottom_diff[i] = top_diff[i] * Dtype(bottom_data[i] >= min && bottom_data[i] <= max);
  });
}

INSTANTIATE_CLASS(ClipLayer);
REGISTER_LAYER_CLASS(Clip);

}  // namespace caffe
