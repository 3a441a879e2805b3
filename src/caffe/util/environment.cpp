#include "caffe/util/environment.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "caffe/util/error.hpp"

namespace caffe {

const std::vector<EnvironmentVariable>& EnvironmentVariables() {
  static const std::vector<EnvironmentVariable> table = {
      {"CAFFE_CPU_ENGINE", "unset, caffe, dnnl",
       "the CPU engine of every layer that has more than one, and of the vector math"},
      {"CAFFE_FUSION", "1 (default), 0", "0 runs every layer alone, never as a fused group"},
      {"CAFFE_BLOCKED_LAYOUT", "1 (default), 0",
       "0 hands oneDNN layers' activations on plain, reordered around every convolution"},
      {"CAFFE_WINOGRAD", "1 (default), 0",
       "0 keeps oneDNN's fp32 3x3 convolutions direct instead of Winograd's F(4x4, 3x3)"},
      {"CAFFE_SHARE_DIFFS", "1 (default), 0",
       "0 gives every activation of `caffe train` and `caffe time` a gradient buffer of its own"},
      {"CAFFE_FLUSH_DENORMALS", "1 (default), 0", "0 keeps IEEE denormal floats on the CPU"},
      {"CAFFE_CUDNN_ALGO", "heuristic (default), time",
       "how cuDNN's convolution algorithms are chosen"},
      {"CAFFE_CUDNN_WORKSPACE_MB", "MiB, default 64", "the cap on cuDNN's workspace"},
      {"CAFFE_GPU_MEM_LIMIT", "bytes, e.g. 16G", "-gpu_mem_limit where the flag is not given"},
      {"CUDA_VISIBLE_DEVICES", "GPU ids, e.g. 2,3",
       "the GPUs a DDL learner picks from by its rank on the host"},
      {"CUDA_VISIBLE_DEVICES<N>", "GPU ids", "LSF: the GPUs of task N (a DDL learner's own)"},
      {"SLURM_STEP_GPUS", "GPU ids",
       "Slurm: the GPUs granted, where CUDA_VISIBLE_DEVICES is unset"},
      {"OPENBLAS_CORETYPE", "an OpenBLAS core name",
       "OpenBLAS's kernels; Caffe keeps the user's choice"},
      {"GLOG_log_year_in_prefix", "0 or 1",
       "the year in each log line's prefix; unset, none, as BVLC's logs"},
  };
  return table;
}

namespace {

// A 0/1 switch that is on when unset.
bool SwitchOnByDefault(const char* name, const char* on_means, const char* off_means) {
  const char* text = std::getenv(name);
  if (text == nullptr || std::string(text) == "1") return true;
  CAFFE_CHECK(std::string(text) == "0") << name << " is \"" << text << "\"; expected 1 ("
                                        << on_means << ", the default) or 0 (" << off_means << ")";
  return false;
}

}  // namespace

bool FusionFromEnvironment() {
  return SwitchOnByDefault("CAFFE_FUSION", "layers that can run as one do so", "every layer alone");
}

bool BlockedLayoutFromEnvironment() {
  return SwitchOnByDefault("CAFFE_BLOCKED_LAYOUT", "activations stay in oneDNN's channel blocks",
                           "every convolution reorders its activations");
}

bool WinogradFromEnvironment() {
  return SwitchOnByDefault("CAFFE_WINOGRAD", "Winograd's algorithm where oneDNN has it",
                           "direct convolutions only");
}

bool ShareDiffsFromEnvironment() {
  return SwitchOnByDefault("CAFFE_SHARE_DIFFS", "activation gradients share memory",
                           "one diff per blob, as BVLC");
}

bool FlushDenormalsFromEnvironment() {
  return SwitchOnByDefault("CAFFE_FLUSH_DENORMALS", "denormal floats computed as zeros",
                           "IEEE denormals, slower");
}

std::string CpuEngineFromEnvironment() {
  const char* text = std::getenv("CAFFE_CPU_ENGINE");
  std::string value = text ? text : "";
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return value == "CAFFE" || value == "DNNL" ? value : "";
}

std::string CuDNNAlgoFromEnvironment() {
  const char* text = std::getenv("CAFFE_CUDNN_ALGO");
  if (text == nullptr || *text == '\0' || std::string(text) == "heuristic") return "heuristic";
  CAFFE_CHECK(std::string(text) == "time")
      << "CAFFE_CUDNN_ALGO is \"" << text << "\"; expected heuristic or time";
  return "time";
}

size_t CuDNNWorkspaceFromEnvironment() {
  constexpr size_t kMiB = size_t(1) << 20;
  const char* text = std::getenv("CAFFE_CUDNN_WORKSPACE_MB");
  if (text == nullptr || *text == '\0') return 64 * kMiB;
  char* end = nullptr;
  const long megabytes = std::strtol(text, &end, 10);
  CAFFE_CHECK(end != text && *end == '\0' && megabytes >= 0)
      << "CAFFE_CUDNN_WORKSPACE_MB is \"" << text << "\"; must be a whole number of MiB >= 0";
  return static_cast<size_t>(megabytes) * kMiB;
}

const char* GpuMemLimitFromEnvironment() { return std::getenv("CAFFE_GPU_MEM_LIMIT"); }

SchedulerGpus SchedulerGpusFromEnvironment(int local_rank) {
  SchedulerGpus gpus;
  if (const char* text = std::getenv("CUDA_VISIBLE_DEVICES")) gpus.visible = text;
  const std::string task = "CUDA_VISIBLE_DEVICES" + std::to_string(local_rank);
  if (const char* text = std::getenv(task.c_str())) gpus.lsf_task = text;
  for (const char* name : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS"}) {
    const char* text = std::getenv(name);
    if (text != nullptr && !gpus.slurm) gpus.slurm = std::string(name) + "=" + text;
  }
  return gpus;
}

const char* BlasCoreTypeFromEnvironment() { return std::getenv("OPENBLAS_CORETYPE"); }

bool LogYearInPrefixIsSet() { return std::getenv("GLOG_log_year_in_prefix") != nullptr; }

}  // namespace caffe
