// The GPU's caching allocator (memory/gpu_memory.hpp): freed blocks are reused by size class, a
// budget caps what Caffe holds, and a net that does not fit its budget fails with one error
// naming the layer, the pass and the bytes asked for. Skips without a GPU.
#include <string>

#include "caffe/io/io.hpp"
#include "caffe/memory/syncedmem.hpp"
#include "caffe/net.hpp"
#include "caffe/test/gpu_layer_check.hpp"
#ifndef CPU_ONLY
#include "caffe/memory/gpu_memory.hpp"
#endif

namespace caffe {

class GpuMemoryTest : public GpuLayerTest<float> {
 protected:
  void SetUp() override {
    GpuLayerTest<float>::SetUp();
    if (IsSkipped()) return;
#ifndef CPU_ONLY
    Caffe::SetDevice(0);
    GpuMemory::SetBudget(0, 0);
#endif
  }
  void TearDown() override {
#ifndef CPU_ONLY
    if (Caffe::GpuAvailable()) GpuMemory::SetBudget(0, 0);
#endif
    GpuLayerTest<float>::TearDown();
  }
};

#ifdef CPU_ONLY

TEST_F(GpuMemoryTest, NeedsAGpuBuild) { GTEST_SKIP() << "CPU-only build: no GPU allocator"; }

#else

TEST_F(GpuMemoryTest, FreedBlocksAreReusedBySizeClass) {
  void* first = GpuMemory::Allocate(1000, 0);
  const size_t in_use = GpuMemory::GetUsage(0).in_use;
  GpuMemory::Free(first, 0);
  EXPECT_EQ(GpuMemory::GetUsage(0).in_use, in_use - 1024);  // 1000 is served from 1024
  void* second = GpuMemory::Allocate(1010, 0);              // the same size class
  EXPECT_EQ(second, first);
  GpuMemory::Free(second, 0);
}

TEST_F(GpuMemoryTest, SyncedMemoryTakesItsDeviceSideFromTheAllocator) {
  const size_t before = GpuMemory::GetUsage(0).in_use;
  {
    SyncedMemory memory(3 << 20);
    memory.mutable_gpu_data();
    EXPECT_EQ(GpuMemory::GetUsage(0).in_use, before + (4 << 20));  // 2 MiB granules above 1 MiB
  }
  EXPECT_EQ(GpuMemory::GetUsage(0).in_use, before);
}

TEST_F(GpuMemoryTest, TheBudgetIsEnforcedWithAClearError) {
  // Blocks earlier tests of this process left in the cache would count as room otherwise.
  GpuMemory::ReleaseCache(0);
  GpuMemory::SetBudget(0, GpuMemory::GetUsage(0).reserved + (8 << 20));
  void* fits = GpuMemory::Allocate(6 << 20, 0);
  try {
    GpuMemory::Allocate(6 << 20, 0);
    ADD_FAILURE() << "12 MiB fitted into an 8 MiB budget";
  } catch (const Error& error) {
    const std::string message = error.what();
    const std::string expected =
        "out of GPU memory: could not allocate 6.0 MiB (6291456 bytes) on GPU 0";
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
  GpuMemory::Free(fits, 0);
}

TEST_F(GpuMemoryTest, ANetTooLargeForItsBudgetNamesTheLayerAndTheBytes) {
  NetParameter param;
  ParseProtoFromText(R"(
    layer { name: "data" type: "Input" top: "data"
            input_param { shape { dim: 64 dim: 3 dim: 224 dim: 224 } } }
    layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
            convolution_param { num_output: 64 kernel_size: 3 pad: 1 engine: CAFFE } })",
                     "net", &param);
  Caffe::set_mode(Caffe::GPU);
  Net<float> net(param);  // shapes only: nothing is on the GPU yet
  GpuMemory::ReleaseCache(0);
  GpuMemory::SetBudget(0, GpuMemory::GetUsage(0).reserved + (64 << 20));
  try {
    net.Forward();
    ADD_FAILURE() << "a 822 MiB activation fitted into a 64 MiB budget";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.find("forward pass of Convolution layer 'conv1': out of GPU memory: could "
                           "not allocate "),
              0u)
        << message;
    EXPECT_NE(message.find(" bytes) on GPU 0"), std::string::npos) << message;
  }
}

#endif  // CPU_ONLY

}  // namespace caffe
