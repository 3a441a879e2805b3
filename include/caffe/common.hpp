// What every file of the library needs: logging, the error macros, instantiation helpers, and the
// Caffe context (compute mode, random generator, and this solver's place among parallel solvers).
#ifndef CAFFE_COMMON_HPP_
#define CAFFE_COMMON_HPP_

#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "caffe/util/error.hpp"

#ifndef CPU_ONLY
#include "caffe/util/device_alternate.hpp"
#endif

// Classes that own resources are neither copied nor assigned.
#define DISABLE_COPY_AND_ASSIGN(classname) \
  classname(const classname&) = delete;    \
  classname& operator=(const classname&) = delete

// Instantiate a class template for the two data types the library supports.
#define INSTANTIATE_CLASS(classname)   \
  char gInstantiationGuard##classname; \
  template class classname<float>;     \
  template class classname<double>

// A code path the build cannot take (e.g. a GPU call in a CPU-only build) is a user-visible error.
#define NO_GPU                                                                          \
  CAFFE_THROW() << "this build of Caffe has no GPU support (built with CPU_ONLY); run " \
                   "without -gpu or rebuild with CUDA"

#define NOT_IMPLEMENTED LOG(FATAL) << "Not Implemented Yet"

namespace caffe {

template <typename Dtype>
class Blob;
/// The bottom or top blobs of a layer.
template <typename Dtype>
using Blobs = std::vector<Blob<Dtype>*>;

using std::shared_ptr;
using std::string;
using std::vector;

/// Initialises gflags and glog for a tool: parses flags, logs to stderr.
void GlobalInit(int* pargc, char*** pargv);

/// A random seed from /dev/urandom, or from the clock and pid where that is unavailable.
int64_t cluster_seedgen();

/// This machine's host name, for messages that say where a process runs.
std::string HostName();

/// The per-thread context. Each solver thread (and each prefetch thread) has its own instance, so
/// their random streams and devices do not interfere.
class Caffe {
 public:
  enum Brew { CPU, GPU };

  /// The generator of random numbers: mt19937, whose full state can be saved and restored
  /// (snapshots record it so a resumed run draws the same numbers as an uninterrupted one).
  class RNG {
   public:
    RNG();
    explicit RNG(uint64_t seed);
    std::mt19937& generator() { return generator_; }
    std::string SaveState() const;
    /// Returns false if `state` is not a saved generator state.
    bool LoadState(const std::string& state);

   private:
    std::mt19937 generator_;
  };

  ~Caffe();
  static Caffe& Get();

  static Brew mode() { return Get().mode_; }
  static void set_mode(Brew mode) { Get().mode_ = mode; }
  /// Reseeds this thread's generator (and, in GPU builds, the device generator).
  static void set_random_seed(int64_t seed);
  static RNG& rng() {
    if (!Get().rng_) Get().rng_ = std::make_unique<RNG>();
    return *Get().rng_;
  }
  static std::mt19937& rng_stream() { return rng().generator(); }

  /// Selects the GPU this thread uses; throws in a CPU-only build or for a bad index.
  static void SetDevice(int device_id);
  static int device() { return Get().device_; }
  /// Logs the properties of the current GPU.
  static void DeviceQuery();
  /// Whether a usable GPU exists (false in a CPU-only build or without a driver).
  static bool GpuAvailable();
#ifndef CPU_ONLY
  /// This thread's cuBLAS handle and cuRAND generator on its current GPU, made on first use
  /// (and made again after SetDevice moves the thread to another GPU).
  static cublasHandle_t cublas_handle();
  static curandGenerator_t curand_generator();
#endif

  // Parallel training: how many solvers run together, and which one this thread is.
  static int solver_count() { return Get().solver_count_; }
  static void set_solver_count(int count) { Get().solver_count_ = count; }
  static int solver_rank() { return Get().solver_rank_; }
  static void set_solver_rank(int rank) { Get().solver_rank_ = rank; }
  static bool multiprocess() { return Get().multiprocess_; }
  static void set_multiprocess(bool value) { Get().multiprocess_ = value; }
  /// Only the root solver logs progress, tests and snapshots.
  static bool root_solver() { return Get().solver_rank_ == 0; }

 private:
  Caffe() = default;

  Brew mode_ = CPU;
  std::unique_ptr<RNG> rng_;
  int device_ = -1;
  int solver_count_ = 1;
  int solver_rank_ = 0;
  bool multiprocess_ = false;
#ifndef CPU_ONLY
  void ReleaseGpuHandles();
  cublasHandle_t cublas_handle_ = nullptr;
  curandGenerator_t curand_generator_ = nullptr;
  int64_t curand_seed_ = -1;  // -1: seeded from cluster_seedgen() when made
#endif

  DISABLE_COPY_AND_ASSIGN(Caffe);
};

}  // namespace caffe

#endif  // CAFFE_COMMON_HPP_
