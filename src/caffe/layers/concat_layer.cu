// Concat on the GPU: one kernel per bottom moves its (outer, C_i * inner) block to or from its
// place in the top, one thread per value.
// Legend as in concat_layer.hpp: outer, C_i along the axis, inner.
#include "caffe/layers/concat_layer.hpp"

namespace caffe {

namespace {

// Copies between a bottom viewed as (outer, run) and columns [offset, offset + run) of the top
// viewed as (outer, top_run); forward copies bottom to top, backward top to bottom.
template <typename Dtype>
__global__ void ConcatKernel(int count, int run, int top_run, int offset, bool forward,
                             const Dtype* from, Dtype* to) {
  CUDA_KERNEL_LOOP(j, count) {
    const int o = j / run;
    const size_t top_index = static_cast<size_t>(o) * top_run + offset + j % run;
    if (forward) {
      to[top_index] = from[j];
    } else {
      to[j] = from[top_index];
    }
  }
}

}  // namespace

template <typename Dtype>
void ConcatLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  if (bottom.size() == 1) return;
  Dtype* top_data = top[0]->mutable_gpu_data();
  const int top_run = top[0]->shape(concat_axis_) * inner_;
  int offset = 0;  // where this bottom's run starts within each top run
  for (auto* bottom_blob : bottom) {
    const int run = bottom_blob->shape(concat_axis_) * inner_;
    const int count = bottom_blob->count();
    if (count > 0) {
      ConcatKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
          count, run, top_run, offset, true, bottom_blob->gpu_data(), top_data);
      CUDA_POST_KERNEL_CHECK;
    }
    offset += run;
  }
}

template <typename Dtype>
void ConcatLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                      const Blobs<Dtype>& bottom) {
  if (bottom.size() == 1) return;
  const Dtype* top_diff = top[0]->gpu_diff();
  const int top_run = top[0]->shape(concat_axis_) * inner_;
  int offset = 0;
  for (size_t i = 0; i < bottom.size(); ++i) {
    const int run = bottom[i]->shape(concat_axis_) * inner_;
    const int count = bottom[i]->count();
    if (propagate_down[i] && count > 0) {
      ConcatKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
          count, run, top_run, offset, false, top_diff, bottom[i]->mutable_gpu_diff());
      CUDA_POST_KERNEL_CHECK;
    }
    offset += run;
  }
}

INSTANTIATE_LAYER_GPU_FUNCS(ConcatLayer);

}  // namespace caffe
