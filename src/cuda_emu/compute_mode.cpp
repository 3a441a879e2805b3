// Compute modes of the emulated GPUs (docs/CUDA_EMU.md). CAFFE_CUDA_EMU_EXCLUSIVE lists emulated
// GPUs (by their numbers among CAFFE_CUDA_EMU_DEVICES, whatever CUDA_VISIBLE_DEVICES says) in
// exclusive-process compute mode: the first process to make one current holds it until it exits,
// and cudaSetDevice on it in any other process fails with cudaErrorDevicesUnavailable, as CUDA 12
// and later fail it (cudaSetDevice creates the device's context there). Processes meet through an
// flock on a file per GPU in $TMPDIR (default /tmp), so they see each other as on one machine.
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>
#include <string>

#include "emu_state.hpp"

namespace caffe_emu {
namespace {

std::set<int> ExclusiveDevices() {
  std::set<int> devices;
  if (const char* text = std::getenv("CAFFE_CUDA_EMU_EXCLUSIVE")) {
    std::stringstream list(text);
    std::string item;
    while (std::getline(list, item, ',')) {
      if (!item.empty()) devices.insert(std::atoi(item.c_str()));
    }
  }
  return devices;
}

std::string LockPath(int physical) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/caffe_cuda_emu_gpu" +
         std::to_string(physical) + ".lock";
}

// The process that holds the lock file's GPU, as it wrote itself there; 0 if unknown.
long Holder(int fd) {
  char text[32] = {};
  const ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
  return n > 0 ? std::atol(text) : 0;
}

}  // namespace

bool Exclusive(int physical) {
  static const std::set<int> devices = ExclusiveDevices();
  return devices.count(physical) > 0;
}

cudaError_t EnterDevice(int device) {
  const int physical = PhysicalDevice(device);
  if (!Exclusive(physical)) return cudaSuccess;
  static std::mutex mutex;
  static std::set<int> held;  // by this process; the lock files stay open until it exits
  std::lock_guard<std::mutex> lock(mutex);
  if (held.count(physical) > 0) return cudaSuccess;
  const std::string path = LockPath(physical);
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return Fail(cudaErrorDevicesUnavailable, "cannot open " + path);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const long holder = Holder(fd);
    close(fd);
    return Fail(cudaErrorDevicesUnavailable,
                "GPU " + std::to_string(device) + " is in exclusive-process compute mode and " +
                    (holder > 0 ? "process " + std::to_string(holder) : "another process") +
                    " holds it");
  }
  const std::string pid = std::to_string(getpid());  // for a later process's message
  if (ftruncate(fd, 0) == 0) (void)!pwrite(fd, pid.data(), pid.size(), 0);
  held.insert(physical);
  return cudaSuccess;
}

}  // namespace caffe_emu

// Only the compute mode is emulated.
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attribute, int device) {
  if (device < 0 || device >= caffe_emu::DeviceCount()) {
    return caffe_emu::Fail(cudaErrorInvalidDevice,
                           "cudaDeviceGetAttribute: no GPU " + std::to_string(device));
  }
  if (attribute != cudaDevAttrComputeMode) {
    return caffe_emu::Fail(cudaErrorInvalidValue,
                           "cudaDeviceGetAttribute: attribute " + std::to_string(attribute) +
                               " is not emulated (cudaDevAttrComputeMode is)");
  }
  *value = caffe_emu::Exclusive(caffe_emu::PhysicalDevice(device)) ? cudaComputeModeExclusiveProcess
                                                                   : cudaComputeModeDefault;
  return cudaSuccess;
}
