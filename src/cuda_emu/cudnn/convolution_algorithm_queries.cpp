// What the emulated cuDNN tells a caller choosing a convolution algorithm: how many a pass has
// (*AlgorithmMaxCount), the ranked perf lists of the _v7 getters, each algorithm's workspace
// (*WorkspaceSize), and the Find*AlgorithmEx calls, which time every algorithm (by the emulator's
// model, convolution_algorithms.hpp) on the caller's tensors and workspace, fastest first.
#include <cudnn.h>

#include <algorithm>
#include <array>
#include <vector>

#include "cudnn/convolution.hpp"
#include "cudnn/convolution_algorithms.hpp"
#include "cudnn/internal.hpp"
#include "emu_state.hpp"
#include "streams.hpp"

namespace caffe_emu {
namespace {

// The ranking's entries for `plan` with `conv`'s math, as perf entries: tensor-op entries for
// float data only, the other entries in the descriptor's math when it asks for FMA, else in
// default math; each runnable one with its workspace (and, when `timed`, its modelled time), the
// others with status NOT_SUPPORTED.
template <typename Perf>
std::vector<Perf> Candidates(Pass pass, const ConvPlan& plan, cudnnConvolutionDescriptor_t conv,
                             bool timed) {
  const bool float_data = plan.x.type == CUDNN_DATA_FLOAT;
  const cudnnMathType_t plain_math =
      conv->math == CUDNN_FMA_MATH ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
  std::vector<Perf> candidates;
  for (const Ranked& entry : Ranking(pass)) {
    if (entry.tensor_op && !float_data) continue;
    Perf perf{};
    perf.algo = static_cast<decltype(perf.algo)>(entry.algo);
    const bool runs = Unsupported(entry.kind, plan) == nullptr;
    perf.status = runs ? kSuccess : kNotSupported;
    perf.time = timed && runs ? ModelledMilliseconds(entry, plan) : -1;  // heuristics do not time
    perf.memory = runs ? WorkspaceBytes(entry.kind, plan) : 0;
    perf.determinism = entry.deterministic ? CUDNN_DETERMINISTIC : CUDNN_NON_DETERMINISTIC;
    perf.mathType = entry.tensor_op ? CUDNN_TENSOR_OP_MATH : plain_math;
    candidates.push_back(perf);
  }
  return candidates;
}

// The first `requested` of `perfs` after a stable partition that puts the successful ones
// first, into `results`.
template <typename Perf>
void ReturnPerfs(std::vector<Perf> perfs, int requested, int* returned, Perf* results) {
  std::stable_partition(perfs.begin(), perfs.end(),
                        [](const Perf& perf) { return perf.status == kSuccess; });
  *returned = std::min(requested, static_cast<int>(perfs.size()));
  std::copy(perfs.begin(), perfs.begin() + *returned, results);
}

// The checks an algorithm query (a _v7 getter or a Find call) makes of its handle, result
// arguments and descriptors, and the convolution they describe, in `plan`.
cudnnStatus_t PlanQuery(const char* call, cudnnHandle_t handle, cudnnTensorDescriptor_t x,
                        cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv,
                        cudnnTensorDescriptor_t y, int requested, const int* returned,
                        const void* results, ConvPlan* plan) {
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  if (returned == nullptr || results == nullptr || requested <= 0) {
    return Reject(kBadParam, call, "needs requestedAlgoCount > 0 (got %d) and result pointers",
                  requested);
  }
  return PlanConvolution(call, x, w, conv, y, plan);
}

// The perf list a _v7 getter returns: the candidates in the ranking's order, the unsupported ones
// moved to the end.
template <typename Perf>
cudnnStatus_t ListAlgorithms(const char* call, Pass pass, cudnnHandle_t handle,
                             cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                             cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y,
                             int requested, int* returned, Perf* results) {
  ConvPlan plan;
  CAFFE_EMU_RETURN_IF_FAILED(
      PlanQuery(call, handle, x, w, conv, y, requested, returned, results, &plan));
  ReturnPerfs(Candidates<Perf>(pass, plan, conv, /*timed=*/false), requested, returned, results);
  return kSuccess;
}

cudnnStatus_t WorkspaceSize(const char* call, Pass pass, cudnnHandle_t handle,
                            cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                            cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y, int algo,
                            size_t* bytes) {
  CAFFE_EMU_RETURN_IF_FAILED(CheckHandle(call, handle));
  if (bytes == nullptr) return Reject(kBadParam, call, "sizeInBytes is null");
  ConvPlan plan;
  CAFFE_EMU_RETURN_IF_FAILED(PlanConvolution(call, x, w, conv, y, &plan));
  return AlgorithmWorkspace(call, pass, algo, plan, bytes);
}

// How many algorithms a pass has (the *AlgorithmMaxCount calls).
cudnnStatus_t AlgorithmCount(const char* call, Pass pass, cudnnHandle_t handle, int* count) {
  if (handle == nullptr || count == nullptr) return Reject(kBadParam, call, "null argument");
  *count = static_cast<int>(Ranking(pass).size());
  return kSuccess;
}

// A Find*AlgorithmEx call: "runs" every candidate whose workspace fits the one given (the others
// get ALLOC_FAILED), returns them fastest first by the emulator's time model, and leaves in the
// output (`names`/`data` as RunConvolutionPass takes them) what the fastest computes, with alpha 1
// and beta 0, as cuDNN's timing runs overwrite it.
template <typename Perf>
cudnnStatus_t FindAlgorithms(const char* call, Pass pass, cudnnHandle_t handle,
                             cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                             cudnnConvolutionDescriptor_t conv, cudnnTensorDescriptor_t y,
                             const std::array<const char*, 3>& names,
                             const std::array<const void*, 3>& data, int requested, int* returned,
                             Perf* results, void* workspace, size_t workspace_bytes) {
  ConvPlan plan;
  CAFFE_EMU_RETURN_IF_FAILED(
      PlanQuery(call, handle, x, w, conv, y, requested, returned, results, &plan));
  if (workspace_bytes > 0 && !UsableOnDevice(call, workspace, workspace_bytes, "the workspace")) {
    return kBadParam;
  }
  Drain(handle->stream);  // a Find call runs at once, after the work queued before it
  std::vector<Perf> perfs = Candidates<Perf>(pass, plan, conv, /*timed=*/true);
  for (Perf& perf : perfs) {
    if (perf.status == kSuccess && perf.memory > workspace_bytes) {
      perf.status = CUDNN_STATUS_ALLOC_FAILED;
      perf.memory = 0;
      perf.time = -1;
    }
  }
  std::stable_sort(perfs.begin(), perfs.end(), [](const Perf& a, const Perf& b) {
    if ((a.status == kSuccess) != (b.status == kSuccess)) return a.status == kSuccess;
    return a.status == kSuccess && a.time < b.time;
  });
  if (perfs.empty() || perfs.front().status != kSuccess) {
    return Reject(kNotSupported, call, "no algorithm runs within a %zu-byte workspace",
                  workspace_bytes);
  }
  static const float float_one = 1, float_zero = 0;
  static const double double_one = 1, double_zero = 0;
  const bool float_data = plan.x.type == CUDNN_DATA_FLOAT;
  CAFFE_EMU_RETURN_IF_FAILED(RunConvolutionPass(
      call, pass, handle, perfs.front().algo, x, w, conv, y, workspace, workspace_bytes,
      float_data ? static_cast<const void*>(&float_one) : &double_one,
      float_data ? static_cast<const void*>(&float_zero) : &double_zero, names, data));
  ReturnPerfs(perfs, requested, returned, results);
  return kSuccess;
}

}  // namespace
}  // namespace caffe_emu

using namespace caffe_emu;  // NOLINT: the C API below only forwards to it

// ---- Forward ----

cudnnStatus_t cudnnGetConvolutionForwardAlgorithmMaxCount(cudnnHandle_t handle, int* count) {
  return AlgorithmCount("cudnnGetConvolutionForwardAlgorithmMaxCount", Pass::kForward, handle,
                        count);
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
    const cudnnFilterDescriptor_t filterDesc, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t destDesc, const int requestedAlgoCount, int* returnedAlgoCount,
    cudnnConvolutionFwdAlgoPerf_t* perfResults) {
  return ListAlgorithms("cudnnGetConvolutionForwardAlgorithm_v7", Pass::kForward, handle, srcDesc,
                        filterDesc, convDesc, destDesc, requestedAlgoCount, returnedAlgoCount,
                        perfResults);
}

cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnFilterDescriptor_t wDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t yDesc,
    cudnnConvolutionFwdAlgo_t algo, size_t* sizeInBytes) {
  return WorkspaceSize("cudnnGetConvolutionForwardWorkspaceSize", Pass::kForward, handle, xDesc,
                       wDesc, convDesc, yDesc, algo, sizeInBytes);
}

// ---- Backward data ----

cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithmMaxCount(cudnnHandle_t handle, int* count) {
  return AlgorithmCount("cudnnGetConvolutionBackwardDataAlgorithmMaxCount", Pass::kBackwardData,
                        handle, count);
}

cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t filterDesc,
    const cudnnTensorDescriptor_t diffDesc, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t gradDesc, const int requestedAlgoCount, int* returnedAlgoCount,
    cudnnConvolutionBwdDataAlgoPerf_t* perfResults) {
  return ListAlgorithms("cudnnGetConvolutionBackwardDataAlgorithm_v7", Pass::kBackwardData, handle,
                        gradDesc, filterDesc, convDesc, diffDesc, requestedAlgoCount,
                        returnedAlgoCount, perfResults);
}

cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc,
    cudnnConvolutionBwdDataAlgo_t algo, size_t* sizeInBytes) {
  return WorkspaceSize("cudnnGetConvolutionBackwardDataWorkspaceSize", Pass::kBackwardData, handle,
                       dxDesc, wDesc, convDesc, dyDesc, algo, sizeInBytes);
}

// ---- Backward filter ----

cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(cudnnHandle_t handle, int* count) {
  return AlgorithmCount("cudnnGetConvolutionBackwardFilterAlgorithmMaxCount", Pass::kBackwardFilter,
                        handle, count);
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
    const cudnnTensorDescriptor_t diffDesc, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnFilterDescriptor_t gradDesc, const int requestedAlgoCount, int* returnedAlgoCount,
    cudnnConvolutionBwdFilterAlgoPerf_t* perfResults) {
  return ListAlgorithms("cudnnGetConvolutionBackwardFilterAlgorithm_v7", Pass::kBackwardFilter,
                        handle, srcDesc, gradDesc, convDesc, diffDesc, requestedAlgoCount,
                        returnedAlgoCount, perfResults);
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t gradDesc,
    cudnnConvolutionBwdFilterAlgo_t algo, size_t* sizeInBytes) {
  return WorkspaceSize("cudnnGetConvolutionBackwardFilterWorkspaceSize", Pass::kBackwardFilter,
                       handle, xDesc, gradDesc, convDesc, dyDesc, algo, sizeInBytes);
}

// ---- Find ----

// The Find*AlgorithmEx calls: every algorithm timed (by the emulator's model) on the caller's
// tensors and workspace, fastest first; the output holds what the fastest computed.
cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const void* x,
    const cudnnFilterDescriptor_t wDesc, const void* w, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t yDesc, void* y, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t* perfResults, void* workSpace,
    size_t workSpaceSizeInBytes) {
  return FindAlgorithms("cudnnFindConvolutionForwardAlgorithmEx", Pass::kForward, handle, xDesc,
                        wDesc, convDesc, yDesc, {"x", "w", "y"}, {x, w, y}, requestedAlgoCount,
                        returnedAlgoCount, perfResults, workSpace, workSpaceSizeInBytes);
}

cudnnStatus_t cudnnFindConvolutionBackwardDataAlgorithmEx(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const void* w,
    const cudnnTensorDescriptor_t dyDesc, const void* dy,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc, void* dx,
    const int requestedAlgoCount, int* returnedAlgoCount,
    cudnnConvolutionBwdDataAlgoPerf_t* perfResults, void* workSpace, size_t workSpaceSizeInBytes) {
  return FindAlgorithms("cudnnFindConvolutionBackwardDataAlgorithmEx", Pass::kBackwardData, handle,
                        dxDesc, wDesc, convDesc, dyDesc, {"dx", "w", "dy"}, {dx, w, dy},
                        requestedAlgoCount, returnedAlgoCount, perfResults, workSpace,
                        workSpaceSizeInBytes);
}

cudnnStatus_t cudnnFindConvolutionBackwardFilterAlgorithmEx(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const void* x,
    const cudnnTensorDescriptor_t dyDesc, const void* y,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t dwDesc, void* dw,
    const int requestedAlgoCount, int* returnedAlgoCount,
    cudnnConvolutionBwdFilterAlgoPerf_t* perfResults, void* workSpace,
    size_t workSpaceSizeInBytes) {
  return FindAlgorithms("cudnnFindConvolutionBackwardFilterAlgorithmEx", Pass::kBackwardFilter,
                        handle, xDesc, dwDesc, convDesc, dyDesc, {"x", "dw", "dy"}, {x, dw, y},
                        requestedAlgoCount, returnedAlgoCount, perfResults, workSpace,
                        workSpaceSizeInBytes);
}
