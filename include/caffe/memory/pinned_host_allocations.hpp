// Pinned (page-locked) host memory for buffers that cross to a GPU every iteration.
#ifndef CAFFE_MEMORY_PINNED_HOST_ALLOCATIONS_HPP_
#define CAFFE_MEMORY_PINNED_HOST_ALLOCATIONS_HPP_

namespace caffe {

/// While one lives on a thread, CaffeMallocHost (syncedmem.hpp) on that thread allocates pinned
/// host memory in a GPU build, falling back to pageable memory where pinning fails (no GPU, or
/// the system's page-locked memory spent). For the buffers that cross to a GPU every iteration
/// (data layers' batches in GPU mode, LMS's homes): copies from pinned memory run at the link's
/// full speed and can be asynchronous. Scopes nest.
class PinnedHostAllocations {
 public:
  PinnedHostAllocations();
  ~PinnedHostAllocations();
  PinnedHostAllocations(const PinnedHostAllocations&) = delete;
  PinnedHostAllocations& operator=(const PinnedHostAllocations&) = delete;
};

}  // namespace caffe

#endif  // CAFFE_MEMORY_PINNED_HOST_ALLOCATIONS_HPP_
