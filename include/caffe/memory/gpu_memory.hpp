// Device memory for SyncedMemory (and other device buffers) in GPU builds: one caching
// allocator per GPU (DeviceAllocator over CudaDevice), shared by every thread that
// uses that GPU. Freed blocks are kept by size class and reused, so a net's buffers cost one
// cudaMalloc each for the whole run; an optional budget caps what Caffe holds on a GPU.
// Under Large Model Support the LMS memory manager allocates for its own blocks instead.
#ifndef CAFFE_MEMORY_GPU_MEMORY_HPP_
#define CAFFE_MEMORY_GPU_MEMORY_HPP_

#ifndef CPU_ONLY

#include <cstddef>
#include <string>

namespace caffe {

class GpuMemory {
 public:
  struct Usage {
    size_t in_use = 0;    // handed out (by size class)
    size_t reserved = 0;  // held from the GPU: in use plus cached
    size_t peak_in_use = 0;
    size_t budget = 0;  // 0: the whole GPU
  };
  /// `bytes` of memory on GPU `device`. Throws a caffe::Error saying how much was asked for,
  /// on which GPU, and what is in use, when neither the cache, the budget nor the GPU has it.
  static void* Allocate(size_t bytes, int device);
  /// As Allocate, but null instead of the error (for callers with a smaller fallback).
  static void* TryAllocate(size_t bytes, int device);
  /// Returns memory from Allocate (on the same device) to the cache.
  static void Free(void* ptr, int device);
  /// Caps what Caffe holds on `device` (0: no cap beyond the GPU's memory); applies to
  /// allocations from now on.
  static void SetBudget(int device, size_t bytes);
  /// Hands every cached block on `device` back to the GPU.
  static void ReleaseCache(int device);
  /// Memory a thread keeps only to reuse it (cuDNN's workspace): `release(device)` frees what the
  /// calling thread keeps on `device` and says whether it kept any. When an allocation does not
  /// fit, Allocate and TryAllocate call it and try once more, so kept scratch never causes an
  /// out-of-memory error. One hook; null: none.
  using ScratchRelease = bool (*)(int device);
  static void SetScratchRelease(ScratchRelease release);
  static Usage GetUsage(int device);
  /// "GPU 0: 1.2 GiB in use (peak 1.5 GiB), 1.6 GiB held".
  static std::string UsageLine(int device);
};

/// 1536 -> "1.5 KiB", 3 << 30 -> "3.0 GiB".
std::string HumanBytes(size_t bytes);

}  // namespace caffe

#endif  // CPU_ONLY
#endif  // CAFFE_MEMORY_GPU_MEMORY_HPP_
