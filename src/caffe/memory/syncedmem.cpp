#include "caffe/memory/syncedmem.hpp"

#include <cstdlib>
#include <cstring>

#include "caffe/memory/device_memory_policy.hpp"
#include "caffe/memory/pinned_host_allocations.hpp"
#ifndef CPU_ONLY
#include "caffe/memory/gpu_memory.hpp"
#endif

namespace caffe {

namespace {
constexpr size_t kHostAlignment = 64;  // one cache line; AVX-512 loads
thread_local int pinned_scopes = 0;    // PinnedHostAllocations alive on this thread
thread_local std::shared_ptr<DeviceMemoryPolicy> current_policy;
}  // namespace

void DeviceMemoryPolicy::Install(std::shared_ptr<DeviceMemoryPolicy> policy) {
  current_policy = std::move(policy);
}

const std::shared_ptr<DeviceMemoryPolicy>& DeviceMemoryPolicy::Current() { return current_policy; }

PinnedHostAllocations::PinnedHostAllocations() { ++pinned_scopes; }
PinnedHostAllocations::~PinnedHostAllocations() { --pinned_scopes; }

void CaffeMallocHost(void** ptr, size_t size, bool* use_cuda) {
  *use_cuda = false;
#ifndef CPU_ONLY
  if (pinned_scopes > 0) {
    // Page-aligned, so aligned enough.
    if (cudaHostAlloc(ptr, size == 0 ? 1 : size, cudaHostAllocDefault) == cudaSuccess) {
      *use_cuda = true;
      return;
    }
    // Pinned memory is a limited resource (and absent without a GPU); pageable memory still
    // works, only copies are slower.
    cudaGetLastError();
  }
#endif
  // aligned_alloc needs a size that is a multiple of the alignment (and never 0).
  size_t rounded = (size + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
  if (rounded == 0) rounded = kHostAlignment;
  *ptr = std::aligned_alloc(kHostAlignment, rounded);
  CAFFE_CHECK(*ptr != nullptr) << "out of host memory: could not allocate " << size << " bytes";
}

void CaffeFreeHost(void* ptr, bool use_cuda) {
#ifndef CPU_ONLY
  if (use_cuda) {
    CUDA_CHECK(cudaFreeHost(ptr));
    return;
  }
#endif
  (void)use_cuda;
  std::free(ptr);
}

SyncedMemory::SyncedMemory(size_t size) : size_(size) {}

SyncedMemory::~SyncedMemory() {
  FreeHost();
  FreeDevice();
}

void SyncedMemory::FreeHost() {
  if (device_side_ != nullptr) device_side_->WaitBeforeFreeingHome();
  if (cpu_ptr_ && own_cpu_data_) CaffeFreeHost(cpu_ptr_, cpu_malloc_use_cuda_);
  cpu_ptr_ = nullptr;
  own_cpu_data_ = false;
}

void SyncedMemory::FreeDevice() {
  if (device_side_ != nullptr) {
    delete device_side_;  // hands the device copy back to its policy
    device_side_ = nullptr;
    gpu_ptr_ = nullptr;
    return;
  }
#ifndef CPU_ONLY
  // Back to the GPU's caching allocator, which frees nothing: no device switch needed.
  if (gpu_ptr_ && own_gpu_data_) GpuMemory::Free(gpu_ptr_, device_);
#endif
  gpu_ptr_ = nullptr;
  own_gpu_data_ = false;
}

void SyncedMemory::to_cpu() {
  switch (head_) {
    case UNINITIALIZED:
      CaffeMallocHost(&cpu_ptr_, size_, &cpu_malloc_use_cuda_);
      std::memset(cpu_ptr_, 0, size_);
      head_ = HEAD_AT_CPU;
      own_cpu_data_ = true;
      break;
    case HEAD_AT_GPU:
      layout_ = ChannelLayout();  // the device side's values are plain
      if (device_side_ != nullptr) {
        device_side_->CopyToHost();
        break;
      }
#ifndef CPU_ONLY
      if (cpu_ptr_ == nullptr) {
        CaffeMallocHost(&cpu_ptr_, size_, &cpu_malloc_use_cuda_);
        own_cpu_data_ = true;
      }
      CUDA_CHECK(cudaMemcpy(cpu_ptr_, gpu_ptr_, size_, cudaMemcpyDeviceToHost));
      head_ = SYNCED;
#else
      NO_GPU;
#endif
      break;
    case HEAD_AT_CPU:
    case SYNCED:
      // Under a policy (LMS) a swap-out may still be copying into the home.
      if (device_side_ != nullptr) device_side_->WaitForHome();
      break;
  }
}

void SyncedMemory::to_gpu() {
  if (head_ == HEAD_AT_CPU) ToLayout(ChannelLayout());  // the device side holds them plain
  // Under a device memory policy (LMS, docs/LMS.md) the device side belongs to it, in CPU-only
  // builds too (LMS's host-backed fake device). Only a buffer with no device side of its own yet
  // is offered to the thread's policy.
  if (device_side_ == nullptr && gpu_ptr_ == nullptr && current_policy) {
    device_side_ = current_policy->Attach(this);
  }
  if (device_side_ != nullptr) {
    device_side_->ToDevice();
    return;
  }
#ifndef CPU_ONLY
  switch (head_) {
    case UNINITIALIZED:
      CUDA_CHECK(cudaGetDevice(&device_));
      gpu_ptr_ = GpuMemory::Allocate(size_, device_);
      CUDA_CHECK(cudaMemset(gpu_ptr_, 0, size_));
      head_ = HEAD_AT_GPU;
      own_gpu_data_ = true;
      break;
    case HEAD_AT_CPU:
      if (gpu_ptr_ == nullptr) {
        CUDA_CHECK(cudaGetDevice(&device_));
        gpu_ptr_ = GpuMemory::Allocate(size_, device_);
        own_gpu_data_ = true;
      }
      CUDA_CHECK(cudaMemcpy(gpu_ptr_, cpu_ptr_, size_, cudaMemcpyHostToDevice));
      head_ = SYNCED;
      break;
    case HEAD_AT_GPU:
    case SYNCED:
      break;
  }
#else
  NO_GPU;
#endif
}

void SyncedMemory::ToLayout(const ChannelLayout& layout) {
  if (layout_ == layout) return;
  if (head_ != UNINITIALIZED) ConvertChannelLayout(static_cast<float*>(cpu_ptr_), layout_, layout);
  layout_ = layout;
}

const void* SyncedMemory::cpu_data() { return cpu_data_in(ChannelLayout()); }

void* SyncedMemory::mutable_cpu_data() { return mutable_cpu_data_in(ChannelLayout(), true); }

const void* SyncedMemory::cpu_data_in(const ChannelLayout& layout) {
  to_cpu();
  ToLayout(layout);
  return cpu_ptr_;
}

void* SyncedMemory::mutable_cpu_data_in(const ChannelLayout& layout, bool keep_values) {
  to_cpu();
  if (keep_values) {
    ToLayout(layout);
  } else {
    layout_ = layout;
  }
  head_ = HEAD_AT_CPU;
  return cpu_ptr_;
}

void SyncedMemory::set_cpu_data(void* data) {
  CHECK(data);
  FreeHost();
  cpu_ptr_ = data;
  head_ = HEAD_AT_CPU;
  own_cpu_data_ = false;
  layout_ = ChannelLayout();
}

const void* SyncedMemory::gpu_data() {
  to_gpu();
  return gpu_ptr_;
}

void* SyncedMemory::mutable_gpu_data() {
  to_gpu();
  head_ = HEAD_AT_GPU;
  return gpu_ptr_;
}

void SyncedMemory::set_gpu_data(void* data) {
#ifndef CPU_ONLY
  CHECK(data);
  FreeDevice();
  gpu_ptr_ = data;
  head_ = HEAD_AT_GPU;
  own_gpu_data_ = false;
#else
  (void)data;
  NO_GPU;
#endif
}

}  // namespace caffe
