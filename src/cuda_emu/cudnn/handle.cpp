// The emulated cuDNN's handle (the GPU it was made on and its stream), its version and error
// strings, and the thread's mode for computing calls (cudnn/queue.hpp).
#include <cudnn.h>

#include "cudnn/internal.hpp"
#include "cudnn/queue.hpp"
#include "emu_state.hpp"
#include "streams.hpp"

namespace caffe_emu {
thread_local CuDNNRun cudnn_run = CuDNNRun::kCall;
}  // namespace caffe_emu

using namespace caffe_emu;  // NOLINT: the C API below only forwards to it

size_t cudnnGetVersion() { return CUDNN_VERSION; }

const char* cudnnGetErrorString(cudnnStatus_t status) {
  switch (status) {
    case CUDNN_STATUS_SUCCESS:
      return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_NOT_INITIALIZED:
      return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN_STATUS_BAD_PARAM:
      return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_NOT_SUPPORTED:
      return "CUDNN_STATUS_NOT_SUPPORTED";
    case CUDNN_STATUS_INTERNAL_ERROR:
      return "CUDNN_STATUS_INTERNAL_ERROR";
    case CUDNN_STATUS_EXECUTION_FAILED:
      return "CUDNN_STATUS_EXECUTION_FAILED";
    case CUDNN_STATUS_ALLOC_FAILED:
      return "CUDNN_STATUS_ALLOC_FAILED";
  }
  return "CUDNN_STATUS_UNKNOWN";
}

cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
  if (handle == nullptr) return Reject(kBadParam, "cudnnCreate", "handle is null");
  *handle = new cudnnContext{CurrentDevice()};
  return kSuccess;
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
  if (handle == nullptr) return Reject(kBadParam, "cudnnDestroy", "the handle is null");
  Drain(handle->stream);  // its queued calls use it
  delete handle;
  return kSuccess;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId) {
  if (handle == nullptr) return Reject(kBadParam, "cudnnSetStream", "the handle is null");
  if (!KnownStream(streamId)) return Reject(kBadParam, "cudnnSetStream", "unknown stream");
  handle->stream = streamId;
  return kSuccess;
}
