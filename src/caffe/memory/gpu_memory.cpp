#include "caffe/memory/gpu_memory.hpp"

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <sstream>
#include <vector>

#include "caffe/common.hpp"
#include "caffe/memory/cuda_device.hpp"
#include "caffe/memory/device_allocator.hpp"

namespace caffe {

namespace {

// One GPU's allocator, made on first use. Threads of several solvers may share a GPU.
struct DeviceSlot {
  std::mutex mutex;
  std::unique_ptr<CudaDevice> device;
  std::unique_ptr<DeviceAllocator> allocator;
  size_t budget = 0;
};

// Never destroyed: SyncedMemory in static storage may free after other statics are gone, and
// the CUDA context's teardown returns the memory at exit anyway.
std::vector<std::unique_ptr<DeviceSlot>>& Slots() {
  static auto* slots = [] {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
    auto* made = new std::vector<std::unique_ptr<DeviceSlot>>();
    for (int i = 0; i < count; ++i) made->push_back(std::make_unique<DeviceSlot>());
    return made;
  }();
  return *slots;
}

DeviceSlot& Slot(int device) {
  std::vector<std::unique_ptr<DeviceSlot>>& slots = Slots();
  CAFFE_CHECK(device >= 0 && device < static_cast<int>(slots.size()))
      << "GPU " << device << " does not exist; this machine has " << slots.size() << " visible";
  return *slots[device];
}

// The allocator of `slot`, made on `device` (whose CUDA context becomes current) if need be.
DeviceAllocator& AllocatorOf(DeviceSlot& slot, int device) {
  if (!slot.allocator) {
    int current = -1;
    CUDA_CHECK(cudaGetDevice(&current));
    slot.device = std::make_unique<CudaDevice>(device);
    slot.allocator = std::make_unique<DeviceAllocator>(slot.device.get(), slot.budget);
    if (current != device) CUDA_CHECK(cudaSetDevice(current));
  }
  return *slot.allocator;
}

std::atomic<GpuMemory::ScratchRelease> scratch_release{nullptr};

// Allocate under the slot's lock.
void* AllocateOnce(size_t bytes, int device) {
  DeviceSlot& slot = Slot(device);
  std::lock_guard<std::mutex> lock(slot.mutex);
  return AllocatorOf(slot, device).Allocate(bytes);
}

}  // namespace

std::string HumanBytes(size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (unit == 0) {
    std::snprintf(text, sizeof(text), "%zu B", bytes);
  } else {
    std::snprintf(text, sizeof(text), "%.1f %s", value, units[unit]);
  }
  return text;
}

void* GpuMemory::TryAllocate(size_t bytes, int device) {
  void* ptr = AllocateOnce(bytes, device);
  // The release frees through Free, which takes the slot's lock: called without it.
  const ScratchRelease release = scratch_release.load();
  if (ptr == nullptr && release != nullptr && release(device)) ptr = AllocateOnce(bytes, device);
  return ptr;
}

void GpuMemory::SetScratchRelease(ScratchRelease release) { scratch_release.store(release); }

void* GpuMemory::Allocate(size_t bytes, int device) {
  void* ptr = TryAllocate(bytes, device);
  if (ptr == nullptr) {
    DeviceSlot& slot = Slot(device);
    std::lock_guard<std::mutex> lock(slot.mutex);
    const DeviceAllocator& allocator = *slot.allocator;
    CAFFE_THROW() << "out of GPU memory: could not allocate " << HumanBytes(bytes) << " (" << bytes
                  << " bytes) on " << slot.device->name() << ", with "
                  << HumanBytes(allocator.in_use()) << " in use by Caffe, budget "
                  << HumanBytes(allocator.budget())
                  << "; use a smaller batch, Large Model Support (-lms), or another GPU";
  }
  return ptr;
}

void GpuMemory::Free(void* ptr, int device) {
  if (ptr == nullptr) return;
  DeviceSlot& slot = Slot(device);
  std::lock_guard<std::mutex> lock(slot.mutex);
  CHECK(slot.allocator) << "GPU memory freed on GPU " << device << ", which never allocated";
  slot.allocator->Free(ptr);
}

void GpuMemory::SetBudget(int device, size_t bytes) {
  DeviceSlot& slot = Slot(device);
  std::lock_guard<std::mutex> lock(slot.mutex);
  slot.budget = bytes;
  if (slot.allocator) slot.allocator->set_budget(bytes);
}

void GpuMemory::ReleaseCache(int device) {
  DeviceSlot& slot = Slot(device);
  std::lock_guard<std::mutex> lock(slot.mutex);
  if (slot.allocator) slot.allocator->ReleaseCache();
}

GpuMemory::Usage GpuMemory::GetUsage(int device) {
  DeviceSlot& slot = Slot(device);
  std::lock_guard<std::mutex> lock(slot.mutex);
  Usage usage;
  usage.budget = slot.budget;
  if (slot.allocator) {
    usage.in_use = slot.allocator->in_use();
    usage.reserved = slot.allocator->reserved();
    usage.peak_in_use = slot.allocator->peak_in_use();
    usage.budget = slot.allocator->budget();
  }
  return usage;
}

std::string GpuMemory::UsageLine(int device) {
  const Usage usage = GetUsage(device);
  std::ostringstream line;
  line << "GPU " << device << ": " << HumanBytes(usage.in_use) << " in use (peak "
       << HumanBytes(usage.peak_in_use) << "), " << HumanBytes(usage.reserved) << " held";
  return line.str();
}

}  // namespace caffe
