// The device side of Large Model Support (docs/LMS.md): what the LMS memory manager needs from a
// device (raw allocation, copies on a copy stream, pinned host memory), and a host-backed fake
// device with a capacity that tests (and anyone without a GPU) use in place of a real one. The
// CUDA device (cuda_device.hpp) is the thin real implementation.
#ifndef CAFFE_LMS_DEVICE_HPP_
#define CAFFE_LMS_DEVICE_HPP_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace caffe {
namespace lms {

/// A device's memory and copy engine. Copies run in issue order on one copy stream; a copy to
/// the device is ordered after all compute work issued before it (so memory just freed by the
/// compute side may be refilled), a copy to the host likewise. Nothing here throws for being out
/// of memory: Malloc returns null and the caller (DeviceAllocator, MemoryManager) decides.
class Device {
 public:
  virtual ~Device() = default;
  /// "fake device (capacity 64 MiB)", "CUDA device 0 (NVIDIA H200)".
  virtual std::string name() const = 0;
  /// The bytes the device can hold at most (its memory size).
  virtual size_t capacity() const = 0;
  /// Device memory, or null when the device has none left.
  virtual void* Malloc(size_t bytes) = 0;
  virtual void Free(void* ptr) = 0;
  /// Fills device memory with zeros, ordered like compute work.
  virtual void Zero(void* ptr, size_t bytes) = 0;
  /// Host memory for a buffer's home: pinned (page-locked) where the device can copy from it
  /// asynchronously, in which case `pinned` is set and the memory must be freed with
  /// CaffeFreeHost(ptr, true).
  virtual void HostAlloc(void** ptr, size_t bytes, bool* pinned) = 0;
  virtual void CopyToDeviceAsync(void* device_dst, const void* host_src, size_t bytes) = 0;
  virtual void CopyToHostAsync(void* host_dst, const void* device_src, size_t bytes) = 0;
  /// Blocks the calling thread until every copy issued so far has finished.
  virtual void WaitForCopies() = 0;
  /// Compute work issued from now on starts after the copies issued so far (no host wait).
  virtual void ComputeWaitsForCopies() = 0;
  /// True when device pointers are ordinary host addresses (the fake device), so CPU code may
  /// run on device copies.
  virtual bool host_addressable() const { return false; }
};

/// A device whose memory is host memory, with a capacity: a real allocator with Device's
/// interface, for tests and CPU-only runs. Copies are synchronous and are recorded in order, so
/// tests can check what moved when. Fresh and freed memory is filled with a poison byte, so
/// reading memory that was never copied in gives garbage rather than plausible values, and a
/// copy that touches memory outside a live allocation is a bug that stops the program.
class FakeDevice : public Device {
 public:
  static constexpr unsigned char kPoison = 0xA5;

  /// One recorded copy: its direction, the device address and the size.
  struct Copy {
    bool to_device = false;
    const void* device = nullptr;
    size_t bytes = 0;
  };

  explicit FakeDevice(size_t capacity);
  ~FakeDevice() override;

  std::string name() const override;
  size_t capacity() const override { return capacity_; }
  void* Malloc(size_t bytes) override;
  void Free(void* ptr) override;
  void Zero(void* ptr, size_t bytes) override;
  void HostAlloc(void** ptr, size_t bytes, bool* pinned) override;
  void CopyToDeviceAsync(void* device_dst, const void* host_src, size_t bytes) override;
  void CopyToHostAsync(void* host_dst, const void* device_src, size_t bytes) override;
  void WaitForCopies() override {}
  void ComputeWaitsForCopies() override {}
  bool host_addressable() const override { return true; }

  size_t allocated_bytes() const { return allocated_; }
  size_t peak_allocated_bytes() const { return peak_allocated_; }
  const std::vector<Copy>& copies() const { return copies_; }
  void clear_copies() { copies_.clear(); }

 private:
  // Checks that [ptr, ptr + bytes) lies inside one live allocation.
  void CheckLive(const void* ptr, size_t bytes) const;

  size_t capacity_;
  size_t allocated_ = 0;
  size_t peak_allocated_ = 0;
  std::map<uintptr_t, size_t> live_;  // start address -> size
  std::vector<Copy> copies_;
};

}  // namespace lms
}  // namespace caffe

#endif  // CAFFE_LMS_DEVICE_HPP_
