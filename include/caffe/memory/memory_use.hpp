// What a layer declares about its memory: the buffers (SyncedMemory blocks) it reads and writes in
// one forward or backward pass. Large Model Support's planner (docs/LMS.md) turns these
// declarations into a swap schedule; nothing here allocates or copies memory.
#ifndef CAFFE_MEMORY_MEMORY_USE_HPP_
#define CAFFE_MEMORY_MEMORY_USE_HPP_

#include <vector>

#include "caffe/memory/syncedmem.hpp"

namespace caffe {

/// The two passes a layer takes part in.
enum class Pass { kForward, kBackward };

/// How a pass uses a buffer; a read-write use is kRead | kWrite. kOverwrite: the pass needs none
/// of the buffer's old values (it writes every element that it, or a later step, reads), so they
/// are not copied in for it. kScratch: overwritten, and its values are dead after the step (a
/// layer's scratch space), so they are not copied home either.
enum MemoryAccess : unsigned {
  kRead = 1u,
  kWrite = 2u,
  kReadWrite = 3u,
  kWhole = 4u,
  kOverwrite = 6u,
  kDead = 8u,
  kScratch = 14u,
};

/// Whether a use needs none of the buffer's old values (kOverwrite, kScratch).
inline bool Overwrites(unsigned access) { return (access & kWhole) != 0; }

/// One buffer and how the pass uses it.
struct MemoryUse {
  SyncedMemory* memory = nullptr;
  unsigned access = 0;
};

/// The buffers one pass of one layer uses, each once (repeated uses are merged by or-ing their
/// access, except that a use is whole, or dead, only when every use is), in the order first
/// declared.
class MemoryUses {
 public:
  /// Ignores a null buffer (a blob that was never shaped has none).
  void Add(SyncedMemory* memory, unsigned access) {
    if (memory == nullptr) return;
    for (MemoryUse& use : uses_) {
      if (use.memory == memory) {
        const unsigned both = kWhole | kDead;
        use.access = ((use.access | access) & ~both) | (use.access & access & both);
        return;
      }
    }
    uses_.push_back({memory, access});
  }
  /// A Blob's data or diff.
  template <typename BlobType>
  void AddData(const BlobType& blob, unsigned access) {
    Add(blob.data().get(), access);
  }
  template <typename BlobType>
  void AddDiff(const BlobType& blob, unsigned access) {
    Add(blob.diff().get(), access);
  }
  const std::vector<MemoryUse>& uses() const { return uses_; }
  bool empty() const { return uses_.empty(); }

 private:
  std::vector<MemoryUse> uses_;
};

}  // namespace caffe

#endif  // CAFFE_MEMORY_MEMORY_USE_HPP_
