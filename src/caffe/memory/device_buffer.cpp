#include "caffe/memory/device_buffer.hpp"

#include <algorithm>

#include "caffe/common.hpp"
#ifndef CPU_ONLY
#include "caffe/memory/device_memory_policy.hpp"
#include "caffe/memory/gpu_memory.hpp"
#endif

namespace caffe {

#ifdef CPU_ONLY

template <typename Dtype>
DeviceBuffer<Dtype>::DeviceBuffer(size_t count, const char* what) : count_(count) {
  (void)what;
  NO_GPU;
}
template <typename Dtype>
DeviceBuffer<Dtype>::~DeviceBuffer() = default;
void CopyHostToDevice(const void*, void*, size_t) { NO_GPU; }
void CopyDeviceToHost(const void*, void*, size_t) { NO_GPU; }
void SynchronizeDevice() { NO_GPU; }

#else

template <typename Dtype>
DeviceBuffer<Dtype>::DeviceBuffer(size_t count, const char* what)
    : count_(count), policy_(DeviceMemoryPolicy::Current()) {
  const size_t bytes = std::max<size_t>(count, 1) * sizeof(Dtype);
  CUDA_CHECK(cudaGetDevice(&device_));
  // Made on a thread with a policy: the solvers' gradient buffers and the data layers' device
  // batches (the communication and prefetch threads have none).
  void* memory =
      policy_ ? policy_->AllocateScratch(bytes, what) : GpuMemory::Allocate(bytes, device_);
  data_ = static_cast<Dtype*>(memory);
  CUDA_CHECK(cudaMemset(data_, 0, bytes));
}
template <typename Dtype>
DeviceBuffer<Dtype>::~DeviceBuffer() {
  if (policy_) {
    policy_->FreeScratch(data_);
  } else {
    GpuMemory::Free(data_, device_);
  }
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
