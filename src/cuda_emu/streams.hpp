// Streams and events in the CUDA emulator (docs/CUDA_EMU.md). Work issued to a stream (kernels,
// copies, memsets, cuBLAS and cuDNN calls, cuRAND fills, the writes of NCCL's results) is queued
// and runs only when something needs it done: a synchronizing call (cudaStreamSynchronize,
// cudaEventSynchronize, cudaDeviceSynchronize, a blocking cudaMemcpy, cudaFree), a query, or a
// library call that runs at once (NCCL's collectives, cuDNN's Find calls, cuBLAS's host results)
// on that stream. So work on two streams that nothing orders runs in the order a GPU could least
// expect: the stream waited for first, whatever was issued before. A program that reads a result
// before waiting for it, or lets a stream use memory another stream is still to write or read,
// gets wrong numbers here, where a GPU gets them only some of the time.
//
// The legacy default stream (null) is one per device; streams made without cudaStreamNonBlocking
// are ordered with it, as in CUDA. With CAFFE_CUDA_EMU_SYNC=1 every call runs its work at once
// instead, as the emulator did before: a failure that goes away with it is a race.
#ifndef CAFFE_CUDA_EMU_STREAMS_HPP_
#define CAFFE_CUDA_EMU_STREAMS_HPP_

#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "emu_state.hpp"

namespace caffe_emu {

/// False when CAFFE_CUDA_EMU_SYNC=1 (work runs when it is issued).
bool DeferredWork();

/// True for the null stream and for a stream made and not destroyed.
bool KnownStream(cudaStream_t stream);

/// Queues `work` on `stream` (null: the current device's default stream). It runs later, after the
/// stream's earlier work and whatever that waits for, on whichever host thread needs it done, with
/// the stream's device current.
void Issue(cudaStream_t stream, std::function<void()> work);

/// Queues on `stream` the write of `values`, taken now, to `destination` (device or pinned
/// memory): for data a call takes at once that a GPU writes later (a copy from pageable memory, a
/// library's result computed at the call).
template <typename T>
void IssueWrite(cudaStream_t stream, T* destination, std::vector<T> values) {
  auto kept = std::make_shared<const std::vector<T>>(std::move(values));
  Issue(stream, [destination, kept] {
    DeviceAccess access;
    std::copy(kept->begin(), kept->end(), destination);
  });
}

/// Runs everything issued on `stream` so far, and what it waits for.
void Drain(cudaStream_t stream);

/// Runs everything issued on every stream of `device` (-1: of every device).
void DrainDevice(int device);

}  // namespace caffe_emu

#endif  // CAFFE_CUDA_EMU_STREAMS_HPP_
