#include "caffe/common.hpp"

#include <unistd.h>

#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sstream>
#include <string>

#include "caffe/log_prefix.hpp"
#include "caffe/util/blas_core.hpp"
#include "caffe/util/environment.hpp"

#if !defined(CPU_ONLY) && defined(USE_CUDNN)
#include <cudnn.h>
#endif
#if !defined(CPU_ONLY) && defined(USE_NCCL)
#include <nccl.h>
#endif

namespace caffe {

namespace {
thread_local std::unique_ptr<Caffe> thread_instance;
}  // namespace

void UseBvlcLogPrefix() {
  // glog >= 0.6 prints the year in each line's prefix ("I20261201 21:19:00.953812"); BVLC-era
  // glog printed "I1201 21:19:00.953812", the form BVLC's parse_log.sh / extract_seconds.py,
  // DIGITS and users' scripts read. Only the default changes: --log_year_in_prefix=true or
  // GLOG_log_year_in_prefix=1 (which glog reads into the flag's default) still turn it on.
  if (!LogYearInPrefixIsSet()) {
    gflags::SetCommandLineOptionWithMode("log_year_in_prefix", "false", gflags::SET_FLAGS_DEFAULT);
  }
}

void GlobalInit(int* pargc, char*** pargv) {
  UseBvlcLogPrefix();
  gflags::ParseCommandLineFlags(pargc, pargv, true);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(*(pargv)[0]);
  google::InstallFailureSignalHandler();
  // SIGTERM is how schedulers and mpirun end a job, not a crash: no stack trace for it. While a
  // solver trains, -sigterm_effect's handler takes it (util/signal_handler.hpp).
  std::signal(SIGTERM, SIG_DFL);
  const BlasCoreFit& fit = FitBlasCoreToCpu();
  if (BlasCoreFitWorthLogging(fit)) LOG(INFO) << DescribeBlasCoreFit(fit);
}

int64_t cluster_seedgen() {
  int64_t seed = 0;
  if (FILE* f = std::fopen("/dev/urandom", "rb")) {
    size_t got = std::fread(&seed, 1, sizeof(seed), f);
    std::fclose(f);
    if (got == sizeof(seed)) return seed;
  }
  LOG(INFO) << "/dev/urandom unavailable; seeding from the clock and pid.";
  int64_t s = static_cast<int64_t>(std::time(nullptr));
  return std::abs(((s * 181) * ((getpid() - 83) * 359)) % 104729);
}

std::string HostName() {
  char name[HOST_NAME_MAX + 1] = {0};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown-host";
  return name;
}

Caffe::RNG::RNG() : generator_(static_cast<std::mt19937::result_type>(cluster_seedgen())) {}

Caffe::RNG::RNG(uint64_t seed) : generator_(static_cast<std::mt19937::result_type>(seed)) {}

std::string Caffe::RNG::SaveState() const {
  std::ostringstream out;
  out << generator_;
  return out.str();
}

bool Caffe::RNG::LoadState(const std::string& state) {
  std::istringstream in(state);
  std::mt19937 restored;
  in >> restored;
  if (in.fail()) return false;
  generator_ = restored;
  return true;
}

Caffe::~Caffe() {
#ifndef CPU_ONLY
  ReleaseGpuHandles();
#endif
}

Caffe& Caffe::Get() {
  if (!thread_instance) {
    FitBlasCoreToCpu();  // before the first BLAS call, in programs that skip GlobalInit
    thread_instance.reset(new Caffe());
  }
  return *thread_instance;
}

void Caffe::set_random_seed(int64_t seed) {
  Get().rng_ = std::make_unique<RNG>(static_cast<uint64_t>(seed));
#ifndef CPU_ONLY
  Get().curand_seed_ = seed;
  if (Get().curand_generator_ != nullptr) {
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(Get().curand_generator_, seed));
    CURAND_CHECK(curandSetGeneratorOffset(Get().curand_generator_, 0));
  }
#endif
}

#ifdef CPU_ONLY

void Caffe::SetDevice(int device_id) {
  (void)device_id;
  NO_GPU;
}

void Caffe::DeviceQuery() { NO_GPU; }

bool Caffe::GpuAvailable() { return false; }

#else

namespace {
// What a user can do about a GPU that cudaSetDevice refused with `status`.
std::string WhyUnusable(int device_id, cudaError_t status) {
  if (status == cudaErrorMemoryAllocation) {
    return " (no memory left for its context: other processes use it; nvidia-smi lists them)";
  }
  if (status != cudaErrorDevicesUnavailable) return "";
  int mode = cudaComputeModeDefault;
  if (cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, device_id) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  if (mode == cudaComputeModeExclusiveProcess || mode == cudaComputeModeExclusive) {
    return " (it is in exclusive compute mode and another process is using it; nvidia-smi lists "
           "its processes; choose another GPU with -gpu, or wait)";
  }
  if (mode == cudaComputeModeProhibited) {
    return " (its compute mode is Prohibited: no process may use it; nvidia-smi -c DEFAULT on "
           "that GPU allows it)";
  }
  return "";
}
}  // namespace

void Caffe::SetDevice(int device_id) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  CAFFE_CHECK(status == cudaSuccess)
      << "cannot use GPU " << device_id << ": " << cudaGetErrorString(status);
  CAFFE_CHECK(device_id >= 0 && device_id < count)
      << "cannot use GPU " << device_id << ": this machine has " << count
      << " visible GPU(s) (CUDA_VISIBLE_DEVICES applies)";
  // Handles belong to one GPU and are destroyed while it is still the current one.
  if (Get().device_ != device_id) Get().ReleaseGpuHandles();
  // cudaSetDevice creates the GPU's context (CUDA 12 and later), so a GPU this process cannot
  // have fails here, before anything is built on it.
  status = cudaSetDevice(device_id);
  if (status != cudaSuccess) {
    cudaGetLastError();  // not sticky: the thread may go on with another GPU
    CAFFE_THROW() << "cannot use GPU " << device_id << ": " << cudaGetErrorString(status)
                  << WhyUnusable(device_id, status);
  }
  Get().device_ = device_id;
}

void Caffe::ReleaseGpuHandles() {
  // Destructors do not throw: a failure here only leaks what the thread is about to drop.
  if (cublas_handle_ != nullptr) cublasDestroy(cublas_handle_);
  if (curand_generator_ != nullptr) curandDestroyGenerator(curand_generator_);
  cublas_handle_ = nullptr;
  curand_generator_ = nullptr;
}

cublasHandle_t Caffe::cublas_handle() {
  Caffe& caffe = Get();
  if (caffe.cublas_handle_ == nullptr) {
    CUBLAS_CHECK(cublasCreate(&caffe.cublas_handle_));
    // Tensor cores in TF32 only where the user asked for them; fp32 results match the CPU's.
    CUBLAS_CHECK(cublasSetMathMode(caffe.cublas_handle_, CUBLAS_DEFAULT_MATH));
  }
  return caffe.cublas_handle_;
}

curandGenerator_t Caffe::curand_generator() {
  Caffe& caffe = Get();
  if (caffe.curand_generator_ == nullptr) {
    CURAND_CHECK(curandCreateGenerator(&caffe.curand_generator_, CURAND_RNG_PSEUDO_DEFAULT));
    const int64_t seed = caffe.curand_seed_ >= 0 ? caffe.curand_seed_ : cluster_seedgen();
    CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(caffe.curand_generator_, seed));
  }
  return caffe.curand_generator_;
}

namespace {
const char* ComputeModeName(int mode) {
  switch (mode) {
    case cudaComputeModeDefault:
      return "Default";
    case cudaComputeModeExclusive:
      return "Exclusive thread";
    case cudaComputeModeProhibited:
      return "Prohibited";
    case cudaComputeModeExclusiveProcess:
      return "Exclusive process";
  }
  return "unknown";
}

// cuDNN 9's and NCCL's version codes (10000 * major + 100 * minor + patch) as "9.1.0".
std::string DottedVersion(size_t code) {
  std::ostringstream text;
  text << code / 10000 << "." << code % 10000 / 100 << "." << code % 100;
  return text.str();
}
}  // namespace

void Caffe::DeviceQuery() {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  LOG(INFO) << "Device id:                     " << device;
  LOG(INFO) << "Major revision number:         " << prop.major;
  LOG(INFO) << "Minor revision number:         " << prop.minor;
  LOG(INFO) << "Name:                          " << prop.name;
  LOG(INFO) << "Total global memory:           " << prop.totalGlobalMem;
  LOG(INFO) << "Total shared memory per block: " << prop.sharedMemPerBlock;
  LOG(INFO) << "Total registers per block:     " << prop.regsPerBlock;
  LOG(INFO) << "Warp size:                     " << prop.warpSize;
  LOG(INFO) << "Maximum threads per block:     " << prop.maxThreadsPerBlock;
  LOG(INFO) << "Maximum dimension of block:    " << prop.maxThreadsDim[0] << ", "
            << prop.maxThreadsDim[1] << ", " << prop.maxThreadsDim[2];
  LOG(INFO) << "Maximum dimension of grid:     " << prop.maxGridSize[0] << ", "
            << prop.maxGridSize[1] << ", " << prop.maxGridSize[2];
  LOG(INFO) << "Total constant memory:         " << prop.totalConstMem;
  LOG(INFO) << "Number of multiprocessors:     " << prop.multiProcessorCount;
  LOG(INFO) << "Concurrent copy and execution: " << (prop.asyncEngineCount > 0 ? "Yes" : "No");
  int mode = cudaComputeModeDefault;
  CUDA_CHECK(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, device));
  LOG(INFO) << "Compute mode:                  " << ComputeModeName(mode);
  // Beyond BVLC's list: the versions a GPU run's record needs.
  int driver = 0, runtime = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  LOG(INFO) << "CUDA driver / runtime:         " << driver / 1000 << "." << driver % 1000 / 10
            << " / " << runtime / 1000 << "." << runtime % 1000 / 10;
#ifdef USE_CUDNN
  LOG(INFO) << "cuDNN:                         " << DottedVersion(cudnnGetVersion());
#endif
#ifdef USE_NCCL
  int nccl = 0;
  if (ncclGetVersion(&nccl) == ncclSuccess) {
    LOG(INFO) << "NCCL:                          " << DottedVersion(nccl);
  }
#endif
}

bool Caffe::GpuAvailable() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

#endif  // CPU_ONLY

}  // namespace caffe
