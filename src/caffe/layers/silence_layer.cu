// Silence on the GPU: nothing to compute forward; backward zeroes the asked-for diffs on the
// device, where the rest of the net's gradients live.
#include "caffe/layers/silence_layer.hpp"

namespace caffe {

template <typename Dtype>
void SilenceLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                       const Blobs<Dtype>& bottom) {
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (propagate_down[i]) {
      caffe_gpu_set(bottom[i]->count(), Dtype(0), bottom[i]->mutable_gpu_diff());
    }
  }
}

INSTANTIATE_LAYER_GPU_BACKWARD(SilenceLayer);

}  // namespace caffe
