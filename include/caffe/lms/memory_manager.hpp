// Large Model Support's memory manager (docs/LMS.md). Once a manager is installed on a thread,
// every SyncedMemory that thread moves to the device gets a Block: its device copy comes from the
// manager's DeviceAllocator (within the budget) and, when the buffer is LMS-managed (at least the
// -lms threshold), may be dropped again: swapped out (copied home) when the device copy is newer,
// simply freed when it is clean. The host side is the home; nothing is ever lost, because a block
// whose device copy is gone is fetched again on its next device access.
//
// The SyncedMemory head is the dirty bit: HEAD_AT_GPU means the device copy is newer than home.
// Copies never make the host wait unless it needs their result: a swap-in makes later compute
// wait for it on the device, and a swap-out frees its device memory at once (compute that gets
// that memory again is ordered after the copy) while host reads of the home wait for it.
// Eviction picks the least recently used managed block that no running layer holds: a block is
// held while pinned (the planner pins a step's declared buffers) and, until the step ends, once
// its device pointer has been handed out (the layer's kernels may still use it); outside steps
// the last kHeldOutsideSteps buffers handed out are held.
#ifndef CAFFE_LMS_MEMORY_MANAGER_HPP_
#define CAFFE_LMS_MEMORY_MANAGER_HPP_

#include <algorithm>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "caffe/memory/device.hpp"
#include "caffe/memory/device_allocator.hpp"
#include "caffe/memory/device_memory_policy.hpp"
#include "caffe/memory/memory_use.hpp"
#include "caffe/memory/syncedmem.hpp"

namespace caffe {
namespace lms {

class MemoryManager;

/// Settings of one manager (the -lms, -lms_frac, -gpu_mem_limit and -lms_prefetch flags).
struct Options {
  /// Buffers of at least this many KB are LMS-managed; -1: none (LMS off, budget still
  /// enforced); 0: every buffer.
  int64_t threshold_kb = -1;
  /// LMS stays dormant (no swap-out after last use) until more than this fraction of the budget
  /// is in use. Eviction when an allocation does not fit happens regardless.
  double frac = 0.0;
  /// Bytes of device memory the framework may hold; 0: the device's capacity.
  size_t budget = 0;
  /// How many steps ahead the planner issues swap-ins.
  int prefetch_depth = 1;
  /// Memory given to a buffer a step overwrites is filled with NaN bytes first, so that a layer
  /// that declares an overwrite but reads old values shows (tests; on a GPU it costs a memset).
  bool poison_overwritten = false;
};

/// What moved and what it cost; the numbers users tune -lms and -lms_frac with.
struct Stats {
  uint64_t bytes_in = 0;       // host to device
  uint64_t bytes_out = 0;      // device to host (dirty blocks only)
  uint64_t swaps_in = 0;       // blocks copied in
  uint64_t swaps_out = 0;      // blocks copied home
  uint64_t prefetches = 0;     // swap-ins issued ahead by the planner
  uint64_t clean_drops = 0;    // device copies freed without a copy (home current, or scratch)
  uint64_t evictions = 0;      // blocks dropped because an allocation did not fit
  uint64_t overwrites = 0;     // copies in skipped: the step overwrites the buffer whole
  uint64_t undeclared = 0;     // device accesses a planned step made to buffers it did not declare
  double stall_seconds = 0.0;  // host time waiting for transfers the plan did not hide
};

/// The manager's record of one SyncedMemory's device side. Owned by the SyncedMemory; created on
/// its first device access under an installed manager (MemoryManager::Attach).
class Block : public DeviceSide {
 public:
  ~Block() override;

  void ToDevice() override { ToDevice(false); }
  /// Makes the device copy current (allocating, evicting others if needed, copying in); compute
  /// issued afterwards sees it. `overwrite`: the caller writes every element before reading any,
  /// so old values at home are not copied in (the device copy becomes the newer one).
  void ToDevice(bool overwrite);
  /// Copies a newer device copy home (the head becomes SYNCED) and waits for it.
  void CopyToHost() override;
  /// Before the host reads or writes the home: waits for a swap-out still copying into it. (A
  /// copy in still reading it may go on: a host write moves the head home, so it is copied again.)
  void WaitForHome() override {
    if (home_ticket_ != 0) WaitForCopiesUpTo(home_ticket_);
  }
  /// Before the home is freed: waits for every copy still using it, in or out.
  void WaitBeforeFreeingHome() override {
    if (home_ticket_ != 0 || copy_in_ticket_ != 0) {
      WaitForCopiesUpTo(std::max(home_ticket_, copy_in_ticket_));
    }
  }

  size_t bytes() const;
  /// Whether LMS may drop this block's device copy (its size reaches the threshold).
  bool managed() const { return managed_; }
  bool resident() const { return device_ != nullptr; }
  /// The device copy's address (null when not resident), without touching the block.
  const void* device_ptr() const { return device_; }
  /// The device copy is newer than home.
  bool dirty() const;
  SyncedMemory* memory() const { return memory_; }
  MemoryManager* manager() const { return manager_.get(); }

 private:
  friend class MemoryManager;
  friend class HostView;
  Block(SyncedMemory* memory, std::shared_ptr<MemoryManager> manager, bool managed);
  // Device memory for the block; compute issued afterwards may write it.
  void Allocate();
  // Issues the copy in from home (the host does not wait).
  void SwapIn();
  // Drops the device copy, issuing its copy home first when it is dirty and not `discard`ed.
  void Evict(bool discard = false);
  // The host waits (stalls) until copy `ticket` and those before it have finished.
  void WaitForCopiesUpTo(uint64_t ticket);
  void EnsureHome();
  // Moves a home the host allocated before the block existed (a filler's weights, an input the
  // user wrote) to pinned memory: a copy from or to pageable memory makes the host wait.
  void PinHome();
  // HostView's access to the SyncedMemory.
  static void* BeginHostView(SyncedMemory* memory, unsigned access, void** saved_ptr,
                             bool* saved_own, bool* saved_pinned, int* saved_head);
  static void EndHostView(SyncedMemory* memory, unsigned access, void* saved_ptr, bool saved_own,
                          bool saved_pinned, int saved_head);

  SyncedMemory* memory_;
  std::shared_ptr<MemoryManager> manager_;
  bool managed_;
  void* device_ = nullptr;
  uint64_t copy_in_ticket_ = 0;  // a copy to the device compute has not been ordered after yet
  uint64_t home_ticket_ = 0;     // a copy home the host has not waited for yet
  int pins_ = 0;
  uint64_t handout_epoch_ = 0;   // the step in which its device pointer was last handed out
  uint64_t handout_serial_ = 0;  // and the number of that handout
  std::list<Block*>::iterator lru_position_;
};

/// The LMS block of `memory`, or null where no manager owns its device side.
Block* BlockOf(const SyncedMemory& memory);

/// Large Model Support as a device memory policy (memory/device_memory_policy.hpp).
class MemoryManager : public DeviceMemoryPolicy,
                      public std::enable_shared_from_this<MemoryManager> {
 public:
  /// Outside layer steps, how many of the buffers handed out last stay held.
  static constexpr uint64_t kHeldOutsideSteps = 3;

  MemoryManager(std::unique_ptr<Device> device, const Options& options);
  ~MemoryManager() override;

  /// Makes `manager` the calling thread's device memory policy (null: none). Buffers that
  /// already have a block keep theirs.
  static void Install(std::shared_ptr<MemoryManager> manager);
  /// The calling thread's manager, or null (also where another policy is installed).
  static std::shared_ptr<MemoryManager> Current();

  /// DeviceMemoryPolicy: a block of this manager for `memory`.
  DeviceSide* Attach(SyncedMemory* memory) override;

  const Options& options() const { return options_; }
  bool lms_enabled() const { return options_.threshold_kb >= 0; }
  /// Whether a buffer of `bytes` is LMS-managed.
  bool Manages(size_t bytes) const;
  /// Whether more than -lms_frac of the budget is in use (swap-outs after last use happen only
  /// then).
  bool awake() const;

  /// Brackets one layer's pass: device pointers handed out in between stay on the device until
  /// EndStep. `label` names the step in out-of-memory errors ("layer 'conv1' forward").
  /// `planned`: the step declared its buffers (and pinned them), so a device access to another
  /// LMS-managed buffer is a gap in the layer's declaration: counted, and warned about once per
  /// step, as that buffer is then swapped on demand.
  void BeginStep(const std::string& label, bool planned = false);
  void EndStep();
  /// A pinned block is never evicted (the planner pins a step's buffers while it runs).
  void Pin(SyncedMemory* memory);
  void Unpin(SyncedMemory* memory);
  /// Pins a buffer the step declares and makes its device copy current now, as a device access
  /// would; `overwrite` as in Block::ToDevice. Unpin it when the step ends.
  void PinResident(SyncedMemory* memory, bool overwrite = false);
  /// Starts copying a buffer in ahead of its use when its device copy is missing and it fits
  /// without evicting anything; returns whether a copy was issued.
  bool Prefetch(SyncedMemory* memory);
  /// After a buffer's last use in a pass: drops its device copy (copying it home first if dirty,
  /// unless `discard`: scratch whose values are dead) when it is LMS-managed, unpinned and LMS is
  /// awake; returns whether it was dropped.
  bool Release(SyncedMemory* memory, bool discard = false);
  /// Drops every LMS-managed device copy that is not held (copying dirty ones home).
  void ReleaseAll();
  /// Device memory outside any buffer (cuDNN's workspace) from this manager's allocator, so the
  /// budget counts it; unheld LMS-managed copies are evicted to make room. Throws the
  /// out-of-memory error, naming `what`, when nothing more can be evicted.
  void* AllocateScratch(size_t bytes, const std::string& what) override;
  /// As AllocateScratch, but null instead of the error (for callers with a smaller fallback).
  void* TryAllocateScratch(size_t bytes) override;
  void FreeScratch(void* ptr) override { allocator_.Free(ptr); }

  const Stats& stats() const { return stats_; }
  void ResetStats() { stats_ = Stats(); }
  Device* device() const { return device_.get(); }
  DeviceAllocator& allocator() { return allocator_; }
  const DeviceAllocator& allocator() const { return allocator_; }
  /// The prefetches issued so far, in order (recorded only when asked, for tests).
  void set_record_prefetches(bool value) { record_prefetches_ = value; }
  const std::vector<const SyncedMemory*>& prefetch_log() const { return prefetch_log_; }
  /// The planned steps that used LMS-managed buffers they did not declare: label -> their sizes.
  const std::map<std::string, std::set<size_t>>& undeclared_uses() const {
    return undeclared_uses_;
  }
  /// Blocks (and their bytes) attached to this manager, and of those the LMS-managed ones.
  size_t num_blocks() const { return lru_.size(); }
  size_t managed_bytes() const;
  size_t num_managed_blocks() const;

  /// "[LMS] threshold ... budget ..." (the setup line).
  std::string SettingsLine() const;
  /// "[LMS] swapped in ... out ... stalled ... peak ..." (the end-of-run line).
  std::string StatsLine() const;

 private:
  friend class Block;
  void Register(Block* block);
  void Unregister(Block* block);
  void Touch(Block* block);
  bool Held(const Block* block) const;
  // A device access to `block`, unpinned, in a planned step (see BeginStep).
  void NoteUndeclared(const Block* block);
  // `bytes` of device memory, evicting least-recently-used blocks other than `exclude` (may be
  // null) as needed; `*ticket` is the copy that may still use the memory (see
  // DeviceAllocator::Allocate). Throws an out-of-memory caffe::Error naming the step and `what`
  // when nothing more can be evicted.
  void* AllocateEvicting(size_t bytes, const Block* exclude, const std::string& what,
                         uint64_t* ticket);
  // The same, null when nothing more can be evicted. Evicts nothing when the budget could not
  // give `bytes` even with every evictable block gone.
  void* TryAllocateEvicting(size_t bytes, const Block* exclude, uint64_t* ticket);
  // Whether `block` may be evicted now to make room (for anything but `exclude`).
  bool Evictable(const Block* block, const Block* exclude) const;
  // Gives `memory` a block of this manager unless it has a device side already; its block, or
  // null.
  Block* BlockFor(SyncedMemory* memory);
  // Before a copy is issued: the device times copies exactly while the timeline records.
  void FollowTimeline();
  // The copies the device timed that have finished go on the timeline's copy track, with the
  // device memory in use while it records (docs/TIMELINE.md).
  void RecordCopies();

  std::unique_ptr<Device> device_;
  Options options_;
  DeviceAllocator allocator_;
  Stats stats_;
  std::list<Block*> lru_;  // least recently used first
  uint64_t epoch_ = 1;
  uint64_t serial_ = 0;
  bool in_step_ = false;
  bool step_planned_ = false;
  std::string step_label_;
  std::map<std::string, std::set<size_t>> undeclared_uses_;
  bool record_prefetches_ = false;
  std::vector<const SyncedMemory*> prefetch_log_;
  int copy_track_ = -1;  // the timeline's track of this device's copies, once it has one
};

/// Runs host code on a buffer's device copy, for host-addressable devices (the fake device):
/// while it lives, the buffer's cpu_data()/mutable_cpu_data() are the device copy, made current
/// first (and marked newer than home when `access` includes kWrite). Tests run the CPU kernels
/// of a net this way to check that a swap schedule keeps every value.
class HostView {
 public:
  HostView(SyncedMemory* memory, unsigned access);
  ~HostView();

 private:
  SyncedMemory* memory_;
  unsigned access_;
  void* saved_ptr_ = nullptr;
  bool saved_own_ = false;
  bool saved_pinned_ = false;
  int saved_head_ = 0;

  HostView(const HostView&) = delete;
  HostView& operator=(const HostView&) = delete;
};

}  // namespace lms
}  // namespace caffe

#endif  // CAFFE_LMS_MEMORY_MANAGER_HPP_
