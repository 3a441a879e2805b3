#include "caffe/parallel/device_buffer.hpp"

#include <algorithm>

#include "caffe/common.hpp"

namespace caffe {

#ifdef CPU_ONLY

template <typename Dtype>
DeviceBuffer<Dtype>::DeviceBuffer(size_t count) : count_(count) {
  NO_GPU;
}
template <typename Dtype>
DeviceBuffer<Dtype>::~DeviceBuffer() = default;
void CopyHostToDevice(const void*, void*, size_t) { NO_GPU; }
void CopyDeviceToHost(const void*, void*, size_t) { NO_GPU; }
void SynchronizeDevice() { NO_GPU; }

#else

template <typename Dtype>
DeviceBuffer<Dtype>::DeviceBuffer(size_t count) : count_(count) {
  const size_t bytes = std::max<size_t>(count, 1) * sizeof(Dtype);
  CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), bytes));
  CUDA_CHECK(cudaMemset(data_, 0, bytes));
}
template <typename Dtype>
DeviceBuffer<Dtype>::~DeviceBuffer() {
  if (data_) cudaFree(data_);
}
void CopyHostToDevice(const void* host, void* device, size_t bytes) {
  if (bytes) CUDA_CHECK(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));
}
void CopyDeviceToHost(const void* device, void* host, size_t bytes) {
  if (bytes) CUDA_CHECK(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost));
}
void SynchronizeDevice() { CUDA_CHECK(cudaDeviceSynchronize()); }

#endif  // CPU_ONLY

template class DeviceBuffer<float>;
template class DeviceBuffer<double>;

}  // namespace caffe
