#include "caffe/memory/device_allocator.hpp"

#include <glog/logging.h>

#include <algorithm>

namespace caffe {

namespace {
constexpr size_t kSmallGranule = 512;
constexpr size_t kLargeGranule = 2u << 20;
constexpr size_t kLargeFrom = 1u << 20;

size_t RoundUp(size_t value, size_t granule) { return (value + granule - 1) / granule * granule; }
}  // namespace

DeviceAllocator::DeviceAllocator(Device* device, size_t budget)
    : device_(device), budget_(budget == 0 ? device->capacity() : budget) {}

DeviceAllocator::~DeviceAllocator() {
  device_->WaitForCopies();
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

void* DeviceAllocator::Allocate(size_t bytes, uint64_t* ticket) {
  const size_t size = SizeClass(bytes);
  void* ptr = nullptr;
  uint64_t pending = 0;
  auto range = cache_.equal_range(size);
  if (range.first != range.second) {
    auto cached = range.first;
    while (cached != range.second && !device_->CopyDone(cached->second.ticket)) ++cached;
    if (cached == range.second) {
      cached = range.first;  // every one still has a copy running: the oldest ends first
      pending = cached->second.ticket;
    }
    ptr = cached->second.ptr;
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
  if (ticket != nullptr) *ticket = pending;
  return ptr;
}

void DeviceAllocator::Free(void* ptr, uint64_t ticket) {
  auto it = live_.find(ptr);
  CHECK(it != live_.end()) << "DeviceAllocator::Free of " << ptr << ", which it did not hand out";
  in_use_ -= it->second;
  cache_.emplace(it->second, Cached{ptr, ticket});
  live_.erase(it);
}

void DeviceAllocator::ReleaseCache() {
  for (const auto& block : cache_) {
    device_->WaitForCopy(block.second.ticket);
    device_->Free(block.second.ptr);
    reserved_ -= block.first;
  }
  cache_.clear();
}

}  // namespace caffe
