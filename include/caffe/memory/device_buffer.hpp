// Device memory for DDL on GPU learners: a buffer owned by the communication code (the explorer's
// timing buffer, the host staging of device gradients) and the copies and synchronisation around
// it. In a CPU-only build each of these is a caffe::Error saying the build has no GPU support.
#ifndef CAFFE_MEMORY_DEVICE_BUFFER_HPP_
#define CAFFE_MEMORY_DEVICE_BUFFER_HPP_

#include <cstddef>
#include <memory>

namespace caffe {

class DeviceMemoryPolicy;

/// `count` elements of device memory on the current device, zero-filled; freed on destruction.
/// The memory counts against the GPU's budget (-gpu_mem_limit): from the calling thread's device
/// memory policy (LMS) where it has one (then destroy the buffer on that thread too), else from
/// Caffe's caching allocator for the GPU. `what` names the buffer in the out-of-memory error.
template <typename Dtype>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t count, const char* what = "the gradients' buffer");
  ~DeviceBuffer();
  Dtype* data() { return data_; }
  size_t count() const { return count_; }

 private:
  Dtype* data_ = nullptr;
  size_t count_ = 0;
  int device_ = 0;
  std::shared_ptr<DeviceMemoryPolicy> policy_;  // null: from GpuMemory

  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

/// Copies `bytes` from host to device memory, or back; both wait for the copy to finish.
void CopyHostToDevice(const void* host, void* device, size_t bytes);
void CopyDeviceToHost(const void* device, void* host, size_t bytes);
/// Waits until the current device has finished all work (cudaDeviceSynchronize).
void SynchronizeDevice();

}  // namespace caffe

#endif  // CAFFE_MEMORY_DEVICE_BUFFER_HPP_
