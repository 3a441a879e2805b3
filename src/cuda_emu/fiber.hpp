// Fibers for the CUDA emulator's cooperative launches: the threads of a block that meet at
// __syncthreads run on their own stacks and switch to the block's scheduler at each barrier. On
// x86-64 a switch saves and restores the callee-saved registers only (glibc's swapcontext also
// makes two system calls for the signal mask, which made barrier-heavy kernels 50x slower);
// elsewhere it is swapcontext.
#ifndef CAFFE_CUDA_EMU_FIBER_HPP_
#define CAFFE_CUDA_EMU_FIBER_HPP_

#include <cstddef>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace caffe_emu {

struct FiberContext {
#if defined(__x86_64__)
  void* stack_pointer = nullptr;
#else
  ucontext_t context;
#endif
};

/// Prepares `fiber` to run `entry` on `stack` when first switched to. `entry` must never return:
/// it ends by switching away for good.
void StartFiber(FiberContext* fiber, char* stack, size_t stack_bytes, void (*entry)());

/// Saves the running context in `from` and resumes `to`.
void SwitchFiber(FiberContext* from, FiberContext* to);

}  // namespace caffe_emu

#endif  // CAFFE_CUDA_EMU_FIBER_HPP_
