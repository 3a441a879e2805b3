#include "caffe/kernels/thread_scratch.hpp"

#include <glog/logging.h>

#include <cstdlib>

namespace caffe {

void* ThreadScratch(ScratchUser user, int slot, size_t bytes) {
  struct Buffer {
    void* data = nullptr;
    size_t bytes = 0;
    ~Buffer() { std::free(data); }
  };
  constexpr int kUsers = static_cast<int>(ScratchUser::kUsers);
  thread_local Buffer buffers[kUsers][kScratchSlots];
  CHECK(slot >= 0 && slot < kScratchSlots) << "scratch slot " << slot << " of " << kScratchSlots;
  Buffer& buffer = buffers[static_cast<int>(user)][slot];
  if (buffer.bytes < bytes) {
    std::free(buffer.data);
    buffer.bytes = (bytes + 63) / 64 * 64;
    buffer.data = std::aligned_alloc(64, buffer.bytes);
    CHECK(buffer.data) << "out of memory allocating " << buffer.bytes << " bytes of scratch";
  }
  return buffer.data;
}

}  // namespace caffe
