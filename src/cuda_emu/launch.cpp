// Kernel execution in the CUDA emulator: a launch is queued on its stream (streams.hpp); when it
// runs, every thread of the grid runs, one after another, on the host thread that runs it. A
// cooperative launch (kernels that call __syncthreads) runs each block's threads as fibers: each
// runs until its next barrier, and the block moves on once all have arrived, which is what
// __syncthreads guarantees on a GPU. CAFFE_CUDA_EMU_ORDER=reverse runs blocks and threads last
// first instead (SetThreadOrder).
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <vector>

#include "emu_state.hpp"
#include "fiber.hpp"
#include "streams.hpp"

CAFFE_EMU_TLS uint3 threadIdx;
CAFFE_EMU_TLS uint3 blockIdx;
CAFFE_EMU_TLS dim3 blockDim;
CAFFE_EMU_TLS dim3 gridDim;

namespace caffe_emu {

namespace {

constexpr size_t kFiberStackBytes = 256 << 10;

// The cooperative block running on this host thread, if any.
struct Block {
  FiberContext scheduler;
  std::vector<FiberContext> fibers;
  std::vector<char> finished;
  int running = -1;
  void (*body)(void*) = nullptr;
  void* context = nullptr;
};
thread_local Block* cooperative_block = nullptr;
thread_local std::vector<std::unique_ptr<char[]>> fiber_stacks;

ThreadOrder InitialOrder() {
  const char* text = std::getenv("CAFFE_CUDA_EMU_ORDER");
  if (text == nullptr || *text == '\0' || std::strcmp(text, "forward") == 0) {
    return ThreadOrder::kForward;
  }
  if (std::strcmp(text, "reverse") == 0) return ThreadOrder::kReverse;
  std::fprintf(stderr,
               "CUDA emulator: CAFFE_CUDA_EMU_ORDER=%s is neither forward nor reverse; "
               "running threads forward\n",
               text);
  return ThreadOrder::kForward;
}
std::atomic<ThreadOrder> thread_order{InitialOrder()};

// The i-th of n in the order the threads and blocks run in.
unsigned long long InOrder(unsigned long long i, unsigned long long n, ThreadOrder order) {
  return order == ThreadOrder::kReverse ? n - 1 - i : i;
}

[[noreturn]] void Abort(const std::string& why) {
  std::fprintf(stderr, "CUDA emulator: %s\n", why.c_str());
  std::abort();
}

// A fiber's whole life: the thread's kernel body, then back to the scheduler for good.
void FiberEntry() {
  Block* block = cooperative_block;
  const int self = block->running;
  block->body(block->context);
  block->finished[self] = 1;
  SwitchFiber(&block->fibers[self], &block->scheduler);
}

// The x, y, z of the `linear`-th point of `extent`, x varying fastest: a thread of a block, or
// a block of a grid.
uint3 Coordinates(unsigned long long linear, dim3 extent) {
  return {static_cast<unsigned int>(linear % extent.x),
          static_cast<unsigned int>(linear / extent.x % extent.y),
          static_cast<unsigned int>(linear / (1ULL * extent.x * extent.y))};
}

void SetThread(unsigned int linear) { threadIdx = Coordinates(linear, blockDim); }

void RunBlockAsFibers(unsigned int threads, ThreadOrder order, void (*body)(void*), void* context) {
  Block block;
  block.body = body;
  block.context = context;
  block.fibers.resize(threads);
  block.finished.assign(threads, 0);
  while (fiber_stacks.size() < threads) {
    fiber_stacks.emplace_back(new char[kFiberStackBytes]);
  }
  for (unsigned int t = 0; t < threads; ++t) {
    StartFiber(&block.fibers[t], fiber_stacks[t].get(), kFiberStackBytes, FiberEntry);
  }
  cooperative_block = &block;
  for (unsigned int live = threads; live > 0;) {
    unsigned int at_barrier = 0, done = 0;
    for (unsigned int i = 0; i < threads; ++i) {
      const auto t = static_cast<unsigned int>(InOrder(i, threads, order));
      if (block.finished[t]) continue;
      block.running = static_cast<int>(t);
      SetThread(t);
      SwitchFiber(&block.scheduler, &block.fibers[t]);
      if (block.finished[t]) {
        ++done;
      } else {
        ++at_barrier;
      }
    }
    if (at_barrier > 0 && done > 0) {
      Abort(
          "some threads of a block left the kernel while others waited at __syncthreads "
          "(a deadlock or undefined behaviour on a GPU)");
    }
    live = at_barrier;
  }
  cooperative_block = nullptr;
}

// Runs every thread of a grid ValidLaunch accepted.
void RunGrid(const Config& config, bool cooperative, void (*body)(void*), void* context) {
  const dim3 grid = config.grid, block = config.block;
  const unsigned long long threads = 1ULL * block.x * block.y * block.z;
  const unsigned long long blocks = 1ULL * grid.x * grid.y * grid.z;
  const ThreadOrder order = thread_order.load();
  DeviceAccess access;
  gridDim = grid;
  blockDim = block;
  for (unsigned long long i = 0; i < blocks; ++i) {
    blockIdx = Coordinates(InOrder(i, blocks, order), grid);
    if (cooperative) {
      RunBlockAsFibers(static_cast<unsigned int>(threads), order, body, context);
      continue;
    }
    for (unsigned long long t = 0; t < threads; ++t) {
      SetThread(static_cast<unsigned int>(InOrder(t, threads, order)));
      body(context);
    }
  }
}

}  // namespace

ThreadOrder SetThreadOrder(ThreadOrder order) { return thread_order.exchange(order); }

bool ValidLaunch(const Config& config) {
  const dim3 grid = config.grid, block = config.block;
  const unsigned long long threads = 1ULL * block.x * block.y * block.z;
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || threads == 0 || threads > 1024 || block.z > 64 ||
      grid.x > 0x7fffffffu || grid.y > 65535 || grid.z > 65535) {
    std::ostringstream why;
    why << "kernel launch with grid (" << grid.x << ", " << grid.y << ", " << grid.z
        << ") and block (" << block.x << ", " << block.y << ", " << block.z
        << "): invalid configuration";
    Fail(cudaErrorInvalidConfiguration, why.str());
    return false;
  }
  if (config.shared_bytes > 48 * 1024) {
    Fail(cudaErrorInvalidValue, "kernel launch asks for more than 48 KB of dynamic shared memory");
    return false;
  }
  return true;
}

void IssueGrid(const Config& config, bool cooperative, void (*body)(void*),
               std::shared_ptr<void> context) {
  Issue(config.stream, [config, cooperative, body, context] {
    RunGrid(config, cooperative, body, context.get());
  });
}

void CheckKernelPointer(const void* pointer, int index) {
  if (pointer == nullptr) return;
  const std::string why =
      CheckDeviceRange(pointer, 0, ("kernel argument " + std::to_string(index)).c_str());
  if (!why.empty()) Abort(why);
}

}  // namespace caffe_emu

void __syncthreads() {
  caffe_emu::Block* block = caffe_emu::cooperative_block;
  if (block == nullptr) {
    if (1ULL * blockDim.x * blockDim.y * blockDim.z == 1) return;
    caffe_emu::Abort(
        "__syncthreads in a kernel launched without barriers: its file needs "
        "rewrite_launches.py's cooperative launch (does it call __syncthreads "
        "through a helper the script does not know?)");
  }
  caffe_emu::SwitchFiber(&block->fibers[block->running], &block->scheduler);
}
