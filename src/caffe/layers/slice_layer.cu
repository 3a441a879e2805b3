// Slice on the GPU: one kernel per top moves its (outer, C_k * inner) block out of (or back
// into) its place in the bottom, one thread per value.
// Legend as in slice_layer.hpp: outer, C_k along the axis, inner.
#include "caffe/layers/slice_layer.hpp"

namespace caffe {

namespace {

// Copies between a top viewed as (outer, run) and columns [offset, offset + run) of the bottom
// viewed as (outer, bottom_run); forward copies bottom to top, backward top to bottom.
template <typename Dtype>
__global__ void SliceKernel(int count, int run, int bottom_run, int offset, bool forward,
                            const Dtype* from, Dtype* to) {
  CUDA_KERNEL_LOOP(j, count) {
    const int o = j / run;
    const size_t bottom_index = static_cast<size_t>(o) * bottom_run + offset + j % run;
    if (forward) {
      to[j] = from[bottom_index];
    } else {
      to[bottom_index] = from[j];
    }
  }
}

}  // namespace

template <typename Dtype>
void SliceLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  if (top.size() == 1) return;
  const Dtype* bottom_data = bottom[0]->gpu_data();
  const int bottom_run = bottom[0]->shape(slice_axis_) * inner_;
  int offset = 0;  // where this top's run starts within each bottom run
  for (auto* top_blob : top) {
    const int run = top_blob->shape(slice_axis_) * inner_;
    const int count = top_blob->count();
    if (count > 0) {
      SliceKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
          count, run, bottom_run, offset, true, bottom_data, top_blob->mutable_gpu_data());
      CUDA_POST_KERNEL_CHECK;
    }
    offset += run;
  }
}

template <typename Dtype>
void SliceLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                     const Blobs<Dtype>& bottom) {
  if (!propagate_down[0] || top.size() == 1) return;
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  const int bottom_run = bottom[0]->shape(slice_axis_) * inner_;
  int offset = 0;
  for (auto* top_blob : top) {
    const int run = top_blob->shape(slice_axis_) * inner_;
    const int count = top_blob->count();
    if (count > 0) {
      SliceKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
          count, run, bottom_run, offset, false, top_blob->gpu_diff(), bottom_diff);
      CUDA_POST_KERNEL_CHECK;
    }
    offset += run;
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(SliceLayer);

}  // namespace caffe
