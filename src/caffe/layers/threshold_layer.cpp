#include "caffe/layers/threshold_layer.hpp"

#include "caffe/util/cpu_threads.hpp"

namespace caffe {

template <typename Dtype>
void ThresholdLayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  threshold_ = this->layer_param_.threshold_param().threshold();
}

template <typename Dtype>
void ThresholdLayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const Dtype* bottom_data = bottom[0]->cpu_data();
  Dtype* top_data = top[0]->mutable_cpu_data();
  const Dtype threshold = threshold_;
  caffe_parallel_for(bottom[0]->count(),
                     [=](int i) { top_data[i] = bottom_data[i] > threshold ? 1 : 0; });
}

template <typename Dtype>
void ThresholdLayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top,
                                         const vector<bool>& propagate_down,
                                         const Blobs<Dtype>& bottom) {
  LAYER_CHECK(!propagate_down[0])
      << "has no gradient (a step function; BVLC implements no backward): do not propagate "
         "down into its bottom";
}

INSTANTIATE_CLASS(ThresholdLayer);
REGISTER_LAYER_CLASS(Threshold);

}  // namespace caffe
