// The CUDA emulator's shared state (docs/CUDA_EMU.md): the device-memory arena, pinned host
// allocations, the current device and the last error, used by the runtime, launch, cuBLAS and
// cuRAND parts.
#ifndef CAFFE_CUDA_EMU_EMU_STATE_HPP_
#define CAFFE_CUDA_EMU_EMU_STATE_HPP_

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace caffe_emu {

/// Where a pointer lies.
struct Place {
  enum Kind { kHost, kPinned, kDevice } kind = kHost;
  int device = -1;             // for kDevice
  const char* base = nullptr;  // start of its allocation (kPinned, kDevice)
  size_t size = 0;             // bytes of that allocation
};

/// Classifies `pointer` (device memory of some GPU, pinned host memory, or other host memory).
Place Locate(const void* pointer);

/// The calling thread's current device (cudaSetDevice), 0 by default.
int CurrentDevice();

/// Number of emulated GPUs visible to the process (CAFFE_CUDA_EMU_DEVICES, CUDA_VISIBLE_DEVICES).
int DeviceCount();

/// The emulated GPU that visible index `device` names: the same in every process of the machine,
/// whatever CUDA_VISIBLE_DEVICES each was given.
int PhysicalDevice(int device);

/// Whether emulated GPU `physical` is in exclusive-process compute mode (CAFFE_CUDA_EMU_EXCLUSIVE).
bool Exclusive(int physical);

/// Makes visible GPU `device` this process's (its context, in CUDA): cudaErrorDevicesUnavailable
/// when it is in exclusive-process mode and another process holds it (compute_mode.cpp).
cudaError_t EnterDevice(int device);

/// While one exists (in any thread), device memory is readable and writable from the host: kernels,
/// copies and the emulated libraries run inside one.
class DeviceAccess {
 public:
  DeviceAccess();
  ~DeviceAccess();
  DeviceAccess(const DeviceAccess&) = delete;
  DeviceAccess& operator=(const DeviceAccess&) = delete;
};

/// Prints why `call` (an emulated library call) fails, with the emulator's prefix, to stderr.
void Complain(const char* call, const std::string& why);

/// Records `error` as the thread's last error, prints `why` (what a GPU would not say) to stderr
/// with the emulator's prefix, and returns `error`.
cudaError_t Fail(cudaError_t error, const std::string& why);

/// Checks that [pointer, pointer + bytes) is accessible to device code (device memory of the
/// current GPU or pinned host memory) and lies inside one allocation; otherwise returns a message
/// naming `what`, else an empty string.
std::string CheckDeviceRange(const void* pointer, size_t bytes, const char* what);

/// CheckDeviceRange for an emulated call (`call`: "cublasSgemm", ...): true when fine, else
/// prints why and returns false.
bool UsableOnDevice(const char* call, const void* pointer, size_t bytes, const char* what);

/// True when `pointer` is a non-null host pointer, as a library reads scalars (alpha, beta) and
/// writes results in its host pointer mode; else prints why (naming `call` and the scalar's `name`)
/// and returns false.
bool HostScalar(const char* call, const char* name, const void* pointer);

/// True when `device`, the GPU a handle (`what`: "cuBLAS handle", ...) was made on, is the current
/// one; else prints both and returns false.
bool MadeOnCurrentDevice(const char* call, const char* what, int device);

}  // namespace caffe_emu

#endif  // CAFFE_CUDA_EMU_EMU_STATE_HPP_
