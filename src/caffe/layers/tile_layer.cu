// Tile on the GPU: forward is one thread per top value reading its source; backward is one
// thread per bottom value summing its tiles in order, so no two threads write the same value.
// Legend as in tile_layer.hpp: outer = axes before `axis`, inner = axes from it on.
#include "caffe/layers/tile_layer.hpp"

namespace caffe {

namespace {

template <typename Dtype>
__global__ void TileForwardKernel(int count, int tiles, int inner, const Dtype* bottom_data,
                                  Dtype* top_data) {
  CUDA_KERNEL_LOOP(j, count) {
    const int o = j / (tiles * inner);
    top_data[j] = bottom_data[static_cast<size_t>(o) * inner + j % inner];
  }
}

template <typename Dtype>
__global__ void TileBackwardKernel(int count, int tiles, int inner, const Dtype* top_diff,
                                   Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(j, count) {
    const int o = j / inner;
    const Dtype* tile_diff = top_diff + static_cast<size_t>(o) * tiles * inner + j % inner;
    Dtype sum = tile_diff[0];
    for (int t = 1; t < tiles; ++t) sum += tile_diff[static_cast<size_t>(t) * inner];
    bottom_diff[j] = sum;
  }
}

}  // namespace

template <typename Dtype>
void TileLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = top[0]->count();
  if (count == 0) return;
  TileForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, tiles_, inner_, bottom[0]->gpu_data(), top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void TileLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                    const Blobs<Dtype>& bottom) {
  if (!propagate_down[0]) return;
  const int count = bottom[0]->count();
  if (count == 0) return;
  TileBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, tiles_, inner_, top[0]->gpu_diff(), bottom[0]->mutable_gpu_diff());
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(TileLayer);

}  // namespace caffe
