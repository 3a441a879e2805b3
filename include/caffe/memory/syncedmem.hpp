// One buffer with a host side and a device side, kept coherent lazily. The head says where the
// newest copy lives; cpu_data()/gpu_data() copy to that side if it is stale, mutable_* also move
// the head there (the other side becomes stale). Host memory is 64-byte aligned for vector loads.
// The host side may hold float values channel-blocked (memory/channel_layout.hpp) where a oneDNN
// layer left them so for the next; cpu_data(), mutable_cpu_data() and the device side see them
// plain, converted in place on the way.
#ifndef CAFFE_MEMORY_SYNCEDMEM_HPP_
#define CAFFE_MEMORY_SYNCEDMEM_HPP_

#include <cstddef>

#include "caffe/common.hpp"
#include "caffe/memory/channel_layout.hpp"

namespace caffe {

class DeviceSide;

/// Allocates `size` bytes of host memory, aligned for SIMD; `use_cuda` is set when the block was
/// allocated as pinned (page-locked) memory, which must be freed the same way.
void CaffeMallocHost(void** ptr, size_t size, bool* use_cuda);
void CaffeFreeHost(void* ptr, bool use_cuda);

/// A buffer shared by a Blob's data or diff and the layers that read and write it.
class SyncedMemory {
 public:
  /// UNINITIALIZED: nothing allocated. HEAD_AT_CPU / HEAD_AT_GPU: only that side is current.
  /// SYNCED: both sides hold the same values.
  enum SyncedHead { UNINITIALIZED, HEAD_AT_CPU, HEAD_AT_GPU, SYNCED };

  SyncedMemory() = default;
  explicit SyncedMemory(size_t size);
  ~SyncedMemory();

  const void* cpu_data();
  void* mutable_cpu_data();
  /// Uses memory the caller owns as the host side (the caller keeps it alive).
  void set_cpu_data(void* data);
  /// The host values in `layout`, converted in place from the host side's own where it differs.
  const void* cpu_data_in(const ChannelLayout& layout);
  /// As mutable_cpu_data(), in `layout`. keep_values false: the caller writes every value, so
  /// none is converted.
  void* mutable_cpu_data_in(const ChannelLayout& layout, bool keep_values);
  /// The order of the host side's values now (plain unless a oneDNN layer left them blocked).
  const ChannelLayout& cpu_layout() const { return layout_; }
  const void* gpu_data();
  void* mutable_gpu_data();
  void set_gpu_data(void* data);

  SyncedHead head() const { return head_; }
  /// The device side's address as it is, without making it current (null: none yet).
  const void* device_ptr() const { return gpu_ptr_; }
  size_t size() const { return size_; }
  /// The device side as a device memory policy (memory/device_memory_policy.hpp: Large Model
  /// Support's manager) owns it, or null: none was installed on the thread of its first device
  /// access, and the GPU's caching allocator serves it.
  DeviceSide* device_side() const { return device_side_; }

 private:
  friend class DeviceSide;
  void to_cpu();
  void to_gpu();
  void ToLayout(const ChannelLayout& layout);
  void FreeHost();
  void FreeDevice();

  void* cpu_ptr_ = nullptr;
  void* gpu_ptr_ = nullptr;
  size_t size_ = 0;
  SyncedHead head_ = UNINITIALIZED;
  bool own_cpu_data_ = false;
  bool cpu_malloc_use_cuda_ = false;
  bool own_gpu_data_ = false;
  int device_ = -1;
  DeviceSide* device_side_ = nullptr;  // owned; set on the first device access under a policy
  ChannelLayout layout_;               // of the host side's values; the device side's are plain

  DISABLE_COPY_AND_ASSIGN(SyncedMemory);
};

}  // namespace caffe

#endif  // CAFFE_MEMORY_SYNCEDMEM_HPP_
