// cuDNN calls in the CUDA emulator run as queued work on the handle's stream (streams.hpp), as a
// GPU runs cuDNN's kernels. A computing call starts with CAFFE_EMU_CUDNN_QUEUED (its own name and
// arguments), which sends it through RunOrQueue: the call runs once for its checks only (the
// status is the call's), stopping at CAFFE_EMU_CUDNN_COMPUTE, and then is queued to run whole with
// copies of what cuDNN reads at the call (descriptors, host scalars).
#ifndef CAFFE_CUDA_EMU_CUDNN_QUEUE_HPP_
#define CAFFE_CUDA_EMU_CUDNN_QUEUE_HPP_

#include <cstring>
#include <memory>
#include <tuple>
#include <type_traits>

#include "cudnn/internal.hpp"
#include "emu_state.hpp"
#include "streams.hpp"

namespace CAFFE_EMU_HIDDEN caffe_emu {

/// How a computing call entered now runs on this thread: as the program's call (to be checked and
/// queued), for its checks only, or whole (queued work running, or CAFFE_CUDA_EMU_SYNC=1).
enum class CuDNNRun { kCall, kChecks, kWhole };
extern thread_local CuDNNRun cudnn_run;

/// Opens a computing call: unless RunOrQueue is running it, hands it to RunOrQueue.
#define CAFFE_EMU_CUDNN_QUEUED(call, handle, ...)               \
  if (::caffe_emu::cudnn_run == ::caffe_emu::CuDNNRun::kCall) { \
    return ::caffe_emu::RunOrQueue(&call, handle, __VA_ARGS__); \
  }                                                             \
  static_assert(true, "")

/// Ends a computing call's checks: returns success when only those were asked for, else opens
/// device memory to the computation.
#define CAFFE_EMU_CUDNN_COMPUTE                                                  \
  if (::caffe_emu::cudnn_run == ::caffe_emu::CuDNNRun::kChecks) return kSuccess; \
  ::caffe_emu::DeviceAccess caffe_emu_access_

// An argument as the queued computation gets it: a copy of a descriptor, of a host scalar (alpha,
// beta: host memory, where tensors are device memory), or the value itself.
template <typename T>
struct Kept {
  T value;
  T get() const { return value; }
};
template <typename Struct>
struct KeptDescriptor {
  std::shared_ptr<Struct> copy;
  Struct* get() const { return copy.get(); }
};
struct KeptScalar {
  const void* pointer;              // the argument, or `storage` when that is a host scalar
  std::shared_ptr<double> storage;  // on the heap: `pointer` stays valid when this moves
  const void* get() const { return pointer; }
};

template <typename T>
auto Keep(T value, size_t) {
  return Kept<T>{value};
}
template <typename Struct, typename = std::enable_if_t<std::is_class_v<Struct> &&
                                                       !std::is_same_v<Struct, cudnnContext>>>
auto Keep(Struct* descriptor, size_t) {
  return KeptDescriptor<Struct>{descriptor ? std::make_shared<Struct>(*descriptor) : nullptr};
}
inline KeptScalar Keep(const void* pointer, size_t scalar_bytes) {
  KeptScalar kept{pointer, nullptr};
  if (pointer != nullptr && Locate(pointer).kind == Place::kHost) {
    kept.storage = std::make_shared<double>();
    std::memcpy(kept.storage.get(), pointer, scalar_bytes);
    kept.pointer = kept.storage.get();
  }
  return kept;
}

// Bytes of a host scalar: a double for double tensors, else a float (cuDNN's rule), from the
// first tensor descriptor among the arguments.
template <typename... Args>
size_t ScalarBytes(Args... args) {
  size_t bytes = 0;
  auto look = [&](auto arg) {
    if constexpr (std::is_same_v<decltype(arg), cudnnTensorDescriptor_t>) {
      if (bytes == 0 && arg != nullptr) {
        bytes = arg->type == CUDNN_DATA_DOUBLE ? sizeof(double) : sizeof(float);
      }
    }
  };
  (look(args), ...);
  return bytes == 0 ? sizeof(float) : bytes;
}

// Runs `call` with `how` as this thread's mode, then puts the mode back.
template <typename Call>
cudnnStatus_t RunAs(CuDNNRun how, Call call) {
  const CuDNNRun before = cudnn_run;
  cudnn_run = how;
  const cudnnStatus_t status = call();
  cudnn_run = before;
  return status;
}

/// Runs `call`'s checks; when they pass, queues `call` on the handle's stream with the arguments
/// as they are now (with CAFFE_CUDA_EMU_SYNC=1, runs it at once).
template <typename... Params, typename... Args>
cudnnStatus_t RunOrQueue(cudnnStatus_t (*call)(Params...), cudnnHandle_t handle, Args... args) {
  const cudnnStatus_t status = RunAs(CuDNNRun::kChecks, [&] { return call(handle, args...); });
  if (status != kSuccess) return status;
  if (!DeferredWork()) return RunAs(CuDNNRun::kWhole, [&] { return call(handle, args...); });
  const size_t scalar_bytes = ScalarBytes(args...);
  auto kept = std::make_shared<std::tuple<decltype(Keep(args, scalar_bytes))...>>(
      Keep(args, scalar_bytes)...);
  Issue(handle->stream, [call, handle, kept] {
    std::apply(
        [&](const auto&... each) {
          RunAs(CuDNNRun::kWhole, [&] { return call(handle, each.get()...); });
        },
        *kept);
  });
  return kSuccess;
}

}  // namespace caffe_emu

#endif  // CAFFE_CUDA_EMU_CUDNN_QUEUE_HPP_
