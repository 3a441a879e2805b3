// Kernel launches in the CUDA emulator. rewrite_launches.py turns each `kernel<<<config>>>(args)`
// of a .cu file into
//   ::caffe_emu::Launch(::caffe_emu::MakeConfig(config), cooperative,
//                       [&](auto&&... a) { kernel(a...); }, args);
// so the arguments are evaluated once, as for a real launch, and the kernel's template arguments
// are deduced from them as nvcc deduces them. `cooperative` is true in files whose kernels call
// __syncthreads: their blocks run as fibers that meet at each barrier.
#ifndef CAFFE_CUDA_EMU_LAUNCH_HPP_
#define CAFFE_CUDA_EMU_LAUNCH_HPP_

#include <cstddef>
#include <memory>
#include <type_traits>

namespace caffe_emu {

struct Config {
  dim3 grid;
  dim3 block;
  size_t shared_bytes;
  cudaStream_t stream;
};

inline Config MakeConfig(dim3 grid, dim3 block, size_t shared_bytes = 0,
                         cudaStream_t stream = nullptr) {
  return Config{grid, block, shared_bytes, stream};
}

/// The order in which a grid's blocks, and a block's threads, run: forward (block 0 first, and in
/// it thread 0 first; also between barriers) or reverse (the last first). A GPU promises neither,
/// so a kernel whose result differs between the two reads what another thread of its launch
/// writes, or has two threads write one place: a race on a GPU.
enum class ThreadOrder { kForward, kReverse };

/// Sets the order of later launches' runs and returns the previous one. It starts as
/// CAFFE_CUDA_EMU_ORDER says (`forward`, the default, or `reverse`).
ThreadOrder SetThreadOrder(ThreadOrder order);

/// False, with cudaErrorInvalidConfiguration (or InvalidValue) recorded as a GPU records it, when
/// `config` cannot launch.
bool ValidLaunch(const Config& config);

/// Queues on `config.stream` a run of `body(context)` for every thread of the grid, with
/// threadIdx and friends set (docs/CUDA_EMU.md: it runs when something waits for the stream).
void IssueGrid(const Config& config, bool cooperative, void (*body)(void*),
               std::shared_ptr<void> context);

/// Stops the process with a message when `pointer`, given as kernel argument `index`, is memory
/// that a kernel on the current GPU cannot read: host memory that is not pinned, or another GPU's
/// memory. Null pointers and pinned host memory (mapped, with unified addressing) are fine.
void CheckKernelPointer(const void* pointer, int index);

template <typename T>
void CheckKernelArgument(const T& value, int index) {
  if constexpr (std::is_pointer_v<T>) CheckKernelPointer(value, index);
}

template <typename Body, typename... Args>
void Launch(const Config& config, bool cooperative, Body body, Args... args) {
  int index = 0;
  (CheckKernelArgument(args, index++), ...);
  if (!ValidLaunch(config)) return;
  // The arguments as the launch evaluated them, kept until the queued grid runs.
  auto thread = [body, args...]() mutable { body(args...); };
  auto kept = std::make_shared<decltype(thread)>(std::move(thread));
  IssueGrid(
      config, cooperative, [](void* context) { (*static_cast<decltype(thread)*>(context))(); },
      std::move(kept));
}

}  // namespace caffe_emu

#endif  // CAFFE_CUDA_EMU_LAUNCH_HPP_
