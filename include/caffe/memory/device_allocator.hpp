// The one allocator of device memory per device (docs/LMS.md, DESIGN.md "Memory"): it rounds
// requests up to size classes, keeps freed blocks for reuse by size class, and enforces an
// optional budget in bytes on everything it holds from the device (in use plus cached). The budget
// is how tests emulate a small GPU and how a GPU is shared (-gpu_mem_limit).
#ifndef CAFFE_MEMORY_DEVICE_ALLOCATOR_HPP_
#define CAFFE_MEMORY_DEVICE_ALLOCATOR_HPP_

#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>

#include "caffe/memory/device.hpp"

namespace caffe {

class DeviceAllocator {
 public:
  /// `budget` 0 means the device's whole capacity.
  DeviceAllocator(Device* device, size_t budget);
  ~DeviceAllocator();

  /// The size class `bytes` is served from: a multiple of 512 bytes up to 1 MiB, of 2 MiB above.
  static size_t SizeClass(size_t bytes);

  /// Device memory of at least `bytes`, or null when neither the cache nor the budget (after
  /// handing cached blocks back to the device) nor the device can provide it. Cached memory whose
  /// copies have finished is preferred; otherwise `*ticket` (when asked) is set to the copy that
  /// may still read or write it, after which compute on it must be ordered (0: none).
  void* Allocate(size_t bytes, uint64_t* ticket = nullptr);
  /// Returns memory from Allocate to the cache; `ticket`: the last copy issued on it, which may
  /// still be running (a swap-out: the memory is free before its copy home has finished).
  void Free(void* ptr, uint64_t ticket = 0);
  /// Hands every cached block back to the device (after the copies that still use them).
  void ReleaseCache();

  Device* device() const { return device_; }
  size_t budget() const { return budget_; }
  /// A new budget (0: the device's capacity) for allocations from now on; what is held beyond it
  /// is not taken back, but cached blocks are handed back first when it is exceeded.
  void set_budget(size_t budget) { budget_ = budget == 0 ? device_->capacity() : budget; }
  /// Bytes handed out (by size class), bytes held from the device (in use plus cached).
  size_t in_use() const { return in_use_; }
  size_t reserved() const { return reserved_; }
  size_t peak_in_use() const { return peak_in_use_; }
  size_t peak_reserved() const { return peak_reserved_; }
  /// Whether `bytes` more could be handed out without exceeding the budget (cache included).
  bool Fits(size_t bytes) const;

 private:
  Device* device_;
  size_t budget_;
  size_t in_use_ = 0;
  size_t reserved_ = 0;
  size_t peak_in_use_ = 0;
  size_t peak_reserved_ = 0;
  std::unordered_map<void*, size_t> live_;  // handed out: pointer -> size class
  struct Cached {
    void* ptr;
    uint64_t ticket;  // the last copy on it
  };
  std::multimap<size_t, Cached> cache_;  // freed, by size class, oldest first
};

}  // namespace caffe

#endif  // CAFFE_MEMORY_DEVICE_ALLOCATOR_HPP_
