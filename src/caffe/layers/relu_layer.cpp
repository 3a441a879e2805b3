#include "caffe/layers/relu_layer.hpp"

#include "caffe/kernels/relu_math.hpp"
#include "caffe/util/cpu_threads.hpp"

namespace caffe {

template <typename Dtype>
void ReLULayer<Dtype>::LayerSetUp(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  negative_slope_ = this->layer_param_.relu_param().negative_slope();
}

template <typename Dtype>
void ReLULayer<Dtype>::Forward_cpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  // Element-wise: the values stay in whatever channel blocks they came in.
  const int block = bottom[0]->cpu_data_block();
  const Dtype* bottom_data = bottom[0]->cpu_data_in(block);
  Dtype* top_data = top[0]->mutable_cpu_data_in(block, /*keep_values=*/false);
  const int count = bottom[0]->count();
  const Dtype negative_slope = negative_slope_;
  caffe_parallel_for(count, [=](int i) { top_data[i] = ReLUOf(bottom_data[i], negative_slope); });
}

template <typename Dtype>
void ReLULayer<Dtype>::Backward_cpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                    const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const int block = bottom[0]->cpu_data_block();  // the gradient goes where the values went
  const Dtype* bottom_data = bottom[0]->cpu_data_in(block);
  const Dtype* top_diff = top[0]->cpu_diff_in(block);
  Dtype* bottom_diff = bottom[0]->mutable_cpu_diff_in(block, /*keep_values=*/false);
  const int count = bottom[0]->count();
  const Dtype negative_slope = negative_slope_;
  caffe_parallel_for(count, [=](int i) {
    bottom_diff[i] = top_diff[i] * ReLUGradientFactor(bottom_data[i], negative_slope);
  });
}

template <typename Dtype>
ReLULayer<Dtype>* ReLULayer<Dtype>::FusableInPlaceOn(const Blob<Dtype>* blob, Layer<Dtype>* next,
                                                     const Blobs<Dtype>& next_bottom,
                                                     const Blobs<Dtype>& next_top) {
  auto* relu = dynamic_cast<ReLULayer<Dtype>*>(next);
  if (relu == nullptr || relu->negative_slope_ < 0 || next_bottom.size() != 1 ||
      next_top.size() != 1 || next_bottom[0] != blob || next_top[0] != blob) {
    return nullptr;
  }
  return relu;
}

INSTANTIATE_CLASS(ReLULayer);

// Its engines (layers/cudnn/, layers/dnnl/) are chosen by layer_engine.hpp.
REGISTER_LAYER_CLASS(ReLU);

}  // namespace caffe
