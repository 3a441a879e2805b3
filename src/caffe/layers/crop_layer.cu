// Crop on the GPU: one thread per top value finds its source in bottom[0] from its coordinates
// plus the offsets. The shapes travel to the kernel by value, in a fixed-size struct.
#include "caffe/layers/crop_layer.hpp"

namespace caffe {

namespace {

// Everything a thread needs to map a top index to a bottom index.
struct CropGeometry {
  int num_axes;
  int top_shape[kMaxBlobAxes];
  int bottom_shape[kMaxBlobAxes];
  int offsets[kMaxBlobAxes];
};

__device__ int CropBottomIndex(const CropGeometry& geometry, int top_index) {
  // Peel the top coordinates off from the last axis, building the bottom index in the same
  // order with the bottom's strides.
  int bottom_index = 0;
  int bottom_stride = 1;
  for (int axis = geometry.num_axes - 1; axis >= 0; --axis) {
    const int coordinate = top_index % geometry.top_shape[axis];
    top_index /= geometry.top_shape[axis];
    bottom_index += (coordinate + geometry.offsets[axis]) * bottom_stride;
    bottom_stride *= geometry.bottom_shape[axis];
  }
  return bottom_index;
}

template <typename Dtype>
__global__ void CropForwardKernel(int count, CropGeometry geometry, const Dtype* bottom_data,
                                  Dtype* top_data) {
  CUDA_KERNEL_LOOP(j, count) { top_data[j] = bottom_data[CropBottomIndex(geometry, j)]; }
}

// Each top value has its own bottom position, so the scatter has no conflicts.
template <typename Dtype>
__global__ void CropBackwardKernel(int count, CropGeometry geometry, const Dtype* top_diff,
                                   Dtype* bottom_diff) {
  CUDA_KERNEL_LOOP(j, count) { bottom_diff[CropBottomIndex(geometry, j)] = top_diff[j]; }
}

template <typename Dtype>
CropGeometry MakeCropGeometry(const Blob<Dtype>& bottom, const Blob<Dtype>& top,
                              const std::vector<int>& offsets) {
  CropGeometry geometry{};
  geometry.num_axes = top.num_axes();
  for (int axis = 0; axis < top.num_axes(); ++axis) {
    geometry.top_shape[axis] = top.shape(axis);
    geometry.bottom_shape[axis] = bottom.shape(axis);
    geometry.offsets[axis] = offsets[axis];
  }
  return geometry;
}

}  // namespace

template <typename Dtype>
void CropLayer<Dtype>::Forward_gpu(const Blobs<Dtype>& bottom, const Blobs<Dtype>& top) {
  const int count = top[0]->count();
  if (count == 0) return;
  CropForwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, MakeCropGeometry(*bottom[0], *top[0], offsets_), bottom[0]->gpu_data(),
      top[0]->mutable_gpu_data());
  CUDA_POST_KERNEL_CHECK;
}

template <typename Dtype>
void CropLayer<Dtype>::Backward_gpu(const Blobs<Dtype>& top, const vector<bool>& propagate_down,
                                    const Blobs<Dtype>& bottom) {
  if (propagate_down[1]) {
    // The reference contributes only its shape.
    caffe_gpu_set(bottom[1]->count(), Dtype(0), bottom[1]->mutable_gpu_diff());
  }
  if (!propagate_down[0]) return;
  Dtype* bottom_diff = bottom[0]->mutable_gpu_diff();
  caffe_gpu_set(bottom[0]->count(), Dtype(0), bottom_diff);
  const int count = top[0]->count();
  if (count == 0) return;
  CropBackwardKernel<Dtype><<<CAFFE_GET_BLOCKS(count), CAFFE_CUDA_NUM_THREADS>>>(
      count, MakeCropGeometry(*bottom[0], *top[0], offsets_), top[0]->gpu_diff(), bottom_diff);
  CUDA_POST_KERNEL_CHECK;
}

INSTANTIATE_LAYER_GPU_FUNCS(CropLayer);

}  // namespace caffe
