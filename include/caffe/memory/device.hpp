// The device side of Large Model Support (docs/LMS.md): what the LMS memory manager needs from a
// device (raw allocation, copies on a copy stream, pinned host memory), and a host-backed fake
// device with a capacity that tests (and anyone without a GPU) use in place of a real one. The
// CUDA device (cuda_device.hpp) is the thin real implementation.
#ifndef CAFFE_MEMORY_DEVICE_HPP_
#define CAFFE_MEMORY_DEVICE_HPP_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace caffe {

/// A device's memory and copy engine. Copies run in issue order on one copy stream; a copy to
/// the device is ordered after all compute work issued before it (so memory just freed by the
/// compute side may be refilled), a copy to the host likewise. Each copy returns a ticket, its
/// number in issue order: since copies finish in order, a ticket stands for its copy and every
/// copy before it, and 0 for none at all. Nothing here throws for being out of memory: Malloc
/// returns null and the caller (DeviceAllocator, MemoryManager) decides.
class Device {
 public:
  virtual ~Device() = default;
  /// "fake device (capacity 64 MiB)", "CUDA device 0 (NVIDIA H200)".
  virtual std::string name() const = 0;
  /// The bytes the device can hold at most (its memory size).
  virtual size_t capacity() const = 0;
  /// Device memory, or null when the device has none left.
  virtual void* Malloc(size_t bytes) = 0;
  /// Returns device memory; no copy issued so far may still use it (see WaitForCopy).
  virtual void Free(void* ptr) = 0;
  /// Fills device memory with zeros, ordered like compute work.
  virtual void Zero(void* ptr, size_t bytes) = 0;
  /// Device memory whose old contents nobody may read (it is about to be overwritten whole):
  /// the fake device poisons it, so a reader shows; a real device leaves it unless asked to
  /// poison too (Options::poison_overwritten).
  virtual void Scribble(void* ptr, size_t bytes) {}
  /// Host memory for a buffer's home: pinned (page-locked) where the device can copy from it
  /// asynchronously, in which case `pinned` is set and the memory must be freed with
  /// CaffeFreeHost(ptr, true).
  virtual void HostAlloc(void** ptr, size_t bytes, bool* pinned) = 0;
  /// Issue a copy on the copy stream and return its ticket.
  virtual uint64_t CopyToDeviceAsync(void* device_dst, const void* host_src, size_t bytes) = 0;
  virtual uint64_t CopyToHostAsync(void* host_dst, const void* device_src, size_t bytes) = 0;
  /// Whether copy `ticket` has finished; never blocks.
  virtual bool CopyDone(uint64_t ticket) = 0;
  /// Blocks the calling thread until copy `ticket` has finished.
  virtual void WaitForCopy(uint64_t ticket) = 0;
  /// Compute work issued from now on starts after copy `ticket` has finished (no host wait).
  virtual void ComputeWaitsForCopy(uint64_t ticket) = 0;
  /// True when device pointers are ordinary host addresses (the fake device), so CPU code may
  /// run on device copies.
  virtual bool host_addressable() const { return false; }

  /// A copy that has finished, and when it ran on the copy engine (the host's steady clock).
  struct TimedCopy {
    bool to_device = false;
    size_t bytes = 0;
    std::chrono::steady_clock::time_point start, end;
  };
  /// Whether the copies issued from now on are timed for TakeTimedCopies (on while the timeline
  /// records: a real device then records an event before and after each copy). Off by default.
  virtual void set_copy_timing(bool on) { copy_timing_ = on; }
  bool copy_timing() const { return copy_timing_; }
  /// The timed copies that have finished since the last call, in issue order; never blocks.
  virtual std::vector<TimedCopy> TakeTimedCopies() { return {}; }

  /// The ticket of the copy issued last (0: none yet).
  uint64_t last_ticket() const { return issued_; }
  /// Blocks the calling thread until every copy issued so far has finished.
  void WaitForCopies() { WaitForCopy(issued_); }
  /// Compute work issued from now on starts after the copies issued so far.
  void ComputeWaitsForCopies() { ComputeWaitsForCopy(issued_); }

 protected:
  /// The ticket of a copy being issued.
  uint64_t NextTicket() { return ++issued_; }
  bool copy_timing_ = false;

 private:
  uint64_t issued_ = 0;
};

/// A device whose memory is host memory, with a capacity: a real allocator with Device's
/// interface, for tests and CPU-only runs. Fresh and freed memory is filled with a poison byte,
/// so reading memory that was never copied in gives garbage rather than plausible values, and a
/// copy that touches memory outside a live allocation is a bug that stops the program. Copies are
/// recorded in issue order, so tests can check what moved when.
///
/// Copies are synchronous unless `deferred_copies` is set: then a copy only runs when something
/// must see it done (WaitForCopy, ComputeWaitsForCopy: host code run on device copies is this
/// device's compute, and it runs at once), as late as a real copy stream may run it. A caller
/// that reads a home before waiting for the copy into it, or lets compute write device memory a
/// pending copy still reads, then sees the wrong values, which tests catch.
class FakeDevice : public Device {
 public:
  static constexpr unsigned char kPoison = 0xA5;

  /// One recorded copy: its direction, the device address and the size.
  struct Copy {
    bool to_device = false;
    const void* device = nullptr;
    size_t bytes = 0;
  };

  explicit FakeDevice(size_t capacity, bool deferred_copies = false);
  ~FakeDevice() override;

  std::string name() const override;
  size_t capacity() const override { return capacity_; }
  void* Malloc(size_t bytes) override;
  void Free(void* ptr) override;
  void Zero(void* ptr, size_t bytes) override;
  void Scribble(void* ptr, size_t bytes) override;
  void HostAlloc(void** ptr, size_t bytes, bool* pinned) override;
  uint64_t CopyToDeviceAsync(void* device_dst, const void* host_src, size_t bytes) override;
  uint64_t CopyToHostAsync(void* host_dst, const void* device_src, size_t bytes) override;
  bool CopyDone(uint64_t ticket) override { return ticket <= done_; }
  void WaitForCopy(uint64_t ticket) override { RunCopies(ticket); }
  void ComputeWaitsForCopy(uint64_t ticket) override { RunCopies(ticket); }
  bool host_addressable() const override { return true; }
  /// Each copy's memcpy, timed on the host.
  std::vector<TimedCopy> TakeTimedCopies() override;

  size_t allocated_bytes() const { return allocated_; }
  size_t peak_allocated_bytes() const { return peak_allocated_; }
  const std::vector<Copy>& copies() const { return copies_; }
  void clear_copies() { copies_.clear(); }
  /// Copies issued but not run yet (deferred mode only).
  size_t pending_copies() const { return queue_.size(); }

 private:
  struct Pending {
    void* dst;
    const void* src;
    size_t bytes;
    bool to_device;
    uint64_t ticket;
    // The copy's end in device memory.
    const void* device_side() const { return to_device ? dst : src; }
  };
  // Checks that [ptr, ptr + bytes) lies inside one live allocation.
  void CheckLive(const void* ptr, size_t bytes) const;
  uint64_t Issue(const Pending& copy);
  void Run(const Pending& copy);
  // Runs the queued copies up to `ticket`, in order.
  void RunCopies(uint64_t ticket);

  size_t capacity_;
  bool deferred_;
  size_t allocated_ = 0;
  size_t peak_allocated_ = 0;
  std::map<uintptr_t, size_t> live_;  // start address -> size
  std::vector<Copy> copies_;
  std::deque<Pending> queue_;
  uint64_t done_ = 0;
  std::vector<TimedCopy> timed_;
};

}  // namespace caffe

#endif  // CAFFE_MEMORY_DEVICE_HPP_
