// The CUDA emulator's cuRAND: a generator per handle (std::mt19937_64 from the seed, advanced by
// the offset), filling device memory with cuRAND's ranges: uniform floats in (0, 1], normals by
// pairs (so, as in cuRAND, a normal fill of an odd count is CURAND_STATUS_LENGTH_NOT_MULTIPLE).
// A fill is drawn at the call, as cuRAND advances its generator's offset then, and written by work
// queued on the default stream, where cuRAND launches its kernel.
#include <curand.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "emu_state.hpp"
#include "streams.hpp"

struct curandGenerator_st {
  int device;
  unsigned long long seed = 0;
  unsigned long long offset = 0;
  std::mt19937_64 engine;
  void Restart() {
    engine.seed(seed);
    engine.discard(offset);
  }
};

namespace caffe_emu {
namespace {

template <typename T>
bool DeviceOutput(const char* routine, curandGenerator_t generator, T* output, size_t n) {
  return MadeOnCurrentDevice(routine, "generator", generator->device) &&
         UsableOnDevice(routine, output, n * sizeof(T), "the output");
}

// Uniform in (0, 1], as cuRAND's uniform distribution.
template <typename T>
T UniformOpenClosed(std::mt19937_64& engine) {
  const double unit = static_cast<double>(engine() >> 11) * (1.0 / 9007199254740992.0);  // [0,1)
  const T value = static_cast<T>(1.0 - unit);
  return value > T(0) ? value : std::numeric_limits<T>::min();
}

template <typename T>
curandStatus_t Uniform(const char* routine, curandGenerator_t generator, T* output, size_t n) {
  if (generator == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  if (n == 0) return CURAND_STATUS_SUCCESS;
  if (!DeviceOutput(routine, generator, output, n)) return CURAND_STATUS_LAUNCH_FAILURE;
  std::vector<T> values(n);
  for (T& value : values) value = UniformOpenClosed<T>(generator->engine);
  IssueWrite(nullptr, output, std::move(values));  // where cuRAND's kernel runs
  return CURAND_STATUS_SUCCESS;
}

template <typename T>
curandStatus_t Normal(const char* routine, curandGenerator_t generator, T* output, size_t n, T mean,
                      T stddev) {
  if (generator == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  if (n % 2 != 0) {
    std::fprintf(stderr, "CUDA emulator: %s: count %zu is odd; cuRAND needs a multiple of 2\n",
                 routine, n);
    return CURAND_STATUS_LENGTH_NOT_MULTIPLE;
  }
  if (n == 0) return CURAND_STATUS_SUCCESS;
  if (!DeviceOutput(routine, generator, output, n)) return CURAND_STATUS_LAUNCH_FAILURE;
  std::vector<T> values(n);
  for (size_t i = 0; i < n; i += 2) {  // Box-Muller: two normals from two uniforms
    const double u1 = UniformOpenClosed<double>(generator->engine);
    const double u2 = UniformOpenClosed<double>(generator->engine);
    const double radius = std::sqrt(-2.0 * std::log(u1)), angle = 2.0 * M_PI * u2;
    values[i] = static_cast<T>(mean + stddev * radius * std::cos(angle));
    values[i + 1] = static_cast<T>(mean + stddev * radius * std::sin(angle));
  }
  IssueWrite(nullptr, output, std::move(values));  // where cuRAND's kernel runs
  return CURAND_STATUS_SUCCESS;
}

}  // namespace
}  // namespace caffe_emu

curandStatus_t curandCreateGenerator(curandGenerator_t* generator, curandRngType_t type) {
  if (type != CURAND_RNG_PSEUDO_DEFAULT && type != CURAND_RNG_PSEUDO_XORWOW) {
    return CURAND_STATUS_TYPE_ERROR;
  }
  *generator = new curandGenerator_st();
  (*generator)->device = caffe_emu::CurrentDevice();
  (*generator)->Restart();
  return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandDestroyGenerator(curandGenerator_t generator) {
  if (generator == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  delete generator;
  return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t generator,
                                                  unsigned long long seed) {
  if (generator == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  generator->seed = seed;
  generator->Restart();
  return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandSetGeneratorOffset(curandGenerator_t generator, unsigned long long offset) {
  if (generator == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  generator->offset = offset;
  generator->Restart();
  return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandGenerate(curandGenerator_t generator, unsigned int* output, size_t n) {
  if (generator == nullptr) return CURAND_STATUS_NOT_INITIALIZED;
  if (n == 0) return CURAND_STATUS_SUCCESS;
  if (!caffe_emu::DeviceOutput("curandGenerate", generator, output, n)) {
    return CURAND_STATUS_LAUNCH_FAILURE;
  }
  std::vector<unsigned int> values(n);
  for (unsigned int& value : values) value = static_cast<unsigned int>(generator->engine() >> 32);
  caffe_emu::IssueWrite(nullptr, output, std::move(values));
  return CURAND_STATUS_SUCCESS;
}

curandStatus_t curandGenerateUniform(curandGenerator_t generator, float* output, size_t n) {
  return caffe_emu::Uniform("curandGenerateUniform", generator, output, n);
}

curandStatus_t curandGenerateUniformDouble(curandGenerator_t generator, double* output, size_t n) {
  return caffe_emu::Uniform("curandGenerateUniformDouble", generator, output, n);
}

curandStatus_t curandGenerateNormal(curandGenerator_t generator, float* output, size_t n,
                                    float mean, float stddev) {
  return caffe_emu::Normal("curandGenerateNormal", generator, output, n, mean, stddev);
}

curandStatus_t curandGenerateNormalDouble(curandGenerator_t generator, double* output, size_t n,
                                          double mean, double stddev) {
  return caffe_emu::Normal("curandGenerateNormalDouble", generator, output, n, mean, stddev);
}
