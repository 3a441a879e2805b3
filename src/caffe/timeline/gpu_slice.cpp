#include "caffe/timeline/gpu_slice.hpp"

#include "caffe/common.hpp"
#include "caffe/timeline/timeline.hpp"

#ifndef CPU_ONLY
#include <cuda_runtime.h>
#ifdef USE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <vector>

namespace caffe {
namespace timeline {

namespace {

// The compute stream: layers launch their kernels and cuBLAS / cuDNN calls on the default stream.
constexpr cudaStream_t kComputeStream = nullptr;
// A reference older than this is replaced when nothing is pending: elapsed times are floats in
// milliseconds, whose resolution would otherwise fall below a microsecond after some 16 s.
constexpr auto kReferenceLifetime = std::chrono::seconds(10);

struct Pending {
  int device;
  cudaEvent_t start, end;
  const char* category;
  std::string name;
};

// Where a device's compute stream stands on the host's clock: an event recorded on it and waited
// for at once, and the host time it finished.
struct DeviceClock {
  cudaEvent_t reference = nullptr;
  std::chrono::steady_clock::time_point host;
  int track = -1;
};

struct State {
  std::mutex mutex;
  std::deque<Pending> pending;  // in the order they were recorded
  std::map<int, DeviceClock> clocks;
  std::map<int, std::vector<cudaEvent_t>> free_events;  // by device: events belong to one
};

State& state() {
  static State* s = new State();  // never destroyed: slices may end during static destruction
  return *s;
}

// CUDA errors here would only lose slices: they are dropped, never thrown from a destructor.
bool Ok(cudaError_t status) { return status == cudaSuccess; }

// An event of `device`, the current one.
cudaEvent_t TakeEvent(State& s, int device) {
  std::vector<cudaEvent_t>& free = s.free_events[device];
  if (!free.empty()) {
    cudaEvent_t event = free.back();
    free.pop_back();
    return event;
  }
  cudaEvent_t event = nullptr;
  return Ok(cudaEventCreate(&event)) ? event : nullptr;
}

void Anchor(DeviceClock* clock) {
  if (clock->reference == nullptr && !Ok(cudaEventCreate(&clock->reference))) {
    clock->reference = nullptr;
    return;
  }
  if (Ok(cudaEventRecord(clock->reference, kComputeStream)) &&
      Ok(cudaEventSynchronize(clock->reference))) {
    clock->host = std::chrono::steady_clock::now();
  }
}

// Turns the finished slices into timeline slices; with `wait`, all of them. Called with s.mutex.
void Drain(State& s, bool wait) {
  while (!s.pending.empty()) {
    Pending& slice = s.pending.front();
    if (wait) cudaEventSynchronize(slice.end);
    const cudaError_t status = cudaEventQuery(slice.end);
    if (status == cudaErrorNotReady) break;
    DeviceClock& clock = s.clocks[slice.device];
    float from_reference = 0, duration = 0;
    if (Ok(status) && Ok(cudaEventElapsedTime(&from_reference, clock.reference, slice.start)) &&
        Ok(cudaEventElapsedTime(&duration, slice.start, slice.end))) {
      const auto start =
          clock.host + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                           std::chrono::duration<double, std::milli>(from_reference));
      Complete(clock.track, slice.category, slice.name, At(start), duration * 1000.0);
    }
    s.free_events[slice.device].push_back(slice.start);
    s.free_events[slice.device].push_back(slice.end);
    s.pending.pop_front();
  }
}

}  // namespace

GpuSlice::GpuSlice(const char* category, const std::string& name)
    : category_(category), name_(name) {
  if (Caffe::mode() != Caffe::GPU) return;
#ifdef USE_NVTX
  nvtxRangePushA(name.c_str());
  range_ = true;
#endif
  if (!Recording()) return;
  int device = -1;
  if (!Ok(cudaGetDevice(&device))) return;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  DeviceClock& clock = s.clocks[device];
  if (clock.reference == nullptr) {
    Anchor(&clock);
    clock.track = Track("GPU " + std::to_string(device) + " compute");
  }
  start_ = TakeEvent(s, device);
  if (start_ == nullptr) return;
  if (!Ok(cudaEventRecord(static_cast<cudaEvent_t>(start_), kComputeStream))) {
    s.free_events[device].push_back(static_cast<cudaEvent_t>(start_));
    start_ = nullptr;
    return;
  }
  device_ = device;
}

GpuSlice::~GpuSlice() {
#ifdef USE_NVTX
  if (range_) nvtxRangePop();
#endif
  if (start_ == nullptr) return;
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  cudaEvent_t end = TakeEvent(s, device_);
  if (end == nullptr || !Ok(cudaEventRecord(end, kComputeStream))) {
    s.free_events[device_].push_back(static_cast<cudaEvent_t>(start_));
    if (end != nullptr) s.free_events[device_].push_back(end);
    return;
  }
  s.pending.push_back({device_, static_cast<cudaEvent_t>(start_), end, category_, name_});
  Drain(s, false);
}

void FlushGpuSlices(bool wait) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.pending.empty() && s.clocks.empty()) return;
  Drain(s, wait);
  if (!s.pending.empty()) return;
  // Nothing refers to the references now: renew the old ones (each on its own device).
  int current = -1;
  if (!Ok(cudaGetDevice(&current))) return;
  for (auto& [device, clock] : s.clocks) {
    if (std::chrono::steady_clock::now() - clock.host < kReferenceLifetime) continue;
    if (Ok(cudaSetDevice(device))) Anchor(&clock);
  }
  cudaSetDevice(current);
}

}  // namespace timeline
}  // namespace caffe

#else  // CPU_ONLY: no GPU, nothing to time.

namespace caffe {
namespace timeline {

GpuSlice::GpuSlice(const char* category, const std::string& name)
    : category_(category), name_(name) {}
GpuSlice::~GpuSlice() {}
void FlushGpuSlices(bool) {}

}  // namespace timeline
}  // namespace caffe

#endif  // CPU_ONLY
