#include "caffe/memory/device.hpp"

#include <glog/logging.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <utility>

#include "caffe/memory/syncedmem.hpp"

namespace caffe {

namespace {
constexpr size_t kFakeAlignment = 256;  // cudaMalloc's alignment
}  // namespace

FakeDevice::FakeDevice(size_t capacity, bool deferred_copies)
    : capacity_(capacity), deferred_(deferred_copies) {}

FakeDevice::~FakeDevice() {
  RunCopies(last_ticket());
  for (const auto& allocation : live_) std::free(reinterpret_cast<void*>(allocation.first));
}

std::string FakeDevice::name() const {
  std::ostringstream name;
  name << "fake device (host memory, capacity " << capacity_ << " bytes)";
  return name.str();
}

void* FakeDevice::Malloc(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (allocated_ + bytes > capacity_) return nullptr;
  const size_t rounded = (bytes + kFakeAlignment - 1) / kFakeAlignment * kFakeAlignment;
  void* ptr = std::aligned_alloc(kFakeAlignment, rounded);
  if (ptr == nullptr) return nullptr;
  std::memset(ptr, kPoison, bytes);
  live_[reinterpret_cast<uintptr_t>(ptr)] = bytes;
  allocated_ += bytes;
  if (allocated_ > peak_allocated_) peak_allocated_ = allocated_;
  return ptr;
}

void FakeDevice::Free(void* ptr) {
  auto it = live_.find(reinterpret_cast<uintptr_t>(ptr));
  CHECK(it != live_.end()) << "FakeDevice::Free of " << ptr << ", which it did not allocate";
  const uintptr_t start = it->first, end = it->first + it->second;
  for (const Pending& copy : queue_) {
    const auto address = reinterpret_cast<uintptr_t>(copy.device_side());
    CHECK(address + copy.bytes <= start || address >= end)
        << "fake device memory at " << ptr << " freed while copy " << copy.ticket
        << " still uses it";
  }
  std::memset(ptr, kPoison, it->second);
  allocated_ -= it->second;
  live_.erase(it);
  std::free(ptr);
}

void FakeDevice::Zero(void* ptr, size_t bytes) {
  CheckLive(ptr, bytes);
  std::memset(ptr, 0, bytes);
}

void FakeDevice::Scribble(void* ptr, size_t bytes) {
  CheckLive(ptr, bytes);
  std::memset(ptr, kPoison, bytes);
}

void FakeDevice::HostAlloc(void** ptr, size_t bytes, bool* pinned) {
  CaffeMallocHost(ptr, bytes, pinned);
}

uint64_t FakeDevice::CopyToDeviceAsync(void* device_dst, const void* host_src, size_t bytes) {
  return Issue({device_dst, host_src, bytes, true, 0});
}

uint64_t FakeDevice::CopyToHostAsync(void* host_dst, const void* device_src, size_t bytes) {
  return Issue({host_dst, device_src, bytes, false, 0});
}

uint64_t FakeDevice::Issue(const Pending& copy) {
  CheckLive(copy.device_side(), copy.bytes);
  copies_.push_back({copy.to_device, copy.device_side(), copy.bytes});
  Pending issued = copy;
  issued.ticket = NextTicket();
  queue_.push_back(issued);
  if (!deferred_) RunCopies(issued.ticket);
  return issued.ticket;
}

void FakeDevice::Run(const Pending& copy) {
  CheckLive(copy.device_side(), copy.bytes);
  if (!copy_timing_) {
    std::memcpy(copy.dst, copy.src, copy.bytes);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  std::memcpy(copy.dst, copy.src, copy.bytes);
  timed_.push_back({copy.to_device, copy.bytes, start, std::chrono::steady_clock::now()});
}

std::vector<Device::TimedCopy> FakeDevice::TakeTimedCopies() { return std::exchange(timed_, {}); }

void FakeDevice::RunCopies(uint64_t ticket) {
  while (!queue_.empty() && queue_.front().ticket <= ticket) {
    Run(queue_.front());
    done_ = queue_.front().ticket;
    queue_.pop_front();
  }
}

void FakeDevice::CheckLive(const void* ptr, size_t bytes) const {
  const uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
  auto it = live_.upper_bound(address);
  CHECK(it != live_.begin()) << "fake device access at " << ptr << " outside any allocation";
  --it;
  CHECK(address + bytes <= it->first + it->second)
      << "fake device access of " << bytes << " bytes at " << ptr << " runs past its allocation";
}

}  // namespace caffe
