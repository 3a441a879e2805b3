// main() of the emulator's own test programs: two small emulated GPUs, set before the emulator's
// first call reads them, whatever the caller's environment says.
#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  setenv("CAFFE_CUDA_EMU_DEVICES", "2", 1);
  setenv("CAFFE_CUDA_EMU_MEMORY", "256M", 1);
  unsetenv("CUDA_VISIBLE_DEVICES");
  unsetenv("CAFFE_CUDA_EMU_SYNC");  // the stream tests need queued work
  ::testing::InitGoogleTest(&argc, argv);
  // Death tests fork from a process that may have threads (the emulator's, NCCL's ranks).
  ::testing::GTEST_FLAG(death_test_style) = "threadsafe";
  return RUN_ALL_TESTS();
}
