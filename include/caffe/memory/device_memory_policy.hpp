// The hook through which a policy takes over device memory on the threads where it is installed.
// Without one, a SyncedMemory's device side and every device buffer outside it (cuDNN's
// workspace, gradient buffers, data batches) come from the GPU's caching allocator (GpuMemory).
// Large Model Support (lms/) is such a policy: it owns each buffer's device side through a
// DeviceSide of its own, may drop and refetch it, and counts all of it against its budget.
// memory/ defines the hook and knows no policy; a policy depends on memory/, never the reverse.
#ifndef CAFFE_MEMORY_DEVICE_MEMORY_POLICY_HPP_
#define CAFFE_MEMORY_DEVICE_MEMORY_POLICY_HPP_

#include <cstddef>
#include <memory>
#include <string>

#include "caffe/memory/syncedmem.hpp"

namespace caffe {

/// The device side of one SyncedMemory, owned by the SyncedMemory once a policy attached it.
/// SyncedMemory calls it wherever it would otherwise touch the device side itself.
class DeviceSide {
 public:
  virtual ~DeviceSide() = default;
  /// Makes the device copy current; compute issued afterwards sees it.
  virtual void ToDevice() = 0;
  /// Copies a newer device copy home and waits for it (the head becomes SYNCED).
  virtual void CopyToHost() = 0;
  /// Before the host reads or writes the home: waits for a copy still writing it.
  virtual void WaitForHome() = 0;
  /// Before the home is freed: waits for every copy still using it.
  virtual void WaitBeforeFreeingHome() = 0;

 protected:
  // A SyncedMemory's fields, for the policy that owns its device side.
  static void*& HostPtr(SyncedMemory* memory) { return memory->cpu_ptr_; }
  static void*& DevicePtr(SyncedMemory* memory) { return memory->gpu_ptr_; }
  static SyncedMemory::SyncedHead& Head(SyncedMemory* memory) { return memory->head_; }
  static bool& OwnsHost(SyncedMemory* memory) { return memory->own_cpu_data_; }
  static bool& HostPinned(SyncedMemory* memory) { return memory->cpu_malloc_use_cuda_; }
  /// Makes `side` the device side of `memory`, which has none (a policy's own attach).
  static void Adopt(SyncedMemory* memory, DeviceSide* side) { memory->device_side_ = side; }
};

/// A policy for device memory on the threads where it is installed.
class DeviceMemoryPolicy {
 public:
  virtual ~DeviceMemoryPolicy() = default;
  /// Takes over the device side of `memory`, which has none yet: a new DeviceSide that the
  /// SyncedMemory then owns, or null to leave it to the GPU's caching allocator.
  virtual DeviceSide* Attach(SyncedMemory* memory) = 0;
  /// Device memory outside any SyncedMemory, within the policy's budget. Throws a caffe::Error
  /// naming `what` when it cannot be had.
  virtual void* AllocateScratch(size_t bytes, const std::string& what) = 0;
  /// As AllocateScratch, but null instead of the error (for callers with a smaller fallback).
  virtual void* TryAllocateScratch(size_t bytes) = 0;
  virtual void FreeScratch(void* ptr) = 0;

  /// Makes `policy` the calling thread's (null: none). Buffers attached before keep theirs.
  static void Install(std::shared_ptr<DeviceMemoryPolicy> policy);
  /// The calling thread's policy, or null.
  static const std::shared_ptr<DeviceMemoryPolicy>& Current();
};

}  // namespace caffe

#endif  // CAFFE_MEMORY_DEVICE_MEMORY_POLICY_HPP_
