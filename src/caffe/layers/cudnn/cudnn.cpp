// cuDNN's per-thread handle and workspace, tensor descriptors from Caffe's shapes, and the
// convolution plan Convolution and Deconvolution share (include/caffe/layers/cudnn/cudnn.hpp).
// Legend as there: x image side, y output side, w filters, N images, C channels, G group.
#include "caffe/layers/cudnn/cudnn.hpp"

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "caffe/memory/device_memory_policy.hpp"
#include "caffe/memory/gpu_memory.hpp"
#include "caffe/util/environment.hpp"

namespace caffe {

struct CuDNNPerfLists {
  std::vector<cudnnConvolutionFwdAlgoPerf_t> forward;
  std::vector<cudnnConvolutionBwdDataAlgoPerf_t> backward_data;
  std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> backward_filter;
};

namespace {

// Device memory on `device` from the allocator that holds the GPU's budget (-gpu_mem_limit):
// `policy` (the thread's device memory policy: LMS) where there is one, else Caffe's caching
// allocator for the GPU. With `may_fail`, null where the budget cannot give `bytes` now; else that
// is the out-of-memory error, naming `what`.
void* AllocateInBudget(size_t bytes, bool may_fail, int device, DeviceMemoryPolicy* policy,
                       const char* what) {
  if (policy != nullptr) {
    return may_fail ? policy->TryAllocateScratch(bytes) : policy->AllocateScratch(bytes, what);
  }
  return may_fail ? GpuMemory::TryAllocate(bytes, device) : GpuMemory::Allocate(bytes, device);
}

// Gives back what AllocateInBudget gave with the same `device` and `policy`.
void FreeInBudget(void* memory, int device, DeviceMemoryPolicy* policy) {
  if (policy != nullptr) {
    policy->FreeScratch(memory);
  } else {
    GpuMemory::Free(memory, device);
  }
}

// One thread's cuDNN state on one GPU. A thread that moves to another GPU drops it (handles and
// memory belong to the GPU they were made on) and makes a new one there.
// The workspace comes from the allocator that holds the GPU's budget (-gpu_mem_limit): the
// thread's device memory policy (LMS) when one is installed, else Caffe's caching allocator for the
// GPU.
struct ThreadCuDNN {
  int device = -1;
  cudnnHandle_t handle = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  bool workspace_from_policy = false;  // else from GpuMemory
  std::weak_ptr<DeviceMemoryPolicy> workspace_policy;

  ~ThreadCuDNN() { Release(); }
  // Destructors do not throw: a failure here only leaks what the thread is about to drop.
  void Release() {
    if (handle != nullptr) cudnnDestroy(handle);
    handle = nullptr;
    ReleaseWorkspace();
  }
  // Back to where it came from (work queued on it is ordered before any reuse: every pass runs
  // on the default stream, and LMS's copies wait for it). A policy that is gone took the
  // memory back with its allocator.
  void ReleaseWorkspace() {
    if (workspace != nullptr) {
      if (!workspace_from_policy) {
        FreeInBudget(workspace, device, nullptr);
      } else if (const auto policy = workspace_policy.lock()) {
        FreeInBudget(workspace, device, policy.get());
      }
    }
    workspace = nullptr;
    workspace_bytes = 0;
    workspace_from_policy = false;
    workspace_policy.reset();
  }
  // Whether the workspace came from `policy` (null: from GpuMemory). Ownership, not the
  // address, decides: a new policy may live where a dead one did.
  bool WorkspaceFrom(const std::shared_ptr<DeviceMemoryPolicy>& policy) const {
    if (!workspace_from_policy) return policy == nullptr;
    return policy != nullptr && workspace_policy.lock() == policy;
  }
};

thread_local ThreadCuDNN thread_cudnn;

// GpuMemory's scratch release: this thread's workspace on `device`, when it holds one from
// GpuMemory (between cuDNN calls it is only kept for reuse; the next call allocates it again).
bool ReleaseThreadWorkspace(int device) {
  ThreadCuDNN& state = thread_cudnn;
  if (state.workspace == nullptr || state.workspace_from_policy || state.device != device) {
    return false;
  }
  state.ReleaseWorkspace();
  return true;
}

const bool workspace_release_set = [] {
  GpuMemory::SetScratchRelease(&ReleaseThreadWorkspace);
  return true;
}();

ThreadCuDNN& CurrentThreadCuDNN() {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  ThreadCuDNN& state = thread_cudnn;
  if (state.device != device) {
    if (state.device >= 0 && (state.handle != nullptr || state.workspace != nullptr)) {
      // Released on the GPU they belong to.
      CUDA_CHECK(cudaSetDevice(state.device));
      state.Release();
      CUDA_CHECK(cudaSetDevice(device));
    }
    state.device = device;
  }
  return state;
}

long Product(const std::vector<int>& dims) {
  long product = 1;
  for (int d : dims) product *= d;
  return product;
}

bool Succeeded(cudnnStatus_t status, const char* call) {
  if (status == CUDNN_STATUS_SUCCESS) return true;
  VLOG(1) << "cuDNN cannot run this convolution: " << call << ": " << cudnnGetErrorString(status);
  return false;
}

// cuDNN's heuristic results (best expected first) that succeeded, keep float in FMA math and
// need at most the workspace limit, as `choices`: the chosen one first (the first deterministic
// one where asked and one exists, else the first), then, as fallbacks for a budget that cannot
// give its workspace, each further one (deterministic ones first) that needs less than all before
// it. `workspace_size(algo, math, &bytes)` asks cuDNN what an algorithm needs.
template <typename Perf, typename Choice, typename WorkspaceSize>
bool ListChoices(const std::vector<Perf>& results, bool float_data, bool prefer_deterministic,
                 WorkspaceSize workspace_size, std::vector<Choice>* choices) {
  const size_t limit = CuDNNWorkspaceLimit();
  choices->clear();
  for (int pass = prefer_deterministic ? 0 : 1; pass < 2; ++pass) {
    for (const Perf& result : results) {
      if (result.status != CUDNN_STATUS_SUCCESS) continue;
      // TF32 tensor cores round float inputs to 10 mantissa bits: results would drift from the
      // CPU's by about 1e-3.
      if (float_data && result.mathType != CUDNN_FMA_MATH) continue;
      const bool deterministic = result.determinism == CUDNN_DETERMINISTIC;
      if (prefer_deterministic && deterministic != (pass == 0)) continue;
      size_t needed = 0;
      if (workspace_size(result.algo, result.mathType, &needed) != CUDNN_STATUS_SUCCESS) continue;
      if (needed > limit || (!choices->empty() && needed >= choices->back().bytes)) continue;
      choices->push_back({result.algo, needed, result.mathType});
    }
  }
  return !choices->empty();
}

// `perfs` from `list(requested, &returned, data)`, a cuDNN getter or Find call named `call`,
// asked for as many results as `max_count` says the pass has algorithms. False where it fails.
template <typename Perf, typename MaxCount, typename List>
bool FetchPerfs(cudnnHandle_t handle, MaxCount max_count, const char* call, List list,
                std::vector<Perf>* perfs) {
  int count = 0, returned = 0;
  CUDNN_CHECK(max_count(handle, &count));
  perfs->resize(std::max(count, 1));
  if (!Succeeded(list(static_cast<int>(perfs->size()), &returned, perfs->data()), call)) {
    return false;
  }
  perfs->resize(returned);
  return true;
}

// A pass's choices (see ListChoices) from its timed perf list where there is one and it yields
// any, else from cuDNN's heuristics. False where neither does.
template <typename Perf, typename Choice, typename WorkspaceSize>
bool ChoosePass(const char* pass, const std::vector<Perf>* timed,
                const std::vector<Perf>& heuristic, bool float_data, bool prefer_deterministic,
                WorkspaceSize workspace_size, std::vector<Choice>* choices) {
  if (timed != nullptr) {
    if (ListChoices(*timed, float_data, prefer_deterministic, workspace_size, choices)) {
      return true;
    }
    VLOG(1) << "cuDNN timed no " << pass << " algorithm that qualifies; its heuristics choose";
  }
  if (ListChoices(heuristic, float_data, prefer_deterministic, workspace_size, choices)) {
    return true;
  }
  VLOG(1) << "cuDNN has no " << pass << " convolution algorithm within the workspace limit";
  return false;
}

// The math type a convolution is set up with: FMA for float (no TF32), the default for double.
cudnnMathType_t ConfiguredMath(cudnnDataType_t type) {
  return type == CUDNN_DATA_FLOAT ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
}

// A convolution's shape and type, and the GPU (-1: none), as text: the key of timed results, and
// what logs show.
std::string ShapeKey(const CuDNNConvolution::Geometry& g, int device) {
  std::ostringstream key;
  auto list = [&key](const char* name, const std::vector<int>& values) {
    key << ", " << name;
    for (size_t i = 0; i < values.size(); ++i) key << (i == 0 ? " " : "x") << values[i];
  };
  key << (g.type == CUDNN_DATA_FLOAT ? "float" : "double") << ' ' << g.num << 'x'
      << g.image_channels;
  for (int side : g.image_spatial) key << 'x' << side;
  key << " -> " << g.output_channels << " channels, group " << g.group;
  list("kernel", g.kernel);
  list("pad", g.pad);
  list("stride", g.stride);
  list("dilation", g.dilation);
  if (device >= 0) key << " on GPU " << device;
  return key.str();
}

// A timed perf list for logs: each algorithm that ran, with its milliseconds, workspace bytes
// and math type.
template <typename Perf>
std::string Timings(const std::vector<Perf>& perfs) {
  std::ostringstream text;
  for (const Perf& perf : perfs) {
    if (perf.status != CUDNN_STATUS_SUCCESS) continue;
    text << (text.tellp() > 0 ? ", " : "") << "algorithm " << perf.algo << " " << perf.time
         << " ms (" << perf.memory << " bytes, math " << perf.mathType << ")";
  }
  return text.str();
}

// Timed perf lists by ShapeKey, for the whole process.
struct TimedShapes {
  std::mutex mutex;
  std::map<std::string, CuDNNPerfLists> lists;
};

TimedShapes& Timed() {
  static TimedShapes* timed = new TimedShapes;  // never destroyed: used until exit
  return *timed;
}

// Device memory for one call, within the GPU's budget as the workspace is (AllocateInBudget);
// not ok() where the budget cannot give it now.
class BudgetedScratch {
 public:
  BudgetedScratch(size_t bytes, int device)
      : bytes_(bytes), device_(device), policy_(DeviceMemoryPolicy::Current()) {
    if (bytes > 0) memory_ = AllocateInBudget(bytes, /*may_fail=*/true, device, policy_.get(), "");
  }
  ~BudgetedScratch() {
    if (memory_ != nullptr) FreeInBudget(memory_, device_, policy_.get());
  }
  bool ok() const { return bytes_ == 0 || memory_ != nullptr; }
  void* get() const { return memory_; }
  size_t bytes() const { return bytes_; }

 private:
  size_t bytes_;
  int device_;
  std::shared_ptr<DeviceMemoryPolicy> policy_;
  void* memory_ = nullptr;
  DISABLE_COPY_AND_ASSIGN(BudgetedScratch);
};

}  // namespace

cudnnHandle_t CuDNNHandle() {
  ThreadCuDNN& state = CurrentThreadCuDNN();
  if (state.handle == nullptr) {
    CUDNN_CHECK(cudnnCreate(&state.handle));
    // The default stream, where every other GPU pass of Caffe runs.
    CUDNN_CHECK(cudnnSetStream(state.handle, nullptr));
  }
  return state.handle;
}

namespace {

// The workspace of CuDNNWorkspace; with `may_fail`, false (and no workspace held) instead of the
// out-of-memory error when the budget cannot give `bytes`.
bool GetWorkspace(size_t bytes, bool may_fail, void** workspace) {
  *workspace = nullptr;
  if (bytes == 0) return true;
  ThreadCuDNN& state = CurrentThreadCuDNN();
  const std::shared_ptr<DeviceMemoryPolicy>& policy = DeviceMemoryPolicy::Current();
  if (bytes > state.workspace_bytes || !state.WorkspaceFrom(policy)) {
    state.ReleaseWorkspace();
    void* memory =
        AllocateInBudget(bytes, may_fail, state.device, policy.get(), "cuDNN's workspace");
    if (memory == nullptr) return false;
    state.workspace = memory;
    state.workspace_policy = policy;
    state.workspace_from_policy = policy != nullptr;
    state.workspace_bytes = bytes;
  }
  *workspace = state.workspace;
  return true;
}

}  // namespace

void* CuDNNWorkspace(size_t bytes) {
  void* workspace = nullptr;
  GetWorkspace(bytes, /*may_fail=*/false, &workspace);
  return workspace;
}

bool TryCuDNNWorkspace(size_t bytes, void** workspace) {
  return GetWorkspace(bytes, /*may_fail=*/true, workspace);
}

void ReturnCuDNNWorkspaceToLms() {
  ThreadCuDNN& state = CurrentThreadCuDNN();
  if (state.workspace_from_policy) state.ReleaseWorkspace();
}

size_t CuDNNWorkspaceLimit() {
  static const size_t limit = CuDNNWorkspaceFromEnvironment();
  return limit;
}

CuDNNAlgoSearch CuDNNAlgorithmSearch() {
  return CuDNNAlgoFromEnvironment() == "time" ? CuDNNAlgoSearch::kTime
                                              : CuDNNAlgoSearch::kHeuristic;
}

size_t CuDNNTimedShapes() {
  TimedShapes& timed = Timed();
  std::lock_guard<std::mutex> lock(timed.mutex);
  return timed.lists.size();
}

void SetCuDNNTensor(cudnnTensorDescriptor_t descriptor, cudnnDataType_t type,
                    std::vector<int> dims) {
  while (dims.size() < 4) dims.push_back(1);
  std::vector<int> strides(dims.size());
  int stride = 1;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= dims[i];
  }
  CUDNN_CHECK(cudnnSetTensorNdDescriptor(descriptor, type, static_cast<int>(dims.size()),
                                         dims.data(), strides.data()));
}

bool CuDNNActivation::Configure(cudnnActivationMode_t mode, cudnnDataType_t type,
                                const std::vector<int>& shape) {
  type_ = type;
  std::vector<int> dims(shape.begin(), shape.begin() + std::min<size_t>(shape.size(), 4));
  long count = Product(dims);
  for (size_t i = 4; i < shape.size(); ++i) {
    dims[3] *= shape[i];
    count *= shape[i];
  }
  if (!CuDNNCanHold(count)) return false;
  SetCuDNNTensor(tensor_.get(), type, dims);
  // NaN in, NaN out, as the CPU's arithmetic does (cuDNN's ReLU would otherwise give 0).
  CUDNN_CHECK(cudnnSetActivationDescriptor(activation_.get(), mode, CUDNN_PROPAGATE_NAN, 0.0));
  return true;
}

void CuDNNActivation::Forward(const void* x, void* y) {
  CUDNN_CHECK(cudnnActivationForward(CuDNNHandle(), activation_.get(), CuDNNOne(type_),
                                     tensor_.get(), x, CuDNNZero(type_), tensor_.get(), y));
}

void CuDNNActivation::Backward(const void* y, const void* dy, const void* x, void* dx) {
  CUDNN_CHECK(cudnnActivationBackward(CuDNNHandle(), activation_.get(), CuDNNOne(type_),
                                      tensor_.get(), y, tensor_.get(), dy, tensor_.get(), x,
                                      CuDNNZero(type_), tensor_.get(), dx));
}

bool CuDNNConvolution::Geometry::operator==(const Geometry& other) const {
  return type == other.type && num == other.num && image_channels == other.image_channels &&
         output_channels == other.output_channels && group == other.group &&
         image_spatial == other.image_spatial && output_spatial == other.output_spatial &&
         kernel == other.kernel && pad == other.pad && stride == other.stride &&
         dilation == other.dilation;
}

long CuDNNConvolution::Geometry::ImageCount() const {
  return long{num} * image_channels * Product(image_spatial);
}

long CuDNNConvolution::Geometry::FilterCount() const {
  return long{output_channels} * (image_channels / group) * Product(kernel);
}

long CuDNNConvolution::Geometry::OutputCount() const {
  return long{num} * output_channels * Product(output_spatial);
}

const void* CuDNNConvolution::One() const { return CuDNNOne(geometry_.type); }

const void* CuDNNConvolution::Zero() const { return CuDNNZero(geometry_.type); }

bool CuDNNConvolution::Configure(const Geometry& geometry) {
  if (configured_ && geometry == geometry_) return usable_;
  geometry_ = geometry;
  configured_ = true;
  usable_ = false;
  const int axes = static_cast<int>(geometry.kernel.size());
  if (axes > 3 || geometry.group < 1) return false;
  // cuDNN convolves 2-D and 3-D tensors: 0-D and 1-D ones get unit axes in front.
  const int lead = std::max(0, 2 - axes);
  auto with_lead = [lead](const std::vector<int>& values, int unit) {
    std::vector<int> result(lead, unit);
    result.insert(result.end(), values.begin(), values.end());
    return result;
  };
  const std::vector<int> kernel = with_lead(geometry.kernel, 1);
  const std::vector<int> pad = with_lead(geometry.pad, 0);
  const std::vector<int> stride = with_lead(geometry.stride, 1);
  const std::vector<int> dilation = with_lead(geometry.dilation, 1);
  std::vector<int> image_dims{geometry.num, geometry.image_channels};
  std::vector<int> output_dims{geometry.num, geometry.output_channels};
  std::vector<int> filter_dims{geometry.output_channels, geometry.image_channels / geometry.group};
  const std::vector<int> image_spatial = with_lead(geometry.image_spatial, 1);
  const std::vector<int> output_spatial = with_lead(geometry.output_spatial, 1);
  image_dims.insert(image_dims.end(), image_spatial.begin(), image_spatial.end());
  output_dims.insert(output_dims.end(), output_spatial.begin(), output_spatial.end());
  filter_dims.insert(filter_dims.end(), kernel.begin(), kernel.end());
  if (!CuDNNCanHold(geometry.ImageCount()) || !CuDNNCanHold(geometry.OutputCount()) ||
      !CuDNNCanHold(geometry.FilterCount())) {
    return false;
  }
  const int rank = static_cast<int>(image_dims.size());
  std::vector<int> bias_dims(rank, 1);

  SetCuDNNTensor(image_.get(), geometry.type, image_dims);
  SetCuDNNTensor(output_.get(), geometry.type, output_dims);
  bias_dims[1] = geometry.image_channels;
  SetCuDNNTensor(image_bias_.get(), geometry.type, bias_dims);
  bias_dims[1] = geometry.output_channels;
  SetCuDNNTensor(output_bias_.get(), geometry.type, bias_dims);
  const bool float_data = geometry.type == CUDNN_DATA_FLOAT;
  if (!Succeeded(cudnnSetFilterNdDescriptor(filter_.get(), geometry.type, CUDNN_TENSOR_NCHW, rank,
                                            filter_dims.data()),
                 "cudnnSetFilterNdDescriptor") ||
      !Succeeded(
          cudnnSetConvolutionNdDescriptor(convolution_.get(), rank - 2, pad.data(), stride.data(),
                                          dilation.data(), CUDNN_CROSS_CORRELATION, geometry.type),
          "cudnnSetConvolutionNdDescriptor") ||
      !Succeeded(cudnnSetConvolutionGroupCount(convolution_.get(), geometry.group),
                 "cudnnSetConvolutionGroupCount") ||
      !Succeeded(cudnnSetConvolutionMathType(convolution_.get(),
                                             float_data ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH),
                 "cudnnSetConvolutionMathType")) {
    return false;
  }
  // cuDNN's output size must be the caller's (Caffe's formula, floor rounding, is cuDNN's).
  std::vector<int> cudnn_output(rank);
  if (!Succeeded(cudnnGetConvolutionNdForwardOutputDim(convolution_.get(), image_.get(),
                                                       filter_.get(), rank, cudnn_output.data()),
                 "cudnnGetConvolutionNdForwardOutputDim") ||
      cudnn_output != output_dims) {
    return false;
  }
  usable_ = ChooseAlgorithms();
  return usable_;
}

bool CuDNNConvolution::HeuristicAlgorithms(CuDNNPerfLists* lists) {
  cudnnHandle_t handle = CuDNNHandle();
  cudnnConvolutionDescriptor_t convolution = convolution_.get();
  CUDNN_CHECK(cudnnSetConvolutionMathType(convolution, ConfiguredMath(geometry_.type)));
  return FetchPerfs(
             handle, cudnnGetConvolutionForwardAlgorithmMaxCount,
             "cudnnGetConvolutionForwardAlgorithm_v7",
             [&](int requested, int* returned, cudnnConvolutionFwdAlgoPerf_t* perfs) {
               return cudnnGetConvolutionForwardAlgorithm_v7(handle, image_.get(), filter_.get(),
                                                             convolution, output_.get(), requested,
                                                             returned, perfs);
             },
             &lists->forward) &&
         FetchPerfs(
             handle, cudnnGetConvolutionBackwardDataAlgorithmMaxCount,
             "cudnnGetConvolutionBackwardDataAlgorithm_v7",
             [&](int requested, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* perfs) {
               return cudnnGetConvolutionBackwardDataAlgorithm_v7(
                   handle, filter_.get(), output_.get(), convolution, image_.get(), requested,
                   returned, perfs);
             },
             &lists->backward_data) &&
         FetchPerfs(
             handle, cudnnGetConvolutionBackwardFilterAlgorithmMaxCount,
             "cudnnGetConvolutionBackwardFilterAlgorithm_v7",
             [&](int requested, int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* perfs) {
               return cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                   handle, image_.get(), output_.get(), convolution, filter_.get(), requested,
                   returned, perfs);
             },
             &lists->backward_filter);
}

bool CuDNNConvolution::TimedAlgorithms(CuDNNPerfLists* lists) {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const std::string key = ShapeKey(geometry_, device);
  TimedShapes& timed = Timed();
  {
    std::lock_guard<std::mutex> lock(timed.mutex);
    const auto found = timed.lists.find(key);
    if (found != timed.lists.end()) {
      *lists = found->second;
      return true;
    }
  }
  // Scratch tensors of the convolution's shapes: timing writes y, dx and dw, which must not be
  // the layer's. Zeros: any values time alike.
  const size_t element = geometry_.type == CUDNN_DATA_FLOAT ? sizeof(float) : sizeof(double);
  const BudgetedScratch image(geometry_.ImageCount() * element, device);
  const BudgetedScratch filter(geometry_.FilterCount() * element, device);
  const BudgetedScratch output(geometry_.OutputCount() * element, device);
  const BudgetedScratch workspace(CuDNNWorkspaceLimit(), device);
  if (!image.ok() || !filter.ok() || !output.ok() || !workspace.ok()) {
    LOG_FIRST_N(INFO, 1) << "The GPU memory budget cannot give the scratch tensors for timing "
                         << "cuDNN's convolution algorithms now ("
                         << (image.bytes() + filter.bytes() + output.bytes() + workspace.bytes())
                         << " bytes): cuDNN's heuristics choose instead (every such case at -v 1)";
    VLOG(1) << "cuDNN: no memory to time the convolution of shape " << key;
    return false;
  }
  for (const BudgetedScratch* tensor : {&image, &filter, &output}) {
    CUDA_CHECK(cudaMemset(tensor->get(), 0, tensor->bytes()));
  }
  cudnnHandle_t handle = CuDNNHandle();
  cudnnConvolutionDescriptor_t convolution = convolution_.get();
  CUDNN_CHECK(cudnnSetConvolutionMathType(convolution, ConfiguredMath(geometry_.type)));
  const bool found =
      FetchPerfs(
          handle, cudnnGetConvolutionForwardAlgorithmMaxCount,
          "cudnnFindConvolutionForwardAlgorithmEx",
          [&](int requested, int* returned, cudnnConvolutionFwdAlgoPerf_t* perfs) {
            return cudnnFindConvolutionForwardAlgorithmEx(
                handle, image_.get(), image.get(), filter_.get(), filter.get(), convolution,
                output_.get(), output.get(), requested, returned, perfs, workspace.get(),
                workspace.bytes());
          },
          &lists->forward) &&
      FetchPerfs(
          handle, cudnnGetConvolutionBackwardDataAlgorithmMaxCount,
          "cudnnFindConvolutionBackwardDataAlgorithmEx",
          [&](int requested, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* perfs) {
            return cudnnFindConvolutionBackwardDataAlgorithmEx(
                handle, filter_.get(), filter.get(), output_.get(), output.get(), convolution,
                image_.get(), image.get(), requested, returned, perfs, workspace.get(),
                workspace.bytes());
          },
          &lists->backward_data) &&
      FetchPerfs(
          handle, cudnnGetConvolutionBackwardFilterAlgorithmMaxCount,
          "cudnnFindConvolutionBackwardFilterAlgorithmEx",
          [&](int requested, int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* perfs) {
            return cudnnFindConvolutionBackwardFilterAlgorithmEx(
                handle, image_.get(), image.get(), output_.get(), output.get(), convolution,
                filter_.get(), filter.get(), requested, returned, perfs, workspace.get(),
                workspace.bytes());
          },
          &lists->backward_filter);
  if (!found) return false;
  VLOG(2) << "cuDNN timed " << key << ": forward " << Timings(lists->forward) << "; backward data "
          << Timings(lists->backward_data) << "; backward filter "
          << Timings(lists->backward_filter);
  std::lock_guard<std::mutex> lock(timed.mutex);
  timed.lists.emplace(key, *lists);
  return true;
}

bool CuDNNConvolution::ChooseAlgorithms() {
  const bool float_data = geometry_.type == CUDNN_DATA_FLOAT;
  CuDNNPerfLists heuristic, timed;
  bool have_timed = false;
  if (CuDNNAlgorithmSearch() == CuDNNAlgoSearch::kTime) {
    LOG_FIRST_N(INFO, 1) << "cuDNN's convolution algorithms are chosen by timing them "
                         << "(CAFFE_CUDNN_ALGO=time), once per shape and GPU";
    have_timed = TimedAlgorithms(&timed);
  }
  if (!HeuristicAlgorithms(&heuristic)) return false;
  cudnnHandle_t handle = CuDNNHandle();
  cudnnConvolutionDescriptor_t convolution = convolution_.get();
  // The workspace of an algorithm is asked with the math type it was listed with.
  auto with_math = [convolution](cudnnMathType_t math) {
    return cudnnSetConvolutionMathType(convolution, math);
  };
  const bool forward_found = ChoosePass(
      "forward", have_timed ? &timed.forward : nullptr, heuristic.forward, float_data,
      /*prefer_deterministic=*/false,
      [&](cudnnConvolutionFwdAlgo_t algo, cudnnMathType_t math, size_t* bytes) {
        const cudnnStatus_t status = with_math(math);
        if (status != CUDNN_STATUS_SUCCESS) return status;
        return cudnnGetConvolutionForwardWorkspaceSize(handle, image_.get(), filter_.get(),
                                                       convolution, output_.get(), algo, bytes);
      },
      &forward_);
  const bool backward_data_found =
      forward_found &&
      ChoosePass(
          "backward-data", have_timed ? &timed.backward_data : nullptr, heuristic.backward_data,
          float_data, /*prefer_deterministic=*/true,
          [&](cudnnConvolutionBwdDataAlgo_t algo, cudnnMathType_t math, size_t* bytes) {
            const cudnnStatus_t status = with_math(math);
            if (status != CUDNN_STATUS_SUCCESS) return status;
            return cudnnGetConvolutionBackwardDataWorkspaceSize(
                handle, filter_.get(), output_.get(), convolution, image_.get(), algo, bytes);
          },
          &backward_data_);
  const bool backward_filter_found =
      backward_data_found &&
      ChoosePass(
          "backward-filter", have_timed ? &timed.backward_filter : nullptr,
          heuristic.backward_filter, float_data, /*prefer_deterministic=*/true,
          [&](cudnnConvolutionBwdFilterAlgo_t algo, cudnnMathType_t math, size_t* bytes) {
            const cudnnStatus_t status = with_math(math);
            if (status != CUDNN_STATUS_SUCCESS) return status;
            return cudnnGetConvolutionBackwardFilterWorkspaceSize(
                handle, image_.get(), output_.get(), convolution, filter_.get(), algo, bytes);
          },
          &backward_filter_);
  if (backward_filter_found) {
    VLOG(1) << "cuDNN convolution " << ShapeKey(geometry_, -1) << ": algorithms forward "
            << forward_.front().algo << ", backward data " << backward_data_.front().algo
            << ", backward filter " << backward_filter_.front().algo
            << (have_timed ? " (timed)" : " (heuristics)");
  }
  return backward_filter_found;
}

CuDNNConvolution::Algorithms CuDNNConvolution::chosen() const {
  CHECK(usable_) << "CuDNNConvolution::chosen before a successful Configure";
  Algorithms algorithms;
  algorithms.forward = forward_.front().algo;
  algorithms.backward_data = backward_data_.front().algo;
  algorithms.backward_filter = backward_filter_.front().algo;
  return algorithms;
}

template <typename Algo, typename Run>
void CuDNNConvolution::RunPass(const char* pass, const std::vector<Choice<Algo>>& choices,
                               Run run) {
  CHECK(usable_) << "CuDNNConvolution::" << pass << " before a successful Configure";
  for (size_t i = 0; i < choices.size(); ++i) {
    const Choice<Algo>& choice = choices[i];
    void* workspace = nullptr;
    if (i + 1 == choices.size()) {
      workspace = CuDNNWorkspace(choice.bytes);  // the leanest: no workspace is the error
    } else if (!TryCuDNNWorkspace(choice.bytes, &workspace)) {
      LOG_FIRST_N(INFO, 1) << "cuDNN's " << pass << " algorithm " << choice.algo << " needs a "
                           << choice.bytes << "-byte workspace the GPU memory budget cannot give "
                           << "now; one that needs less runs instead (every such case at -v 1)";
      VLOG(1) << "cuDNN " << pass << ": algorithm " << choice.algo << " needs " << choice.bytes
              << " bytes of workspace, not available; trying algorithm " << choices[i + 1].algo;
      continue;
    }
    CUDNN_CHECK(cudnnSetConvolutionMathType(convolution_.get(), choice.math));
    run(choice.algo, workspace, choice.bytes);
    ReturnCuDNNWorkspaceToLms();
    return;
  }
}

void CuDNNConvolution::Forward(const void* image, const void* weights, void* output) {
  RunPass("Forward", forward_, [&](cudnnConvolutionFwdAlgo_t algo, void* workspace, size_t bytes) {
    CUDNN_CHECK(cudnnConvolutionForward(CuDNNHandle(), One(), image_.get(), image, filter_.get(),
                                        weights, convolution_.get(), algo, workspace, bytes, Zero(),
                                        output_.get(), output));
  });
}

void CuDNNConvolution::BackwardData(const void* weights, const void* output_diff,
                                    void* image_diff) {
  RunPass("BackwardData", backward_data_,
          [&](cudnnConvolutionBwdDataAlgo_t algo, void* workspace, size_t bytes) {
            CUDNN_CHECK(cudnnConvolutionBackwardData(
                CuDNNHandle(), One(), filter_.get(), weights, output_.get(), output_diff,
                convolution_.get(), algo, workspace, bytes, Zero(), image_.get(), image_diff));
          });
}

void CuDNNConvolution::BackwardFilter(const void* image, const void* output_diff,
                                      void* weight_diff) {
  // beta = 1: parameter gradients accumulate, as on the CPU.
  RunPass("BackwardFilter", backward_filter_,
          [&](cudnnConvolutionBwdFilterAlgo_t algo, void* workspace, size_t bytes) {
            CUDNN_CHECK(cudnnConvolutionBackwardFilter(
                CuDNNHandle(), One(), image_.get(), image, output_.get(), output_diff,
                convolution_.get(), algo, workspace, bytes, One(), filter_.get(), weight_diff));
          });
}

void CuDNNConvolution::AddBias(Side side, const void* bias, void* data) {
  const bool image_side = side == Side::kImage;
  CUDNN_CHECK(cudnnAddTensor(CuDNNHandle(), One(),
                             image_side ? image_bias_.get() : output_bias_.get(), bias, One(),
                             image_side ? image_.get() : output_.get(), data));
}

void CuDNNConvolution::AccumulateBiasDiff(Side side, const void* diff, void* bias_diff) {
  const bool image_side = side == Side::kImage;
  CUDNN_CHECK(cudnnConvolutionBackwardBias(
      CuDNNHandle(), One(), image_side ? image_.get() : output_.get(), diff, One(),
      image_side ? image_bias_.get() : output_bias_.get(), bias_diff));
}

}  // namespace caffe
