#include "fiber.hpp"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)

// caffe_emu_switch(void** save, void* load): pushes the System V callee-saved registers and the
// SSE/x87 control words, stores the stack pointer in *save, loads `load` and pops the same.
asm(R"(
  .text
  .p2align 4
  .type caffe_emu_switch, @function
caffe_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size caffe_emu_switch, .-caffe_emu_switch
)");

extern "C" void caffe_emu_switch(void** save, void* load);

namespace caffe_emu {

void StartFiber(FiberContext* fiber, char* stack, size_t stack_bytes, void (*entry)()) {
  // The first switch pops the control words and six registers, then "returns" into entry with
  // the stack aligned as after a call (rsp + 8 a multiple of 16).
  uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + stack_bytes) & ~uintptr_t{15};
  // Nine slots: control words, r15, r14, r13, r12, rbx, rbp, entry, and a null return address
  // for entry (it never returns), so entry's slot is 16 bytes below the aligned top.
  auto* slots = reinterpret_cast<uint64_t*>(top) - 9;
  std::memset(slots, 0, 9 * sizeof(uint64_t));
  const uint32_t control[2] = {0x1f80, 0x037f};  // MXCSR and x87 control word at reset
  std::memcpy(&slots[0], control, sizeof(control));
  slots[7] = reinterpret_cast<uint64_t>(entry);
  fiber->stack_pointer = slots;
}

void SwitchFiber(FiberContext* from, FiberContext* to) {
  caffe_emu_switch(&from->stack_pointer, to->stack_pointer);
}

}  // namespace caffe_emu

#else

namespace caffe_emu {

// getcontext and swapcontext return twice, like setjmp: kept in functions of their own.
__attribute__((noinline)) void StartFiber(FiberContext* fiber, char* stack, size_t stack_bytes,
                                          void (*entry)()) {
  getcontext(&fiber->context);
  fiber->context.uc_stack.ss_sp = stack;
  fiber->context.uc_stack.ss_size = stack_bytes;
  fiber->context.uc_link = nullptr;
  makecontext(&fiber->context, entry, 0);
}

__attribute__((noinline)) void SwitchFiber(FiberContext* from, FiberContext* to) {
  swapcontext(&from->context, &to->context);
}

}  // namespace caffe_emu

#endif
