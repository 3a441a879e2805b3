// The environment variables Caffe's library reads: each is named and read here only, and listed
// in the table that docs/ENVIRONMENT.md mirrors (EnvironmentTest checks that the two agree, and
// the room check that nothing else calls getenv). A value a variable does not take is a
// caffe::Error naming the variable, what it holds and what it takes.
#ifndef CAFFE_UTIL_ENVIRONMENT_HPP_
#define CAFFE_UTIL_ENVIRONMENT_HPP_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace caffe {

/// One variable of the table: its name, the values it takes, what it changes.
struct EnvironmentVariable {
  const char* name;
  const char* values;
  const char* effect;
};

/// Every variable the library reads, in the order docs/ENVIRONMENT.md lists them.
const std::vector<EnvironmentVariable>& EnvironmentVariables();

/// CAFFE_FUSION: whether layers that can run as one do so (1, the default) or each runs alone (0).
bool FusionFromEnvironment();
/// CAFFE_BLOCKED_LAYOUT: whether oneDNN convolutions leave their activations in oneDNN's channel
/// blocks for the layers that take them (1, the default) or reorder them to plain (0).
bool BlockedLayoutFromEnvironment();
/// CAFFE_WINOGRAD: whether oneDNN's fp32 3x3 convolutions of stride 1 run Winograd's F(4x4, 3x3)
/// where oneDNN has it for the geometry (1, the default) or always the direct algorithm (0).
bool WinogradFromEnvironment();
/// CAFFE_SHARE_DIFFS: whether the caffe tool's train and time share activation gradients' memory
/// (1, the default; net/diff_sharing.hpp) or give each blob its own diff (0).
bool ShareDiffsFromEnvironment();
/// CAFFE_FLUSH_DENORMALS: denormal floats computed as zeros (1, the default) or kept (0).
bool FlushDenormalsFromEnvironment();
/// CAFFE_CPU_ENGINE, upper-cased: "" (unset: the default engines), "CAFFE" or "DNNL"; another
/// value counts as unset, as it always has.
std::string CpuEngineFromEnvironment();
/// CAFFE_CUDNN_ALGO: "heuristic" (the default) or "time".
std::string CuDNNAlgoFromEnvironment();
/// CAFFE_CUDNN_WORKSPACE_MB, in bytes (64 MiB when unset).
size_t CuDNNWorkspaceFromEnvironment();
/// CAFFE_GPU_MEM_LIMIT (the -gpu_mem_limit used when the flag is not given), or null when unset.
const char* GpuMemLimitFromEnvironment();
/// The GPUs a scheduler granted, as it says them (each unset: nullopt).
struct SchedulerGpus {
  std::optional<std::string> visible;   // CUDA_VISIBLE_DEVICES: what the CUDA runtime numbers
  std::optional<std::string> lsf_task;  // LSF's CUDA_VISIBLE_DEVICES<local rank>
  std::optional<std::string> slurm;     // "SLURM_STEP_GPUS=..." (or SLURM_JOB_GPUS)
};
/// CUDA_VISIBLE_DEVICES, LSF's CUDA_VISIBLE_DEVICES<local_rank>, Slurm's SLURM_STEP_GPUS or
/// SLURM_JOB_GPUS.
SchedulerGpus SchedulerGpusFromEnvironment(int local_rank);
/// OPENBLAS_CORETYPE (the OpenBLAS kernels the user chose), or null when unset.
const char* BlasCoreTypeFromEnvironment();
/// Whether GLOG_log_year_in_prefix is set (glog reads its value itself, into the flag's default).
bool LogYearInPrefixIsSet();

}  // namespace caffe

#endif  // CAFFE_UTIL_ENVIRONMENT_HPP_
