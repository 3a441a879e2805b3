#include "caffe/memory/cuda_device.hpp"

#include <chrono>
#include <sstream>

#include "caffe/common.hpp"
#include "caffe/memory/pinned_host_allocations.hpp"
#include "caffe/memory/syncedmem.hpp"

namespace caffe {

namespace {
// The compute stream layers launch on until the GPU backend gives each solver its own.
constexpr cudaStream_t kComputeStream = nullptr;
}  // namespace

CudaDevice::CudaDevice(int device_id, bool poison) : device_id_(device_id), poison_(poison) {
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  CAFFE_CHECK(device_id >= 0 && device_id < count)
      << "GPU " << device_id << " does not exist; this machine has " << count << " visible";
  CUDA_CHECK(cudaSetDevice(device_id));
  cudaDeviceProp properties;
  CUDA_CHECK(cudaGetDeviceProperties(&properties, device_id));
  device_name_ = properties.name;
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  capacity_ = free_bytes;  // what this process can have; other users keep theirs
  CUDA_CHECK(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking));
  CUDA_CHECK(cudaEventCreateWithFlags(&compute_done_, cudaEventDisableTiming));
}

CudaDevice::~CudaDevice() {
  // Destructors do not throw: a failure here only leaks what the process is about to lose.
  cudaStreamSynchronize(copy_stream_);
  for (const auto& copy : pending_) cudaEventDestroy(copy.second);
  for (cudaEvent_t event : event_pool_) cudaEventDestroy(event);
  for (const TimedEvents& copy : timed_) {
    cudaEventDestroy(copy.start);
    cudaEventDestroy(copy.end);
  }
  for (cudaEvent_t event : timing_pool_) cudaEventDestroy(event);
  if (reference_ != nullptr) cudaEventDestroy(reference_);
  cudaEventDestroy(compute_done_);
  cudaStreamDestroy(copy_stream_);
}

std::string CudaDevice::name() const {
  std::ostringstream name;
  name << "GPU " << device_id_ << " (" << device_name_ << ")";
  return name.str();
}

void* CudaDevice::Malloc(size_t bytes) {
  void* ptr = nullptr;
  const cudaError_t status = cudaMalloc(&ptr, bytes);
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clears the error so later calls do not report it
    return nullptr;
  }
  CUDA_CHECK(status);
  return ptr;
}

void CudaDevice::Free(void* ptr) { CUDA_CHECK(cudaFree(ptr)); }

void CudaDevice::Zero(void* ptr, size_t bytes) {
  CUDA_CHECK(cudaMemsetAsync(ptr, 0, bytes, kComputeStream));
}

void CudaDevice::Scribble(void* ptr, size_t bytes) {
  if (poison_) CUDA_CHECK(cudaMemsetAsync(ptr, 0xff, bytes, kComputeStream));
}

void CudaDevice::HostAlloc(void** ptr, size_t bytes, bool* pinned) {
  PinnedHostAllocations pinned_where_possible;
  CaffeMallocHost(ptr, bytes, pinned);
}

void CudaDevice::CopyWaitsForCompute() {
  CUDA_CHECK(cudaEventRecord(compute_done_, kComputeStream));
  CUDA_CHECK(cudaStreamWaitEvent(copy_stream_, compute_done_, 0));
}

uint64_t CudaDevice::RecordCopy() {
  cudaEvent_t event = nullptr;
  if (event_pool_.empty()) {
    CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  } else {
    event = event_pool_.back();
    event_pool_.pop_back();
  }
  CUDA_CHECK(cudaEventRecord(event, copy_stream_));
  const uint64_t ticket = NextTicket();
  pending_.emplace_back(ticket, event);
  return ticket;
}

uint64_t CudaDevice::CopyToDeviceAsync(void* device_dst, const void* host_src, size_t bytes) {
  return IssueCopy(device_dst, host_src, bytes, true);
}

uint64_t CudaDevice::CopyToHostAsync(void* host_dst, const void* device_src, size_t bytes) {
  return IssueCopy(host_dst, device_src, bytes, false);
}

uint64_t CudaDevice::IssueCopy(void* dst, const void* src, size_t bytes, bool to_device) {
  CopyWaitsForCompute();
  TimedEvents timed{to_device, bytes, nullptr, nullptr};
  if (copy_timing_) {
    timed.start = TimingEvent();
    CUDA_CHECK(cudaEventRecord(timed.start, copy_stream_));
  }
  CUDA_CHECK(cudaMemcpyAsync(
      dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, copy_stream_));
  if (copy_timing_) {
    timed.end = TimingEvent();
    CUDA_CHECK(cudaEventRecord(timed.end, copy_stream_));
    timed_.push_back(timed);
  }
  return RecordCopy();
}

cudaEvent_t CudaDevice::TimingEvent() {
  if (timing_pool_.empty()) {
    cudaEvent_t event = nullptr;
    CUDA_CHECK(cudaEventCreate(&event));
    return event;
  }
  cudaEvent_t event = timing_pool_.back();
  timing_pool_.pop_back();
  return event;
}

void CudaDevice::set_copy_timing(bool on) {
  if (on && !copy_timing_) {
    // Where the copy stream's clock stands on the host's: an event on the stream, waited for at
    // once; the copies' events are then placed by their time from it.
    if (reference_ == nullptr) CUDA_CHECK(cudaEventCreate(&reference_));
    CUDA_CHECK(cudaEventRecord(reference_, copy_stream_));
    CUDA_CHECK(cudaEventSynchronize(reference_));
    reference_time_ = std::chrono::steady_clock::now();
  }
  copy_timing_ = on;
}

std::vector<Device::TimedCopy> CudaDevice::TakeTimedCopies() {
  std::vector<TimedCopy> finished;
  while (!timed_.empty()) {
    const TimedEvents copy = timed_.front();
    const cudaError_t status = cudaEventQuery(copy.end);
    if (status == cudaErrorNotReady) break;
    CUDA_CHECK(status);
    float start_ms = 0, end_ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&start_ms, reference_, copy.start));
    CUDA_CHECK(cudaEventElapsedTime(&end_ms, reference_, copy.end));
    using Micro = std::chrono::duration<double, std::micro>;
    const auto at = [this](float ms) {
      return reference_time_ +
             std::chrono::duration_cast<std::chrono::steady_clock::duration>(Micro(ms * 1000.0));
    };
    finished.push_back({copy.to_device, copy.bytes, at(start_ms), at(end_ms)});
    timing_pool_.push_back(copy.start);
    timing_pool_.push_back(copy.end);
    timed_.pop_front();
  }
  return finished;
}

bool CudaDevice::CopyDone(uint64_t ticket) {
  while (ticket > done_ && !pending_.empty()) {
    const cudaError_t status = cudaEventQuery(pending_.front().second);
    if (status == cudaErrorNotReady) break;
    CUDA_CHECK(status);
    done_ = pending_.front().first;
    event_pool_.push_back(pending_.front().second);
    pending_.pop_front();
  }
  return ticket <= done_;
}

cudaEvent_t CudaDevice::EventOf(uint64_t ticket) const {
  // Tickets are consecutive from the oldest pending one.
  return pending_[static_cast<size_t>(ticket - pending_.front().first)].second;
}

void CudaDevice::WaitForCopy(uint64_t ticket) {
  if (CopyDone(ticket)) return;
  CUDA_CHECK(cudaEventSynchronize(EventOf(ticket)));
  CopyDone(ticket);
}

void CudaDevice::ComputeWaitsForCopy(uint64_t ticket) {
  if (CopyDone(ticket)) return;
  CUDA_CHECK(cudaStreamWaitEvent(kComputeStream, EventOf(ticket), 0));
}

}  // namespace caffe
