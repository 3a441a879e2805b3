// The CUDA emulator's runtime API: devices, the device-memory arena, pinned host memory, copies
// and memsets (queued on streams: streams.cpp), and errors. See emu_state.hpp and
// docs/CUDA_EMU.md.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "emu_state.hpp"
#include "streams.hpp"

namespace caffe_emu {

namespace {

constexpr size_t kAlignment = 256;
constexpr int kMaxDevices = 16;
constexpr unsigned char kUninitializedByte = 0xff;  // a NaN in every float and double

size_t RoundUp(size_t value, size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// "4G", "512M", "65536K" or a plain byte count; `fallback` when unset or unreadable.
size_t BytesFromEnv(const char* name, size_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  size_t scale = 1;
  if (*end == 'K' || *end == 'k') scale = size_t{1} << 10;
  if (*end == 'M' || *end == 'm') scale = size_t{1} << 20;
  if (*end == 'G' || *end == 'g') scale = size_t{1} << 30;
  if (value == 0 || end == text) {
    std::fprintf(stderr, "CUDA emulator: %s=%s is not a size; using %zu bytes\n", name, text,
                 fallback);
    return fallback;
  }
  return static_cast<size_t>(value) * scale;
}

struct Allocation {
  size_t size;      // as asked: copies and kernels must stay inside
  size_t reserved;  // rounded up to the alignment
  int device;
};

// Every emulated GPU's memory, one slice per device of a single reserved mapping that host code
// can touch only while a DeviceAccess is alive.
struct Arena {
  std::mutex mutex;
  char* base = nullptr;
  size_t per_device = 0;
  std::vector<int> visible;                          // visible index -> emulated device
  std::vector<std::map<size_t, size_t>> free_lists;  // per visible device: offset -> bytes
  std::vector<size_t> used;
  std::map<const char*, Allocation> allocations;
  std::map<const char*, size_t> pinned;
  int access_count = 0;
  struct sigaction previous_segv = {};
};

Arena& TheArena();

void OnSegv(int signal, siginfo_t* info, void* context) {
  Arena& arena = TheArena();
  const char* address = static_cast<const char*>(info->si_addr);
  const size_t total = arena.per_device * arena.visible.size();
  if (address >= arena.base && address < arena.base + total) {
    char message[256];
    const int length = std::snprintf(
        message, sizeof(message),
        "CUDA emulator: host code read or wrote GPU %d's memory at %p, outside any kernel or "
        "copy (on a GPU this is a crash too)\n",
        static_cast<int>((address - arena.base) / arena.per_device), info->si_addr);
    if (length > 0) (void)!write(2, message, static_cast<size_t>(length));
    std::abort();
  }
  // Not ours: hand the fault to whoever handled it before.
  sigaction(SIGSEGV, &arena.previous_segv, nullptr);
  (void)signal;
  (void)context;
}

Arena& TheArena() {
  static Arena* arena = [] {
    auto* made = new Arena();
    int configured = 1;
    if (const char* text = std::getenv("CAFFE_CUDA_EMU_DEVICES")) configured = std::atoi(text);
    if (configured < 0 || configured > kMaxDevices) configured = 1;
    // CUDA_VISIBLE_DEVICES as the CUDA runtime reads it: indices up to the first invalid one.
    if (const char* text = std::getenv("CUDA_VISIBLE_DEVICES")) {
      std::stringstream list(text);
      std::string item;
      while (std::getline(list, item, ',')) {
        char* end = nullptr;
        const long index = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || index < 0 || index >= configured) break;
        made->visible.push_back(static_cast<int>(index));
      }
    } else {
      for (int i = 0; i < configured; ++i) made->visible.push_back(i);
    }
    made->per_device = BytesFromEnv("CAFFE_CUDA_EMU_MEMORY", size_t{4} << 30);
    made->per_device = RoundUp(made->per_device, kAlignment);
    const size_t total = made->per_device * std::max<size_t>(made->visible.size(), 1);
    void* mapping =
        mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapping == MAP_FAILED) {
      std::fprintf(stderr, "CUDA emulator: cannot reserve %zu bytes of address space\n", total);
      std::abort();
    }
    made->base = static_cast<char*>(mapping);
    // Huge pages: every kernel and copy flips the whole arena's protection, which costs a
    // page-table update per page; 2 MB pages make that 512 times cheaper.
    madvise(mapping, total, MADV_HUGEPAGE);
    for (size_t i = 0; i < made->visible.size(); ++i) {
      made->free_lists.push_back({{0, made->per_device}});
      made->used.push_back(0);
    }
    struct sigaction action = {};
    action.sa_sigaction = OnSegv;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &made->previous_segv);
    return made;
  }();
  return *arena;
}

thread_local int current_device = 0;
thread_local cudaError_t last_error = cudaSuccess;

cudaError_t Record(cudaError_t error) {
  if (error != cudaSuccess) last_error = error;
  return error;
}

bool ValidDevice(int device) {
  return device >= 0 && device < static_cast<int>(TheArena().visible.size());
}

// Says how [pointer, pointer + bytes) runs past the end of `place`, its allocation; empty when it
// does not.
std::string Overrun(const Place& place, const void* pointer, size_t bytes, const char* what) {
  const char* begin = static_cast<const char*>(pointer);
  if (begin + bytes <= place.base + place.size) return "";
  std::ostringstream why;
  why << what << " runs past the end of its allocation: " << bytes << " bytes from byte "
      << begin - place.base << " of " << place.size;
  return why.str();
}

// Checks a copy's two sides against its kind; empty when fine.
std::string CheckCopy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  const bool dst_device = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  const bool src_device = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  for (int side = 0; side < 2; ++side) {
    const void* pointer = side == 0 ? dst : src;
    const char* what = side == 0 ? "destination" : "source";
    const Place place = Locate(pointer);
    if (kind != cudaMemcpyDefault && kind != cudaMemcpyHostToHost &&
        (place.kind == Place::kDevice) != (side == 0 ? dst_device : src_device)) {
      std::ostringstream why;
      why << "copy's " << what << " " << pointer << " is "
          << (place.kind == Place::kDevice ? "device" : "host") << " memory, but the copy's kind ("
          << kind << ") says otherwise";
      return why.str();
    }
    if (place.kind == Place::kHost) continue;
    const std::string why =
        Overrun(place, pointer, bytes, side == 0 ? "the copy's destination" : "the copy's source");
    if (!why.empty()) return why;
  }
  return "";
}

}  // namespace

Place Locate(const void* pointer) {
  Arena& arena = TheArena();
  const char* address = static_cast<const char*>(pointer);
  std::lock_guard<std::mutex> lock(arena.mutex);
  Place place;
  auto device = arena.allocations.upper_bound(address);
  if (device != arena.allocations.begin()) {
    --device;
    if (address < device->first + device->second.reserved) {
      place.kind = Place::kDevice;
      place.device = device->second.device;
      place.base = device->first;
      place.size = device->second.size;
      return place;
    }
  }
  auto it = arena.pinned.upper_bound(address);
  if (it != arena.pinned.begin()) {
    --it;
    if (address < it->first + std::max<size_t>(it->second, 1)) {
      place.kind = Place::kPinned;
      place.base = it->first;
      place.size = it->second;
    }
  }
  return place;
}

int CurrentDevice() { return current_device; }

int DeviceCount() { return static_cast<int>(TheArena().visible.size()); }

int PhysicalDevice(int device) { return TheArena().visible.at(device); }

DeviceAccess::DeviceAccess() {
  Arena& arena = TheArena();
  std::lock_guard<std::mutex> lock(arena.mutex);
  if (arena.access_count++ == 0 && !arena.visible.empty()) {
    mprotect(arena.base, arena.per_device * arena.visible.size(), PROT_READ | PROT_WRITE);
  }
}

DeviceAccess::~DeviceAccess() {
  Arena& arena = TheArena();
  std::lock_guard<std::mutex> lock(arena.mutex);
  if (--arena.access_count == 0 && !arena.visible.empty()) {
    mprotect(arena.base, arena.per_device * arena.visible.size(), PROT_NONE);
  }
}

cudaError_t Fail(cudaError_t error, const std::string& why) {
  std::fprintf(stderr, "CUDA emulator: %s\n", why.c_str());
  return Record(error);
}

std::string CheckDeviceRange(const void* pointer, size_t bytes, const char* what) {
  const Place place = Locate(pointer);
  std::ostringstream why;
  if (place.kind == Place::kHost) {
    why << what << " " << pointer << " is host memory that is not pinned; GPU code cannot use it";
  } else if (place.kind == Place::kDevice && place.device != current_device) {
    why << what << " " << pointer << " is GPU " << place.device
        << "'s memory, but the kernel runs on GPU " << current_device;
  } else {
    return Overrun(place, pointer, bytes, what);
  }
  return why.str();
}

void Complain(const char* call, const std::string& why) {
  std::fprintf(stderr, "CUDA emulator: %s: %s\n", call, why.c_str());
}

bool UsableOnDevice(const char* call, const void* pointer, size_t bytes, const char* what) {
  const std::string why = CheckDeviceRange(pointer, bytes, what);
  if (why.empty()) return true;
  Complain(call, why);
  return false;
}

bool HostScalar(const char* call, const char* name, const void* pointer) {
  if (pointer != nullptr && Locate(pointer).kind != Place::kDevice) return true;
  std::fprintf(stderr,
               "CUDA emulator: %s: %s must be a host pointer (the library reads it on the "
               "host), got %p\n",
               call, name, pointer);
  return false;
}

bool MadeOnCurrentDevice(const char* call, const char* what, int device) {
  if (device == current_device) return true;
  std::fprintf(stderr, "CUDA emulator: %s: a %s made on GPU %d is used on GPU %d\n", call, what,
               device, current_device);
  return false;
}

}  // namespace caffe_emu

using caffe_emu::Fail;
using caffe_emu::TheArena;

cudaError_t cudaGetDeviceCount(int* count) {
  *count = caffe_emu::DeviceCount();
  return *count == 0 ? caffe_emu::Record(cudaErrorNoDevice) : cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  *device = caffe_emu::current_device;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (!caffe_emu::ValidDevice(device)) return caffe_emu::Record(cudaErrorInvalidDevice);
  const cudaError_t entered = caffe_emu::EnterDevice(device);
  if (entered != cudaSuccess) return entered;
  caffe_emu::current_device = device;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (!caffe_emu::ValidDevice(device)) return caffe_emu::Record(cudaErrorInvalidDevice);
  std::memset(prop, 0, sizeof(*prop));
  std::snprintf(prop->name, sizeof(prop->name), "CUDA emulator (host memory)");
  // The same GPU has the same UUID whichever index CUDA_VISIBLE_DEVICES gives it.
  const int physical = caffe_emu::PhysicalDevice(device);
  for (int i = 0; i < 16; ++i) prop->uuid.bytes[i] = static_cast<char>(physical * 16 + i);
  prop->totalGlobalMem = TheArena().per_device;
  prop->sharedMemPerBlock = 48 << 10;
  prop->regsPerBlock = 65536;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = 1024;
  prop->maxThreadsDim[2] = 64;
  prop->maxGridSize[0] = 0x7fffffff;
  prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
  prop->totalConstMem = 65536;
  prop->major = 9;
  prop->minor = 0;
  prop->multiProcessorCount = 1;
  prop->asyncEngineCount = 1;
  prop->pciBusID = physical;
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  auto& arena = TheArena();
  if (!caffe_emu::ValidDevice(caffe_emu::current_device)) {
    return caffe_emu::Record(cudaErrorNoDevice);
  }
  std::lock_guard<std::mutex> lock(arena.mutex);
  *total_bytes = arena.per_device;
  *free_bytes = arena.per_device - arena.used[caffe_emu::current_device];
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** ptr, size_t bytes) {
  auto& arena = TheArena();
  *ptr = nullptr;
  const int device = caffe_emu::current_device;
  if (!caffe_emu::ValidDevice(device)) return caffe_emu::Record(cudaErrorNoDevice);
  if (bytes == 0) return cudaSuccess;
  const size_t rounded = caffe_emu::RoundUp(bytes, caffe_emu::kAlignment);
  char* block = nullptr;
  {
    std::lock_guard<std::mutex> lock(arena.mutex);
    auto& free_list = arena.free_lists[device];
    for (auto it = free_list.begin(); it != free_list.end(); ++it) {
      if (it->second < rounded) continue;
      const size_t offset = it->first, left = it->second - rounded;
      free_list.erase(it);
      if (left > 0) free_list[offset + rounded] = left;
      block = arena.base + device * arena.per_device + offset;
      arena.allocations[block] = {bytes, rounded, device};
      arena.used[device] += rounded;
      break;
    }
  }
  if (block == nullptr) return caffe_emu::Record(cudaErrorMemoryAllocation);
  {
    caffe_emu::DeviceAccess access;  // fresh device memory holds garbage: here, NaNs
    std::memset(block, caffe_emu::kUninitializedByte, rounded);
  }
  *ptr = block;
  return cudaSuccess;
}

cudaError_t cudaFree(void* ptr) {
  if (ptr == nullptr) return cudaSuccess;
  // cudaFree synchronizes: the block's queued users run first.
  const caffe_emu::Place place = caffe_emu::Locate(ptr);
  if (place.kind == caffe_emu::Place::kDevice) caffe_emu::DrainDevice(place.device);
  auto& arena = TheArena();
  char* block = static_cast<char*>(ptr);
  size_t size = 0, released = 0;
  int device = 0;
  {
    std::lock_guard<std::mutex> lock(arena.mutex);
    auto found = arena.allocations.find(block);
    if (found == arena.allocations.end()) {
      return Fail(cudaErrorInvalidValue, "cudaFree of a pointer that cudaMalloc did not return");
    }
    size = found->second.reserved;
    released = size;
    device = found->second.device;
    arena.allocations.erase(found);
    arena.used[device] -= size;
    auto& free_list = arena.free_lists[device];
    size_t offset = static_cast<size_t>(block - arena.base) - device * arena.per_device;
    auto next = free_list.lower_bound(offset);
    if (next != free_list.end() && next->first == offset + size) {
      size += next->second;
      next = free_list.erase(next);
    }
    if (next != free_list.begin()) {
      auto previous = std::prev(next);
      if (previous->first + previous->second == offset) {
        offset = previous->first;
        size += previous->second;
        free_list.erase(previous);
      }
    }
    free_list[offset] = size;
  }
  // Give the whole huge pages of a large block back to the system.
  const uintptr_t page = uintptr_t{2} << 20;
  const uintptr_t first = caffe_emu::RoundUp(reinterpret_cast<uintptr_t>(block), page);
  const uintptr_t last = (reinterpret_cast<uintptr_t>(block) + released) / page * page;
  if (last > first) {
    madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
  }
  return cudaSuccess;
}

cudaError_t cudaHostAlloc(void** ptr, size_t bytes, unsigned int flags) {
  (void)flags;
  *ptr = nullptr;
  if (posix_memalign(ptr, 4096, bytes == 0 ? 1 : bytes) != 0) {
    return caffe_emu::Record(cudaErrorMemoryAllocation);
  }
  auto& arena = TheArena();
  std::lock_guard<std::mutex> lock(arena.mutex);
  arena.pinned[static_cast<const char*>(*ptr)] = bytes;
  return cudaSuccess;
}

cudaError_t cudaFreeHost(void* ptr) {
  if (ptr == nullptr) return cudaSuccess;
  caffe_emu::DrainDevice(-1);  // synchronizes, as cudaFreeHost does
  auto& arena = TheArena();
  {
    std::lock_guard<std::mutex> lock(arena.mutex);
    if (arena.pinned.erase(static_cast<const char*>(ptr)) == 0) {
      return Fail(cudaErrorInvalidValue,
                  "cudaFreeHost of a pointer that cudaHostAlloc did not "
                  "return");
    }
  }
  std::free(ptr);
  return cudaSuccess;
}

// As CUDA 11 and later: memory the runtime did not allocate is cudaMemoryTypeUnregistered, not an
// error. Pinned memory is reported on the current device (the emulator's is portable).
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  if (attributes == nullptr) return Fail(cudaErrorInvalidValue, "cudaPointerGetAttributes: null");
  const caffe_emu::Place place = caffe_emu::Locate(ptr);
  void* pointer = const_cast<void*>(ptr);
  switch (place.kind) {
    case caffe_emu::Place::kDevice:
      *attributes = {cudaMemoryTypeDevice, place.device, pointer, nullptr};
      break;
    case caffe_emu::Place::kPinned:
      *attributes = {cudaMemoryTypeHost, caffe_emu::CurrentDevice(), pointer, pointer};
      break;
    case caffe_emu::Place::kHost:
      *attributes = {cudaMemoryTypeUnregistered, -1, nullptr, nullptr};
      break;
  }
  return cudaSuccess;
}

namespace caffe_emu {
namespace {

std::function<void()> CopyWork(void* dst, const void* src, size_t bytes) {
  return [dst, src, bytes] {
    DeviceAccess access;
    std::memmove(dst, src, bytes);
  };
}

// The checks both copy calls make; cudaSuccess when the copy may go ahead.
cudaError_t CheckCopyCall(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (kind < cudaMemcpyHostToHost || kind > cudaMemcpyDefault) {
    return Record(cudaErrorInvalidMemcpyDirection);
  }
  const std::string why = CheckCopy(dst, src, bytes, kind);
  return why.empty() ? cudaSuccess : Fail(cudaErrorInvalidValue, why);
}

}  // namespace
}  // namespace caffe_emu

// On the default stream. Between device buffers it returns at once, as in CUDA; a copy that
// involves host memory returns when done.
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  if (bytes == 0) return cudaSuccess;
  const cudaError_t checked = caffe_emu::CheckCopyCall(dst, src, bytes, kind);
  if (checked != cudaSuccess) return checked;
  caffe_emu::Issue(nullptr, caffe_emu::CopyWork(dst, src, bytes));
  const bool between_devices = caffe_emu::Locate(dst).kind == caffe_emu::Place::kDevice &&
                               caffe_emu::Locate(src).kind == caffe_emu::Place::kDevice;
  if (!between_devices) caffe_emu::Drain(nullptr);
  return cudaSuccess;
}

// Queued on `stream`, except as CUDA treats pageable (not pinned) host memory: from it, the data
// is taken at the call; into it, the call returns when the copy is done.
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  if (!caffe_emu::KnownStream(stream)) {
    return Fail(cudaErrorInvalidResourceHandle, "cudaMemcpyAsync on an unknown stream");
  }
  if (bytes == 0) return cudaSuccess;
  const cudaError_t checked = caffe_emu::CheckCopyCall(dst, src, bytes, kind);
  if (checked != cudaSuccess) return checked;
  const bool pageable_src = caffe_emu::Locate(src).kind == caffe_emu::Place::kHost;
  const bool pageable_dst = caffe_emu::Locate(dst).kind == caffe_emu::Place::kHost;
  if (pageable_src && !pageable_dst) {
    const char* from = static_cast<const char*>(src);
    caffe_emu::IssueWrite(stream, static_cast<char*>(dst), std::vector<char>(from, from + bytes));
    return cudaSuccess;
  }
  caffe_emu::Issue(stream, caffe_emu::CopyWork(dst, src, bytes));
  if (pageable_dst) caffe_emu::Drain(stream);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* ptr, int value, size_t bytes, cudaStream_t stream) {
  if (!caffe_emu::KnownStream(stream)) {
    return Fail(cudaErrorInvalidResourceHandle, "cudaMemsetAsync on an unknown stream");
  }
  if (bytes == 0) return cudaSuccess;
  if (!caffe_emu::UsableOnDevice("cudaMemset", ptr, bytes, "the pointer")) {
    return caffe_emu::Record(cudaErrorInvalidValue);
  }
  caffe_emu::Issue(stream, [ptr, value, bytes] {
    caffe_emu::DeviceAccess access;
    std::memset(ptr, value, bytes);
  });
  return cudaSuccess;
}

// Queued on the default stream; returns at once except on pinned host memory, as in CUDA.
cudaError_t cudaMemset(void* ptr, int value, size_t bytes) {
  const cudaError_t status = cudaMemsetAsync(ptr, value, bytes, nullptr);
  if (status == cudaSuccess && bytes > 0 &&
      caffe_emu::Locate(ptr).kind == caffe_emu::Place::kPinned) {
    caffe_emu::Drain(nullptr);
  }
  return status;
}

cudaError_t cudaGetLastError() {
  const cudaError_t error = caffe_emu::last_error;
  caffe_emu::last_error = cudaSuccess;
  return error;
}

cudaError_t cudaPeekAtLastError() { return caffe_emu::last_error; }

cudaError_t cudaDriverGetVersion(int* version) {
  if (version == nullptr) return caffe_emu::Record(cudaErrorInvalidValue);
  *version = 13000;  // CUDA 13.0, whose API the emulator follows
  return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* version) { return cudaDriverGetVersion(version); }

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorMemoryAllocation:
      return "out of memory";
    case cudaErrorInitializationError:
      return "initialization error";
    case cudaErrorInvalidConfiguration:
      return "invalid configuration argument";
    case cudaErrorInvalidDevicePointer:
      return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection:
      return "invalid copy direction for memcpy";
    case cudaErrorDevicesUnavailable:
      return "CUDA-capable device(s) is/are busy or unavailable";
    case cudaErrorNoDevice:
      return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice:
      return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle:
      return "invalid resource handle";
    case cudaErrorNotReady:
      return "device not ready";
    case cudaErrorIllegalAddress:
      return "an illegal memory access was encountered";
    case cudaErrorLaunchFailure:
      return "unspecified launch failure";
  }
  return "unknown error";
}
