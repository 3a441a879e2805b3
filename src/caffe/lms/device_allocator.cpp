#include "caffe/lms/device_allocator.hpp"

#include <glog/logging.h>

#include <algorithm>

namespace caffe {
namespace lms {

namespace {
constexpr size_t kSmallGranule = 512;
constexpr size_t kLargeGranule = 2u << 20;
constexpr size_t kLargeFrom = 1u << 20;

size_t RoundUp(size_t value, size_t granule) { return (value + granule - 1) / granule * granule; }
}  // namespace

DeviceAllocator::DeviceAllocator(Device* device, size_t budget)
    : device_(device), budget_(budget == 0 ? device->capacity() : budget) {}

DeviceAllocator::~DeviceAllocator() {
  ReleaseCache();
  for (const auto& allocation : live_) device_->Free(allocation.first);
}

size_t DeviceAllocator::SizeClass(size_t bytes) {
  if (bytes == 0) return kSmallGranule;
  return bytes <= kLargeFrom ? RoundUp(bytes, kSmallGranule) : RoundUp(bytes, kLargeGranule);
}

bool DeviceAllocator::Fits(size_t bytes) const {
  const size_t size = SizeClass(bytes);
  if (cache_.count(size) > 0) return true;
  return in_use_ + size <= budget_;
}

void* DeviceAllocator::Allocate(size_t bytes) {
  const size_t size = SizeClass(bytes);
  void* ptr = nullptr;
  auto cached = cache_.find(size);
  if (cached != cache_.end()) {
    ptr = cached->second;
    cache_.erase(cached);
  } else {
    if (reserved_ + size > budget_) ReleaseCache();
    if (reserved_ + size > budget_) return nullptr;
    ptr = device_->Malloc(size);
    if (ptr == nullptr && !cache_.empty()) {
      // The device itself is full (other users, fragmentation): give back the cache, retry.
      ReleaseCache();
      ptr = device_->Malloc(size);
    }
    if (ptr == nullptr) return nullptr;
    reserved_ += size;
    peak_reserved_ = std::max(peak_reserved_, reserved_);
  }
  live_[ptr] = size;
  in_use_ += size;
  peak_in_use_ = std::max(peak_in_use_, in_use_);
  return ptr;
}

void DeviceAllocator::Free(void* ptr) {
  auto it = live_.find(ptr);
  CHECK(it != live_.end()) << "DeviceAllocator::Free of " << ptr << ", which it did not hand out";
  in_use_ -= it->second;
  cache_.emplace(it->second, ptr);
  live_.erase(it);
}

void DeviceAllocator::ReleaseCache() {
  for (const auto& block : cache_) {
    device_->Free(block.second);
    reserved_ -= block.first;
  }
  cache_.clear();
}

}  // namespace lms
}  // namespace caffe
