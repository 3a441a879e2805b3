#include "caffe/lms/memory_manager.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <sstream>

#include "caffe/common.hpp"
#include "caffe/timeline/timeline.hpp"

namespace caffe {
namespace lms {

namespace {

// Times a host wait and adds it to the stall counter.
class StallTimer {
 public:
  explicit StallTimer(double* total) : total_(total), start_(std::chrono::steady_clock::now()) {}
  ~StallTimer() {
    *total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  double* total_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

// ---- Block ------------------------------------------------------------------------------------

Block::Block(SyncedMemory* memory, std::shared_ptr<MemoryManager> manager, bool managed)
    : memory_(memory), manager_(std::move(manager)), managed_(managed) {
  manager_->Register(this);
  if (managed_) PinHome();  // a managed block crosses often; others cross once
}

Block::~Block() {
  WaitBeforeFreeingHome();  // the SyncedMemory frees its home next
  if (device_ != nullptr) manager_->allocator_.Free(device_);
  manager_->Unregister(this);
}

Block* BlockOf(const SyncedMemory& memory) { return dynamic_cast<Block*>(memory.device_side()); }

size_t Block::bytes() const { return memory_->size(); }

bool Block::dirty() const { return Head(memory_) == SyncedMemory::HEAD_AT_GPU; }

void Block::Allocate() {
  // Memory whose swap-out is still copying from it: compute must not write it before that ends.
  device_ = manager_->AllocateEvicting(bytes(), this, "a buffer", &copy_in_ticket_);
  DevicePtr(memory_) = device_;
}

void Block::EnsureHome() {
  if (HostPtr(memory_) != nullptr) return;
  bool pinned = false;
  manager_->device_->HostAlloc(&HostPtr(memory_), memory_->size(), &pinned);
  HostPinned(memory_) = pinned;
  OwnsHost(memory_) = true;
}

void Block::PinHome() {
  // Only the SyncedMemory's own home: memory set from outside (set_cpu_data) stays where it is.
  if (HostPtr(memory_) == nullptr || !OwnsHost(memory_) || HostPinned(memory_)) {
    return;
  }
  void* home = nullptr;
  bool pinned = false;
  manager_->device_->HostAlloc(&home, memory_->size(), &pinned);
  if (!pinned) {  // no page-locked memory to be had: the pageable home stays
    CaffeFreeHost(home, false);
    return;
  }
  // No copy uses the old home yet: the block is new, and the memory has no device side.
  std::memcpy(home, HostPtr(memory_), memory_->size());
  CaffeFreeHost(HostPtr(memory_), false);
  HostPtr(memory_) = home;
  HostPinned(memory_) = true;
}

void Block::SwapIn() {
  if (device_ == nullptr) Allocate();
  manager_->FollowTimeline();
  // Later than any copy still using the memory: the copy stream runs in order.
  copy_in_ticket_ =
      manager_->device_->CopyToDeviceAsync(device_, HostPtr(memory_), memory_->size());
  manager_->stats_.bytes_in += memory_->size();
  ++manager_->stats_.swaps_in;
  Head(memory_) = SyncedMemory::SYNCED;
}

void Block::ToDevice(bool overwrite) {
  const SyncedMemory::SyncedHead head = Head(memory_);
  const bool skip_copy_in = overwrite && head == SyncedMemory::HEAD_AT_CPU;
  if ((head == SyncedMemory::UNINITIALIZED || skip_copy_in) && device_ == nullptr) Allocate();
  if (head == SyncedMemory::HEAD_AT_CPU && !skip_copy_in) SwapIn();
  // Compute issued from now on runs after the copy in (or a prefetch still running), and after
  // a swap-out still reading memory this block was given.
  if (copy_in_ticket_ != 0) {
    manager_->device_->ComputeWaitsForCopy(copy_in_ticket_);
    copy_in_ticket_ = 0;
  }
  if (head == SyncedMemory::UNINITIALIZED) {
    manager_->device_->Zero(device_, memory_->size());
    Head(memory_) = SyncedMemory::HEAD_AT_GPU;
  } else if (skip_copy_in) {
    manager_->device_->Scribble(device_, memory_->size());
    Head(memory_) = SyncedMemory::HEAD_AT_GPU;
    ++manager_->stats_.overwrites;
  }
  if (pins_ == 0 && managed_ && manager_->step_planned_) manager_->NoteUndeclared(this);
  manager_->Touch(this);
  handout_epoch_ = manager_->epoch_;
  handout_serial_ = ++manager_->serial_;
}

void Block::CopyToHost() {
  if (Head(memory_) != SyncedMemory::HEAD_AT_GPU) return;
  EnsureHome();
  manager_->FollowTimeline();
  WaitForCopiesUpTo(manager_->device_->CopyToHostAsync(HostPtr(memory_), device_, memory_->size()));
  manager_->stats_.bytes_out += memory_->size();
  ++manager_->stats_.swaps_out;
  Head(memory_) = SyncedMemory::SYNCED;
}

void Block::WaitForCopiesUpTo(uint64_t ticket) {
  if (!manager_->device_->CopyDone(ticket)) {
    StallTimer timer(&manager_->stats_.stall_seconds);
    timeline::Slice stall(
        "lms", timeline::Recording()
                   ? "LMS stall, " + (manager_->step_label_.empty() ? std::string("outside a layer")
                                                                    : manager_->step_label_)
                   : std::string());
    manager_->device_->WaitForCopy(ticket);
  }
  // Copies finish in order: every one up to `ticket` has.
  if (home_ticket_ <= ticket) home_ticket_ = 0;
  if (copy_in_ticket_ <= ticket) copy_in_ticket_ = 0;
}

void Block::Evict(bool discard) {
  if (device_ == nullptr) return;
  uint64_t last_copy = copy_in_ticket_;
  if (dirty() && !discard) {
    // The copy home runs after the compute issued so far; the host goes on. The memory is free
    // at once: a copy in reusing it queues behind this one, compute waits for it (Allocate).
    EnsureHome();
    manager_->FollowTimeline();
    last_copy = manager_->device_->CopyToHostAsync(HostPtr(memory_), device_, memory_->size());
    home_ticket_ = last_copy;
    manager_->stats_.bytes_out += memory_->size();
    ++manager_->stats_.swaps_out;
  } else if (Head(memory_) != SyncedMemory::HEAD_AT_CPU) {
    ++manager_->stats_.clean_drops;
  }
  manager_->allocator_.Free(device_, last_copy);
  device_ = nullptr;
  copy_in_ticket_ = 0;
  DevicePtr(memory_) = nullptr;
  // The home is current now, or will be once its copy lands (or the device copy was stale:
  // HEAD_AT_CPU already). Discarded scratch keeps whatever its home holds; one that never had a
  // home starts afresh.
  Head(memory_) =
      HostPtr(memory_) != nullptr ? SyncedMemory::HEAD_AT_CPU : SyncedMemory::UNINITIALIZED;
}

void* Block::BeginHostView(SyncedMemory* memory, unsigned access, void** saved_ptr, bool* saved_own,
                           bool* saved_pinned, int* saved_head) {
  void* device =
      (access & kWrite) ? memory->mutable_gpu_data() : const_cast<void*>(memory->gpu_data());
  const Block* block = BlockOf(*memory);
  CHECK(block != nullptr && block->manager()->device()->host_addressable())
      << "HostView needs a buffer on a host-addressable LMS device";
  *saved_ptr = HostPtr(memory);
  *saved_own = OwnsHost(memory);
  *saved_pinned = HostPinned(memory);
  *saved_head = Head(memory);
  HostPtr(memory) = device;
  OwnsHost(memory) = false;
  Head(memory) = SyncedMemory::SYNCED;  // host code reads and writes in place
  return device;
}

void Block::EndHostView(SyncedMemory* memory, unsigned access, void* saved_ptr, bool saved_own,
                        bool saved_pinned, int saved_head) {
  HostPtr(memory) = saved_ptr;
  OwnsHost(memory) = saved_own;
  HostPinned(memory) = saved_pinned;
  Head(memory) = (access & kWrite) ? SyncedMemory::HEAD_AT_GPU
                                   : static_cast<SyncedMemory::SyncedHead>(saved_head);
}

HostView::HostView(SyncedMemory* memory, unsigned access) : memory_(memory), access_(access) {
  Block::BeginHostView(memory, access, &saved_ptr_, &saved_own_, &saved_pinned_, &saved_head_);
}

HostView::~HostView() {
  Block::EndHostView(memory_, access_, saved_ptr_, saved_own_, saved_pinned_, saved_head_);
}

// ---- MemoryManager ----------------------------------------------------------------------------

MemoryManager::MemoryManager(std::unique_ptr<Device> device, const Options& options)
    : device_(std::move(device)), options_(options), allocator_(device_.get(), options.budget) {}

MemoryManager::~MemoryManager() {
  // Blocks hold the manager alive, so none is left here.
  CHECK(lru_.empty()) << lru_.size() << " LMS blocks outlive their manager";
  device_->WaitForCopies();  // the last copies of a recording, onto the timeline
  RecordCopies();
}

void MemoryManager::FollowTimeline() {
  const bool recording = timeline::Recording();
  if (recording != device_->copy_timing()) device_->set_copy_timing(recording);
}

void MemoryManager::RecordCopies() {
  FollowTimeline();
  if (timeline::Recording()) {
    timeline::Counter("device memory in use (MB)", allocator_.in_use() / 1048576.0);
  }
  // Copies issued while recording are placed even after it stopped, as long as the file is open.
  for (const Device::TimedCopy& copy : device_->TakeTimedCopies()) {
    if (copy_track_ < 0) copy_track_ = timeline::Track("LMS copies, " + device_->name());
    const double start = timeline::At(copy.start);
    const double duration = timeline::At(copy.end) - start;
    timeline::Complete(copy_track_, "copy", copy.to_device ? "swap in" : "swap out", start,
                       duration, "bytes", static_cast<double>(copy.bytes), "GB/s",
                       duration > 0 ? copy.bytes / duration / 1e3 : 0.0);
  }
}

void MemoryManager::Install(std::shared_ptr<MemoryManager> manager) {
  DeviceMemoryPolicy::Install(std::move(manager));
}

std::shared_ptr<MemoryManager> MemoryManager::Current() {
  return std::dynamic_pointer_cast<MemoryManager>(DeviceMemoryPolicy::Current());
}

DeviceSide* MemoryManager::Attach(SyncedMemory* memory) {
  return new Block(memory, shared_from_this(), Manages(memory->size()));
}

Block* MemoryManager::BlockFor(SyncedMemory* memory) {
  if (memory->device_side() == nullptr && memory->device_ptr() == nullptr) {
    DeviceSide::Adopt(memory, Attach(memory));
  }
  return BlockOf(*memory);
}

bool MemoryManager::Manages(size_t bytes) const {
  return options_.threshold_kb >= 0 &&
         bytes >= static_cast<uint64_t>(options_.threshold_kb) * 1024u;
}

bool MemoryManager::awake() const {
  return lms_enabled() &&
         static_cast<double>(allocator_.in_use()) > options_.frac * allocator_.budget();
}

void MemoryManager::BeginStep(const std::string& label, bool planned) {
  RecordCopies();
  step_label_ = label;
  in_step_ = true;
  step_planned_ = planned;
  ++epoch_;
}

void MemoryManager::EndStep() {
  RecordCopies();
  step_label_.clear();
  in_step_ = false;
  step_planned_ = false;
  ++epoch_;
}

void MemoryManager::NoteUndeclared(const Block* block) {
  ++stats_.undeclared;
  const bool first_in_step = undeclared_uses_.count(step_label_) == 0;
  undeclared_uses_[step_label_].insert(block->bytes());
  if (first_in_step) {
    LOG(WARNING) << "[LMS] " << step_label_ << " uses a buffer of " << block->bytes()
                 << " bytes that its layer does not declare; it is swapped on demand, without "
                    "prefetch or release after its last use";
  }
}

void MemoryManager::Pin(SyncedMemory* memory) {
  if (Block* block = BlockOf(*memory)) ++block->pins_;
}

void MemoryManager::Unpin(SyncedMemory* memory) {
  Block* block = BlockOf(*memory);
  if (block != nullptr && block->pins_ > 0) --block->pins_;
}

void MemoryManager::PinResident(SyncedMemory* memory, bool overwrite) {
  Block* block = BlockFor(memory);
  if (block == nullptr) return;
  ++block->pins_;
  block->ToDevice(overwrite);
}

bool MemoryManager::Prefetch(SyncedMemory* memory) {
  if (memory->head() != SyncedMemory::HEAD_AT_CPU) return false;  // nothing to copy, or resident
  Block* block = BlockFor(memory);
  if (block == nullptr) return false;
  if (block->manager() != this || block->device_ != nullptr || !allocator_.Fits(memory->size())) {
    return false;
  }
  block->SwapIn();
  ++stats_.prefetches;
  Touch(block);
  if (record_prefetches_) prefetch_log_.push_back(memory);
  return true;
}

bool MemoryManager::Release(SyncedMemory* memory, bool discard) {
  Block* block = BlockOf(*memory);
  if (block == nullptr || !block->managed_ || !block->resident() || block->pins_ > 0 || !awake()) {
    return false;
  }
  block->Evict(discard);
  return true;
}

void MemoryManager::ReleaseAll() {
  for (Block* block : lru_) {
    if (block->managed_ && block->resident() && !Held(block)) block->Evict();
  }
}

size_t MemoryManager::managed_bytes() const {
  size_t bytes = 0;
  for (const Block* block : lru_) bytes += block->managed_ ? block->bytes() : 0;
  return bytes;
}

size_t MemoryManager::num_managed_blocks() const {
  size_t count = 0;
  for (const Block* block : lru_) count += block->managed_ ? 1 : 0;
  return count;
}

void MemoryManager::Register(Block* block) {
  block->lru_position_ = lru_.insert(lru_.end(), block);
}

void MemoryManager::Unregister(Block* block) { lru_.erase(block->lru_position_); }

void MemoryManager::Touch(Block* block) { lru_.splice(lru_.end(), lru_, block->lru_position_); }

bool MemoryManager::Held(const Block* block) const {
  if (block->pins_ > 0) return true;
  if (block->handout_epoch_ != epoch_) return false;
  // Outside layer steps (a solver's update, a tool reading a blob) only the last few buffers
  // handed out are held: enough for one kernel's operands.
  return in_step_ || block->handout_serial_ + kHeldOutsideSteps > serial_;
}

void* MemoryManager::AllocateScratch(size_t bytes, const std::string& what) {
  uint64_t ticket = 0;
  void* ptr = AllocateEvicting(bytes, nullptr, what, &ticket);
  device_->ComputeWaitsForCopy(ticket);
  return ptr;
}

void* MemoryManager::TryAllocateScratch(size_t bytes) {
  uint64_t ticket = 0;
  void* ptr = TryAllocateEvicting(bytes, nullptr, &ticket);
  if (ptr != nullptr) device_->ComputeWaitsForCopy(ticket);
  return ptr;
}

bool MemoryManager::Evictable(const Block* block, const Block* exclude) const {
  return block != exclude && block->managed_ && block->resident() && !Held(block);
}

void* MemoryManager::TryAllocateEvicting(size_t bytes, const Block* exclude, uint64_t* ticket) {
  void* ptr = allocator_.Allocate(bytes, ticket);
  if (ptr != nullptr) return ptr;
  // Evicting copies dirty blocks home: not for an allocation that would not fit the budget with
  // every evictable block gone (cuDNN's leaner algorithms, or the error, come next).
  size_t evictable = 0;
  for (const Block* block : lru_) {
    if (Evictable(block, exclude)) evictable += DeviceAllocator::SizeClass(block->bytes());
  }
  const size_t kept = allocator_.in_use() - std::min(evictable, allocator_.in_use());
  if (kept + DeviceAllocator::SizeClass(bytes) > allocator_.budget()) return nullptr;
  for (;;) {
    Block* victim = nullptr;
    for (Block* candidate : lru_) {
      if (Evictable(candidate, exclude)) {
        victim = candidate;
        break;
      }
    }
    if (victim == nullptr) return nullptr;
    victim->Evict();
    ++stats_.evictions;
    ptr = allocator_.Allocate(bytes, ticket);
    if (ptr != nullptr) return ptr;
  }
}

void* MemoryManager::AllocateEvicting(size_t bytes, const Block* exclude, const std::string& what,
                                      uint64_t* ticket) {
  void* ptr = TryAllocateEvicting(bytes, exclude, ticket);
  if (ptr != nullptr) return ptr;
  // Where the memory in use is, in the allocator's size classes (so the parts add up).
  size_t held = 0, unmanaged = 0, evictable = 0, in_blocks = 0;
  for (const Block* other : lru_) {
    if (!other->resident()) continue;
    const size_t size = DeviceAllocator::SizeClass(other->bytes());
    in_blocks += size;
    if (Held(other)) {
      held += size;
    } else if (!other->managed_) {
      unmanaged += size;
    } else {
      evictable += size;
    }
  }
  const size_t in_use = allocator_.in_use();
  std::ostringstream parts;
  parts << held << " held by the running layer";
  if (lms_enabled()) {
    parts << ", " << unmanaged << " in buffers below the -lms threshold, " << evictable
          << " LMS could swap out";
  } else {
    parts << ", " << unmanaged + evictable << " in other buffers";
  }
  parts << ", " << in_use - std::min(in_blocks, in_use)
        << " in workspaces and scratch outside the blobs";
  CAFFE_THROW() << "out of device memory" << (step_label_.empty() ? "" : " in " + step_label_)
                << ": " << what << " of " << bytes << " bytes does not fit; the budget is "
                << allocator_.budget() << " bytes, " << in_use << " in use (" << parts.str()
                << (lms_enabled() ? ")" : "); -lms keeps large buffers in host memory") << " on "
                << device_->name();
}

std::string MemoryManager::SettingsLine() const {
  std::ostringstream line;
  line << "[LMS] ";
  if (options_.threshold_kb < 0) {
    line << "off (-lms -1): device memory within the budget only";
  } else {
    line << "threshold " << options_.threshold_kb << " KB (buffers of "
         << static_cast<uint64_t>(options_.threshold_kb) * 1024u
         << " bytes or more live in host memory), lms_frac " << options_.frac << ", prefetch depth "
         << options_.prefetch_depth;
  }
  line << "; budget " << allocator_.budget() << " bytes on " << device_->name();
  return line.str();
}

std::string MemoryManager::StatsLine() const {
  std::ostringstream line;
  line << "[LMS] swapped in " << stats_.bytes_in << " bytes (" << stats_.swaps_in << " blocks, "
       << stats_.prefetches << " prefetched), out " << stats_.bytes_out << " bytes ("
       << stats_.swaps_out << " blocks), " << stats_.clean_drops
       << " blocks dropped without a copy (clean or scratch), " << stats_.overwrites
       << " copies in skipped (overwritten whole), " << stats_.evictions << " evictions";
  if (stats_.undeclared > 0) line << ", " << stats_.undeclared << " undeclared uses";
  line << "; stalled " << stats_.stall_seconds * 1000.0 << " ms; peak device memory "
       << allocator_.peak_reserved() << " of " << allocator_.budget() << " bytes";
  return line.str();
}

}  // namespace lms
}  // namespace caffe
