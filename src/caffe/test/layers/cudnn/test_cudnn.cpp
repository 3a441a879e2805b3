// layers/cudnn/cudnn and layer_engine.hpp: which engine UseCuDNNEngine picks (CPU mode never cuDNN;
// in GPU mode the layer's own engine, else LayerParameter's string engine, else the default; an
// unknown name is an error), the same decisions seen through the layer creators, and, in builds
// with cuDNN, the helpers: data types and scaling factors, CuDNNCanHold, the workspace limit read
// from CAFFE_CUDNN_WORKSPACE_MB, the per-thread handle and workspace, packed tensor descriptors,
// CuDNNActivation, the cases CuDNNConvolution::Configure turns down, its fallback to leaner
// algorithms under a budget, and choosing its algorithms by timing (CAFFE_CUDNN_ALGO=time).
// Engine choice and the host-only helpers run without a GPU; the rest skips where there is none.
// The cuDNN layers themselves are tested in src/caffe/test/layers/cudnn/.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "caffe/lms/memory_manager.hpp"
#include "caffe/memory/cuda_device.hpp"
#include "caffe/memory/gpu_memory.hpp"
#include "caffe/test/cudnn_test_util.hpp"
#include "caffe/test/scoped_env.hpp"

namespace caffe {

namespace {

// A layer whose own engine is decided elsewhere, named 'r', with LayerParameter's string engine.
LayerParameter WithStringEngine(const std::string& engine) {
  LayerParameter param;
  param.set_name("r");
  param.set_type("ReLU");
  param.set_engine(engine);
  return param;
}

}  // namespace

// ---- UseCuDNNEngine (no GPU needed: only the mode is set) ----

class UseCuDNNEngineTest : public ::testing::Test {
 protected:
  void TearDown() override { Caffe::set_mode(Caffe::CPU); }
};

TEST_F(UseCuDNNEngineTest, CpuModeNeverPicksCuDNN) {
  Caffe::set_mode(Caffe::CPU);
  for (const std::string layer_engine : {"DEFAULT", "CAFFE", "CUDNN", "MKLDNN"}) {
    // Not even an unknown string engine is looked at in CPU mode.
    for (const std::string string_engine : {"", "CUDNN", "caffe", "FASTEST"}) {
      EXPECT_FALSE(UseCuDNNEngine(WithStringEngine(string_engine), layer_engine))
          << layer_engine << " / '" << string_engine << "'";
    }
  }
}

TEST_F(UseCuDNNEngineTest, GpuModeFollowsTheLayersOwnEngine) {
  Caffe::set_mode(Caffe::GPU);
  const LayerParameter param = WithStringEngine("");
  EXPECT_EQ(CuDNNBuilt(), UseCuDNNEngine(param, "DEFAULT"));
  EXPECT_EQ(CuDNNBuilt(), UseCuDNNEngine(param, "CUDNN"));
  EXPECT_FALSE(UseCuDNNEngine(param, "CAFFE"));
  // The CPU engines' names say nothing about GPUs: the GPU default.
  EXPECT_EQ(CuDNNBuilt(), UseCuDNNEngine(param, "MKLDNN"));
  EXPECT_EQ(CuDNNBuilt(), UseCuDNNEngine(param, "MKL2017"));
  // A layer engine other than DEFAULT wins over the string.
  EXPECT_FALSE(UseCuDNNEngine(WithStringEngine("CUDNN"), "CAFFE"));
  EXPECT_EQ(CuDNNBuilt(), UseCuDNNEngine(WithStringEngine("CAFFE"), "CUDNN"));
}

TEST_F(UseCuDNNEngineTest, GpuModeReadsTheStringEngineWhenTheLayersIsDefault) {
  Caffe::set_mode(Caffe::GPU);
  EXPECT_FALSE(UseCuDNNEngine(WithStringEngine("CAFFE"), "DEFAULT"));
  EXPECT_FALSE(UseCuDNNEngine(WithStringEngine("caffe"), "DEFAULT"));
  for (const std::string engine :
       {"", "CUDNN", "cudnn", "MKLDNN", "MKLDNN:DLCP", "MKL2017", "DNNL", "ONEDNN"}) {
    EXPECT_EQ(CuDNNBuilt(), UseCuDNNEngine(WithStringEngine(engine), "DEFAULT"))
        << "'" << engine << "'";
  }
}

TEST_F(UseCuDNNEngineTest, GpuModeRejectsAnUnknownStringEngine) {
  Caffe::set_mode(Caffe::GPU);
  try {
    UseCuDNNEngine(WithStringEngine("FASTEST"), "DEFAULT");
    ADD_FAILURE() << "engine 'FASTEST' was accepted";
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("layer 'r'"), std::string::npos) << message;
    EXPECT_NE(message.find("FASTEST"), std::string::npos) << message;
  }
}

// ---- The same decisions through the layer creators ----

// Runs without a GPU: creating a layer touches no device.
template <typename Dtype>
class CuDNNCreatorTest : public ::testing::Test {
 protected:
  void TearDown() override { Caffe::set_mode(Caffe::CPU); }
};
TYPED_TEST_SUITE(CuDNNCreatorTest, TestDtypes);

TYPED_TEST(CuDNNCreatorTest, CpuModeNeverBuildsCuDNNLayers) {
  for (const std::string& type : CuDNNEngineLayerTypes()) {
    ExpectCpuModeNeverBuildsCuDNN<TypeParam>(type);
  }
}

TYPED_TEST(CuDNNCreatorTest, UnknownStringEngineInGpuModeIsAnError) {
  Caffe::set_mode(Caffe::GPU);
  const LayerParameter param = ParseLayerParam("name: 'r' type: 'ReLU' engine: 'FASTEST'");
  EXPECT_THROW(LayerRegistry<TypeParam>::CreateLayer(param), Error);
}

template <typename Dtype>
class CuDNNGpuCreatorTest : public GpuLayerTest<Dtype> {};
TYPED_TEST_SUITE(CuDNNGpuCreatorTest, TestDtypes);

TYPED_TEST(CuDNNGpuCreatorTest, GpuModeReadsLayerParameterStringEngine) {
  Caffe::set_mode(Caffe::GPU);
  // LayerParameter's string engine (Intel Caffe's field) when the layer's own is DEFAULT.
  std::shared_ptr<Layer<TypeParam>> caffe_named = LayerRegistry<TypeParam>::CreateLayer(
      ParseLayerParam("name: 'r' type: 'ReLU' engine: 'CAFFE'"));
  EXPECT_FALSE(IsCuDNNLayer(caffe_named.get()));
  std::shared_ptr<Layer<TypeParam>> cudnn_named = LayerRegistry<TypeParam>::CreateLayer(
      ParseLayerParam("name: 'r' type: 'ReLU' engine: 'cudnn'"));
  EXPECT_EQ(CuDNNBuilt(), IsCuDNNLayer(cudnn_named.get()));
  // A CPU engine's name says nothing about the GPU: the GPU default.
  std::shared_ptr<Layer<TypeParam>> mkldnn_named = LayerRegistry<TypeParam>::CreateLayer(
      ParseLayerParam("name: 'c' type: 'Convolution' engine: 'MKLDNN' "
                      "convolution_param { num_output: 2 kernel_size: 3 }"));
  EXPECT_EQ(CuDNNBuilt(), IsCuDNNLayer(mkldnn_named.get()));
}

#ifdef USE_CUDNN

// ---- Host-only helpers (no GPU needed) ----

TEST(CuDNNHelpersTest, DataTypesAndScalingFactors) {
  EXPECT_EQ(CUDNN_DATA_FLOAT, CuDNNDataType<float>());
  EXPECT_EQ(CUDNN_DATA_DOUBLE, CuDNNDataType<double>());
  EXPECT_EQ(1.0f, *static_cast<const float*>(CuDNNOne<float>()));
  EXPECT_EQ(0.0f, *static_cast<const float*>(CuDNNZero<float>()));
  EXPECT_EQ(1.0, *static_cast<const double*>(CuDNNOne<double>()));
  EXPECT_EQ(0.0, *static_cast<const double*>(CuDNNZero<double>()));
  EXPECT_EQ(CuDNNOne<float>(), CuDNNOne(CUDNN_DATA_FLOAT));
  EXPECT_EQ(CuDNNZero<float>(), CuDNNZero(CUDNN_DATA_FLOAT));
  EXPECT_EQ(CuDNNOne<double>(), CuDNNOne(CUDNN_DATA_DOUBLE));
  EXPECT_EQ(CuDNNZero<double>(), CuDNNZero(CUDNN_DATA_DOUBLE));
}

TEST(CuDNNHelpersTest, CanHoldNonEmptyIntIndexableTensors) {
  EXPECT_FALSE(CuDNNCanHold(0));
  EXPECT_FALSE(CuDNNCanHold(-1));
  EXPECT_TRUE(CuDNNCanHold(1));
  EXPECT_TRUE(CuDNNCanHold(0x7fffffffL));
  EXPECT_FALSE(CuDNNCanHold(0x80000000L));
}

TEST(CuDNNHelpersTest, NoWorkspaceForZeroBytes) { EXPECT_EQ(nullptr, CuDNNWorkspace(0)); }

namespace {

// A 2-D convolution of 2 x 4 x 9 x 8 images with 3 x 3 filters, unpadded, stride 1: 7 x 6 out.
CuDNNConvolution::Geometry SmallGeometry() {
  CuDNNConvolution::Geometry geometry;
  geometry.type = CUDNN_DATA_FLOAT;
  geometry.num = 2;
  geometry.image_channels = 4;
  geometry.output_channels = 6;
  geometry.group = 2;
  geometry.image_spatial = {9, 8};
  geometry.output_spatial = {7, 6};
  geometry.kernel = {3, 3};
  geometry.pad = {0, 0};
  geometry.stride = {1, 1};
  geometry.dilation = {1, 1};
  return geometry;
}

}  // namespace

TEST(CuDNNHelpersTest, ConvolutionGeometriesCompareByEveryField) {
  const CuDNNConvolution::Geometry geometry = SmallGeometry();
  EXPECT_TRUE(geometry == SmallGeometry());
  CuDNNConvolution::Geometry dilated = SmallGeometry();
  dilated.dilation = {1, 2};
  EXPECT_FALSE(geometry == dilated);
  CuDNNConvolution::Geometry in_double = SmallGeometry();
  in_double.type = CUDNN_DATA_DOUBLE;
  EXPECT_FALSE(geometry == in_double);
}

TEST(CuDNNHelpersTest, ConvolutionTurnsDownMoreThanThreeAxesAndNoGroups) {
  // Both are refused before cuDNN is called.
  CuDNNConvolution four_axes;
  CuDNNConvolution::Geometry geometry = SmallGeometry();
  geometry.image_spatial = {3, 4, 3, 4};
  geometry.output_spatial = {2, 3, 2, 3};
  geometry.kernel = {2, 2, 2, 2};
  geometry.pad = {0, 0, 0, 0};
  geometry.stride = {1, 1, 1, 1};
  geometry.dilation = {1, 1, 1, 1};
  EXPECT_FALSE(four_axes.Configure(geometry));
  CuDNNConvolution no_groups;
  geometry = SmallGeometry();
  geometry.group = 0;
  EXPECT_FALSE(no_groups.Configure(geometry));
}

// ---- The workspace limit ----

namespace {

// CuDNNWorkspaceLimit() reads CAFFE_CUDNN_WORKSPACE_MB once per process, so each value is read in
// a fresh process: a death test in the "threadsafe" style re-executes this binary. The child
// prints the limit (or the error) and exits 0.
void PrintWorkspaceLimitAndExit(const char* megabytes) {
  if (megabytes == nullptr) {
    unsetenv("CAFFE_CUDNN_WORKSPACE_MB");
  } else {
    setenv("CAFFE_CUDNN_WORKSPACE_MB", megabytes, /*overwrite=*/1);
  }
  try {
    std::fprintf(stderr, "limit %zu bytes\n", CuDNNWorkspaceLimit());
  } catch (const Error& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
  }
  std::exit(0);
}

}  // namespace

TEST(CuDNNWorkspaceLimitDeathTest, ComesFromTheEnvironmentInMiB) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // 64 MiB = 67108864 bytes unless the environment says otherwise.
  EXPECT_EXIT(PrintWorkspaceLimitAndExit(nullptr), ::testing::ExitedWithCode(0),
              "limit 67108864 bytes");
  EXPECT_EXIT(PrintWorkspaceLimitAndExit(""), ::testing::ExitedWithCode(0), "limit 67108864 bytes");
  EXPECT_EXIT(PrintWorkspaceLimitAndExit("3"), ::testing::ExitedWithCode(0), "limit 3145728 bytes");
  EXPECT_EXIT(PrintWorkspaceLimitAndExit("0"), ::testing::ExitedWithCode(0), "limit 0 bytes");
  EXPECT_EXIT(PrintWorkspaceLimitAndExit("4096"), ::testing::ExitedWithCode(0),
              "limit 4294967296 bytes");
}

TEST(CuDNNWorkspaceLimitDeathTest, RejectsWhatIsNotAWholeNumberOfMiB) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (const char* bad : {"12abc", "-1", "1.5", "lots"}) {
    EXPECT_EXIT(PrintWorkspaceLimitAndExit(bad), ::testing::ExitedWithCode(0),
                "error: .*CAFFE_CUDNN_WORKSPACE_MB is .*must be a whole number of MiB")
        << bad;
  }
}

// ---- Helpers that need a GPU ----

class CuDNNDeviceTest : public GpuLayerTest<float> {};

TEST_F(CuDNNDeviceTest, HandleIsMadeOncePerThread) {
  cudnnHandle_t handle = CuDNNHandle();
  EXPECT_NE(nullptr, handle);
  EXPECT_EQ(handle, CuDNNHandle());
  cudnnHandle_t other_thread_handle = nullptr;
  std::thread other([&other_thread_handle] { other_thread_handle = CuDNNHandle(); });
  other.join();
  EXPECT_NE(nullptr, other_thread_handle);
  EXPECT_NE(handle, other_thread_handle);
}

TEST_F(CuDNNDeviceTest, WorkspaceGrowsAndNeverShrinks) {
  const size_t kMiB = size_t(1) << 20;
  void* first = CuDNNWorkspace(kMiB);
  ASSERT_NE(nullptr, first);
  EXPECT_EQ(first, CuDNNWorkspace(1024));  // smaller: the same buffer
  EXPECT_EQ(first, CuDNNWorkspace(kMiB));
  void* grown = CuDNNWorkspace(4 * kMiB);
  ASSERT_NE(nullptr, grown);
  CUDA_CHECK(cudaMemset(grown, 0, 4 * kMiB));  // all of it is usable
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(grown, CuDNNWorkspace(2 * kMiB));
}

// The workspace is held within the GPU's budget: from Caffe's caching allocator, or from the
// thread's LMS manager when one is installed (so -gpu_mem_limit counts it). Each case runs in a
// new thread, whose cuDNN state starts empty and is dropped when it ends.
TEST_F(CuDNNDeviceTest, WorkspaceComesFromTheAllocatorThatHoldsTheBudget) {
  const size_t kMiB = size_t(1) << 20;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const size_t before = GpuMemory::GetUsage(device).in_use;
  size_t with_workspace = 0, manager_in_use = 0, manager_after = 0, back_in_gpu_memory = 0;
  std::thread worker([&] {
    CUDA_CHECK(cudaSetDevice(device));
    ASSERT_NE(nullptr, CuDNNWorkspace(8 * kMiB));
    with_workspace = GpuMemory::GetUsage(device).in_use;
    lms::Options options;
    options.budget = 64 * kMiB;
    auto manager =
        std::make_shared<lms::MemoryManager>(std::make_unique<CudaDevice>(device), options);
    lms::MemoryManager::Install(manager);
    ASSERT_NE(nullptr, CuDNNWorkspace(8 * kMiB));  // moves to the manager's allocator
    manager_in_use = manager->allocator().in_use();
    lms::MemoryManager::Install(nullptr);
    ASSERT_NE(nullptr, CuDNNWorkspace(kMiB));  // and back
    manager_after = manager->allocator().in_use();
    back_in_gpu_memory = GpuMemory::GetUsage(device).in_use;
  });
  worker.join();
  EXPECT_GE(with_workspace, before + 8 * kMiB);
  EXPECT_GE(manager_in_use, 8 * kMiB);
  EXPECT_EQ(manager_after, 0u);
  EXPECT_GE(back_in_gpu_memory, before + kMiB);
  EXPECT_EQ(GpuMemory::GetUsage(device).in_use, before);  // the thread's workspace went back
}

// Without LMS a thread keeps cuDNN's workspace between calls, only to reuse it: an allocation
// that would not fit beside it gets its memory instead of the out-of-memory error.
TEST_F(CuDNNDeviceTest, AKeptWorkspaceGivesWayToAnAllocation) {
  const size_t kMiB = size_t(1) << 20;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  size_t with_workspace = 0, after = 0, before = 0;
  void* blob = nullptr;
  std::thread worker([&] {
    CUDA_CHECK(cudaSetDevice(device));
    before = GpuMemory::GetUsage(device).in_use;
    GpuMemory::SetBudget(device, before + 12 * kMiB);
    ASSERT_NE(nullptr, CuDNNWorkspace(8 * kMiB));
    with_workspace = GpuMemory::GetUsage(device).in_use;
    blob = GpuMemory::Allocate(8 * kMiB, device);  // 16 MiB would not fit the 12 left
    after = GpuMemory::GetUsage(device).in_use;
    GpuMemory::Free(blob, device);
    GpuMemory::SetBudget(device, 0);
  });
  worker.join();
  EXPECT_NE(nullptr, blob);
  EXPECT_EQ(with_workspace, before + 8 * kMiB);
  EXPECT_EQ(after, before + 8 * kMiB) << "the workspace was not given back";
}

TEST_F(CuDNNDeviceTest, AWorkspaceBeyondTheBudgetIsAClearError) {
  const size_t kMiB = size_t(1) << 20;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  std::string message;
  std::thread worker([&] {
    CUDA_CHECK(cudaSetDevice(device));
    lms::Options options;
    options.budget = 4 * kMiB;
    lms::MemoryManager::Install(
        std::make_shared<lms::MemoryManager>(std::make_unique<CudaDevice>(device), options));
    try {
      CuDNNWorkspace(8 * kMiB);
    } catch (const Error& error) {
      message = error.what();
    }
    lms::MemoryManager::Install(nullptr);
  });
  worker.join();
  EXPECT_NE(message.find("cuDNN's workspace of 8388608 bytes does not fit"), std::string::npos)
      << message;
}

namespace {

// What one float convolution computes from fixed x, w and dy (y = conv(x, w), dx from w and dy,
// dw from x and dy) and the algorithms it chose. Run in a fresh thread (its own cuDNN workspace)
// under an LMS budget of `budget` bytes (0: none), with CAFFE_CUDNN_ALGO set to `search` (null:
// unset).
struct ConvolutionRun {
  std::vector<std::vector<float>> outputs;  // y, dx, dw
  CuDNNConvolution::Algorithms chosen;
};

ConvolutionRun RunConvolution(const CuDNNConvolution::Geometry& g, size_t budget,
                              const char* search = nullptr) {
  ScopedEnv search_env("CAFFE_CUDNN_ALGO", search);
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const size_t x_count = g.ImageCount(), w_count = g.FilterCount(), y_count = g.OutputCount();
  const std::vector<size_t> counts = {x_count, w_count, y_count};         // x, w, dy
  const std::vector<size_t> output_counts = {y_count, x_count, w_count};  // y, dx, dw
  ConvolutionRun run;
  std::thread worker([&] {
    CUDA_CHECK(cudaSetDevice(device));
    std::vector<float*> buffers, outputs;
    for (size_t i = 0; i < 3; ++i) {
      std::vector<float> values(counts[i]);
      for (size_t j = 0; j < values.size(); ++j) values[j] = std::sin(0.7f * j + i);
      float* buffer = nullptr;
      CUDA_CHECK(cudaMalloc(&buffer, counts[i] * sizeof(float)));
      CUDA_CHECK(
          cudaMemcpy(buffer, values.data(), counts[i] * sizeof(float), cudaMemcpyHostToDevice));
      buffers.push_back(buffer);
      float* output = nullptr;
      CUDA_CHECK(cudaMalloc(&output, output_counts[i] * sizeof(float)));
      CUDA_CHECK(cudaMemset(output, 0, output_counts[i] * sizeof(float)));
      outputs.push_back(output);
    }
    std::shared_ptr<lms::MemoryManager> manager;
    if (budget > 0) {
      lms::Options options;
      options.budget = budget;
      manager = std::make_shared<lms::MemoryManager>(std::make_unique<CudaDevice>(device), options);
      lms::MemoryManager::Install(manager);
    }
    CuDNNConvolution convolution;
    ASSERT_TRUE(convolution.Configure(g));
    run.chosen = convolution.chosen();
    convolution.Forward(buffers[0], buffers[1], outputs[0]);
    convolution.BackwardData(buffers[1], buffers[2], outputs[1]);
    convolution.BackwardFilter(buffers[0], buffers[2], outputs[2]);
    lms::MemoryManager::Install(nullptr);
    if (manager) {
      EXPECT_EQ(manager->allocator().in_use(), 0u);  // no workspace is held after a pass
    }
    for (size_t i = 0; i < 3; ++i) {
      std::vector<float> values(output_counts[i]);
      CUDA_CHECK(cudaMemcpy(values.data(), outputs[i], values.size() * sizeof(float),
                            cudaMemcpyDeviceToHost));
      run.outputs.push_back(values);
      CUDA_CHECK(cudaFree(outputs[i]));
      CUDA_CHECK(cudaFree(buffers[i]));
    }
  });
  worker.join();
  return run;
}

// Both runs computed the same within float rounding (other algorithms sum in other orders).
void ExpectSameOutputs(const ConvolutionRun& expected, const ConvolutionRun& actual) {
  ASSERT_EQ(actual.outputs.size(), 3u);
  ASSERT_EQ(expected.outputs.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    for (size_t j = 0; j < expected.outputs[i].size(); ++j) {
      const float want = expected.outputs[i][j];
      EXPECT_NEAR(actual.outputs[i][j], want, 1e-4 * (1 + std::fabs(want)))
          << "pass " << i << ", value " << j;
    }
  }
}

void ExpectSameChoice(const CuDNNConvolution::Algorithms& expected,
                      const CuDNNConvolution::Algorithms& actual) {
  EXPECT_EQ(expected.forward, actual.forward);
  EXPECT_EQ(expected.backward_data, actual.backward_data);
  EXPECT_EQ(expected.backward_filter, actual.backward_filter);
}

// SmallGeometry with `num` images: a shape no other test has timed in this process.
CuDNNConvolution::Geometry SmallGeometryOf(int num) {
  CuDNNConvolution::Geometry geometry = SmallGeometry();
  geometry.num = num;
  return geometry;
}

}  // namespace

// Under a budget too small for any workspace, every pass of a convolution runs with an algorithm
// that needs none (cuDNN always has one) instead of failing, and computes what it computes
// without a budget.
TEST_F(CuDNNDeviceTest, ConvolutionFallsBackToAlgorithmsTheBudgetCanRun) {
  const ConvolutionRun unlimited = RunConvolution(SmallGeometry(), 0);
  const ConvolutionRun budgeted = RunConvolution(SmallGeometry(), 1);  // one byte: no workspace
  ExpectSameOutputs(unlimited, budgeted);
}

// ---- Choosing algorithms by timing them (CAFFE_CUDNN_ALGO=time) ----

TEST(CuDNNHelpersTest, AlgorithmSearchComesFromTheEnvironment) {
  {
    ScopedEnv unset("CAFFE_CUDNN_ALGO", nullptr);
    EXPECT_EQ(CuDNNAlgoSearch::kHeuristic, CuDNNAlgorithmSearch());
  }
  {
    ScopedEnv heuristic("CAFFE_CUDNN_ALGO", "heuristic");
    EXPECT_EQ(CuDNNAlgoSearch::kHeuristic, CuDNNAlgorithmSearch());
  }
  {
    ScopedEnv time("CAFFE_CUDNN_ALGO", "time");
    EXPECT_EQ(CuDNNAlgoSearch::kTime, CuDNNAlgorithmSearch());
  }
  ScopedEnv bad("CAFFE_CUDNN_ALGO", "fastest");
  try {
    CuDNNAlgorithmSearch();
    ADD_FAILURE() << "CAFFE_CUDNN_ALGO=fastest was accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what())
                  .find("CAFFE_CUDNN_ALGO is \"fastest\"; expected heuristic or time"),
              std::string::npos)
        << error.what();
  }
}

TEST_F(CuDNNDeviceTest, TimedAlgorithmsComputeWhatTheHeuristicOnesDo) {
  const CuDNNConvolution::Geometry geometry = SmallGeometryOf(3);
  const ConvolutionRun heuristic = RunConvolution(geometry, 0);
  const size_t timed_before = CuDNNTimedShapes();
  const ConvolutionRun timed = RunConvolution(geometry, 0, "time");
  EXPECT_EQ(timed_before + 1, CuDNNTimedShapes());
  ExpectSameOutputs(heuristic, timed);
#ifdef CAFFE_CUDA_EMU
  // The emulator's times rank Winograd and the FFTs first, its heuristics otherwise: timing
  // decided every pass.
  EXPECT_NE(heuristic.chosen.forward, timed.chosen.forward);
  EXPECT_NE(heuristic.chosen.backward_data, timed.chosen.backward_data);
  EXPECT_NE(heuristic.chosen.backward_filter, timed.chosen.backward_filter);
#endif
}

TEST_F(CuDNNDeviceTest, EachShapeIsTimedOncePerGpu) {
  ScopedEnv search("CAFFE_CUDNN_ALGO", "time");
  const size_t before = CuDNNTimedShapes();
  CuDNNConvolution first, same_shape, other_shape;
  ASSERT_TRUE(first.Configure(SmallGeometryOf(5)));
  EXPECT_EQ(before + 1, CuDNNTimedShapes());
  ASSERT_TRUE(same_shape.Configure(SmallGeometryOf(5)));
  EXPECT_EQ(before + 1, CuDNNTimedShapes()) << "the same shape was timed again";
  ExpectSameChoice(first.chosen(), same_shape.chosen());
  ASSERT_TRUE(other_shape.Configure(SmallGeometryOf(6)));
  EXPECT_EQ(before + 2, CuDNNTimedShapes());
}

// Where the budget cannot give the scratch tensors timing needs, the heuristics choose, and the
// convolution runs as it does without timing.
TEST_F(CuDNNDeviceTest, WithoutMemoryToTimeTheHeuristicsChoose) {
  const CuDNNConvolution::Geometry geometry = SmallGeometryOf(7);
  const ConvolutionRun heuristic = RunConvolution(geometry, 1);
  const size_t before = CuDNNTimedShapes();
  const ConvolutionRun untimed = RunConvolution(geometry, 1, "time");
  EXPECT_EQ(before, CuDNNTimedShapes());
  ExpectSameChoice(heuristic.chosen, untimed.chosen);
  ExpectSameOutputs(heuristic, untimed);
}

TEST_F(CuDNNDeviceTest, TensorsArePackedWithAtLeastFourAxes) {
  auto described = [](cudnnDataType_t type, const std::vector<int>& dims,
                      std::vector<int>* got_dims, std::vector<int>* got_strides) {
    CuDNNTensorDescriptor tensor;
    SetCuDNNTensor(tensor.get(), type, dims);
    cudnnDataType_t got_type = CUDNN_DATA_FLOAT;
    int rank = 0;
    got_dims->assign(8, 0);
    got_strides->assign(8, 0);
    CUDNN_CHECK(cudnnGetTensorNdDescriptor(tensor.get(), 8, &got_type, &rank, got_dims->data(),
                                           got_strides->data()));
    got_dims->resize(rank);
    got_strides->resize(rank);
    return got_type;
  };
  std::vector<int> dims, strides;
  EXPECT_EQ(CUDNN_DATA_DOUBLE, described(CUDNN_DATA_DOUBLE, {2, 3}, &dims, &strides));
  EXPECT_EQ((std::vector<int>{2, 3, 1, 1}), dims);
  EXPECT_EQ((std::vector<int>{3, 1, 1, 1}), strides);
  EXPECT_EQ(CUDNN_DATA_FLOAT, described(CUDNN_DATA_FLOAT, {2, 3, 4, 5, 6}, &dims, &strides));
  EXPECT_EQ((std::vector<int>{2, 3, 4, 5, 6}), dims);
  EXPECT_EQ((std::vector<int>{360, 120, 30, 6, 1}), strides);
}

TEST_F(CuDNNDeviceTest, ActivationFoldsExtraAxesAndComputesReLU) {
  // Six axes: cuDNN sees (2, 3, 4, 5 x 7 x 3). ReLU is exact, so results must match bit for bit.
  const std::vector<int> shape{2, 3, 4, 5, 7, 3};
  Blob<float> x(shape), y(shape), dy(shape), dx(shape);
  FillGaussian(&x, 31);
  FillGaussian(&dy, 32);
  CuDNNActivation relu;
  ASSERT_TRUE(relu.Configure(CUDNN_ACTIVATION_RELU, CUDNN_DATA_FLOAT, shape));
  relu.Forward(x.gpu_data(), y.mutable_gpu_data());
  relu.Backward(y.gpu_data(), dy.gpu_data(), x.gpu_data(), dx.mutable_gpu_data());
  int reported = 0;
  for (int i = 0; i < x.count() && reported < 5; ++i) {
    const float input = x.cpu_data()[i];
    const float expected_y = input > 0 ? input : 0.0f;
    const float expected_dx = input > 0 ? dy.cpu_data()[i] : 0.0f;
    if (y.cpu_data()[i] != expected_y || dx.cpu_data()[i] != expected_dx) {
      ADD_FAILURE() << "[" << i << "]: x " << input << ", y " << y.cpu_data()[i] << " (expected "
                    << expected_y << "), dx " << dx.cpu_data()[i] << " (expected " << expected_dx
                    << ")";
      ++reported;
    }
  }
  // An empty blob is not cuDNN's: the caller runs Caffe's path.
  CuDNNActivation empty;
  EXPECT_FALSE(empty.Configure(CUDNN_ACTIVATION_RELU, CUDNN_DATA_FLOAT, {2, 0, 3}));
}

TEST_F(CuDNNDeviceTest, ConvolutionTurnsDownAnOutputSizeThatIsNotCuDNNs) {
  CuDNNConvolution convolution;
  EXPECT_TRUE(convolution.Configure(SmallGeometry()));
  EXPECT_TRUE(convolution.Configure(SmallGeometry()));  // the same geometry again: kept
  CuDNNConvolution::Geometry wrong_output = SmallGeometry();
  wrong_output.output_spatial = {7, 7};
  EXPECT_FALSE(convolution.Configure(wrong_output));
  EXPECT_TRUE(convolution.Configure(SmallGeometry()));
}

#else

TEST(CuDNNHelpersTest, NeedCuDNN) {
  GTEST_SKIP() << "built without cuDNN: only UseCuDNNEngine exists (tested above)";
}

#endif  // USE_CUDNN

}  // namespace caffe
