// Large Model Support's real device (docs/LMS.md): a CUDA GPU. Device memory from cudaMalloc,
// homes in pinned host memory (cudaHostAlloc), copies with cudaMemcpyAsync on a copy stream of its
// own, ordered against the compute stream (the legacy default stream) with events; an event
// recorded after each copy is what its ticket waits on. GPU builds only.
#ifndef CAFFE_MEMORY_CUDA_DEVICE_HPP_
#define CAFFE_MEMORY_CUDA_DEVICE_HPP_

#ifndef CPU_ONLY

#include <cuda_runtime.h>

#include <chrono>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "caffe/memory/device.hpp"

namespace caffe {

class CudaDevice : public Device {
 public:
  /// Uses GPU `device_id` (which becomes the calling thread's current device); throws a
  /// caffe::Error naming the GPU when it cannot be used. `poison`: Scribble fills memory with
  /// NaN bytes (a check of layers' declarations, for tests), else it does nothing.
  explicit CudaDevice(int device_id, bool poison = false);
  ~CudaDevice() override;

  std::string name() const override;
  size_t capacity() const override { return capacity_; }
  void* Malloc(size_t bytes) override;
  void Free(void* ptr) override;
  void Zero(void* ptr, size_t bytes) override;
  void Scribble(void* ptr, size_t bytes) override;
  void HostAlloc(void** ptr, size_t bytes, bool* pinned) override;
  uint64_t CopyToDeviceAsync(void* device_dst, const void* host_src, size_t bytes) override;
  uint64_t CopyToHostAsync(void* host_dst, const void* device_src, size_t bytes) override;
  bool CopyDone(uint64_t ticket) override;
  void WaitForCopy(uint64_t ticket) override;
  void ComputeWaitsForCopy(uint64_t ticket) override;
  /// Timing records an event before and after each copy on the copy stream.
  void set_copy_timing(bool on) override;
  std::vector<TimedCopy> TakeTimedCopies() override;

 private:
  // The copy stream starts its next copy after the compute work issued so far.
  void CopyWaitsForCompute();
  // Issues one copy on the copy stream (timed when copy timing is on); returns its ticket.
  uint64_t IssueCopy(void* dst, const void* src, size_t bytes, bool to_device);
  // Records the end of the copy just issued on the copy stream; returns its ticket.
  uint64_t RecordCopy();
  // An event that can time (from the pool, or new).
  cudaEvent_t TimingEvent();
  // The event recorded after copy `ticket`, which has not finished as far as is known.
  cudaEvent_t EventOf(uint64_t ticket) const;

  int device_id_;
  bool poison_;
  std::string device_name_;
  size_t capacity_ = 0;
  cudaStream_t copy_stream_ = nullptr;
  cudaEvent_t compute_done_ = nullptr;
  // Copies not known to have finished, each with the event recorded after it, in issue order;
  // finished events go back to the pool.
  std::deque<std::pair<uint64_t, cudaEvent_t>> pending_;
  std::vector<cudaEvent_t> event_pool_;
  uint64_t done_ = 0;  // every copy up to this ticket has finished
  // With copy timing: each timed copy's events, in issue order, until TakeTimedCopies takes it;
  // the events go back to their own pool (timing events cost more to record than the others).
  struct TimedEvents {
    bool to_device;
    size_t bytes;
    cudaEvent_t start, end;
  };
  std::deque<TimedEvents> timed_;
  std::vector<cudaEvent_t> timing_pool_;
  cudaEvent_t reference_ = nullptr;  // recorded on the copy stream when timing starts
  std::chrono::steady_clock::time_point reference_time_;  // when it was seen done on the host

  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;
};

}  // namespace caffe

#endif  // CPU_ONLY
#endif  // CAFFE_MEMORY_CUDA_DEVICE_HPP_
