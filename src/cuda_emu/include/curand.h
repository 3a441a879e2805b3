// The CUDA emulator's cuRAND host API (docs/CUDA_EMU.md): pseudo-random generators that fill
// emulated device memory, with cuRAND's argument checks (a normal fill needs an even count).
// The sequences are the host's (std::mt19937_64), not XORWOW's.
#ifndef CAFFE_CUDA_EMU_CURAND_H_
#define CAFFE_CUDA_EMU_CURAND_H_

#include <cuda_runtime.h>

enum curandStatus_t {
  CURAND_STATUS_SUCCESS = 0,
  CURAND_STATUS_NOT_INITIALIZED = 101,
  CURAND_STATUS_TYPE_ERROR = 103,
  CURAND_STATUS_LENGTH_NOT_MULTIPLE = 105,
  CURAND_STATUS_LAUNCH_FAILURE = 201,
};

enum curandRngType_t { CURAND_RNG_PSEUDO_DEFAULT = 100, CURAND_RNG_PSEUDO_XORWOW = 101 };

struct curandGenerator_st;
using curandGenerator_t = curandGenerator_st*;

curandStatus_t curandCreateGenerator(curandGenerator_t* generator, curandRngType_t type);
curandStatus_t curandDestroyGenerator(curandGenerator_t generator);
curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t generator,
                                                  unsigned long long seed);
curandStatus_t curandSetGeneratorOffset(curandGenerator_t generator, unsigned long long offset);
curandStatus_t curandGenerate(curandGenerator_t generator, unsigned int* output, size_t n);
curandStatus_t curandGenerateUniform(curandGenerator_t generator, float* output, size_t n);
curandStatus_t curandGenerateUniformDouble(curandGenerator_t generator, double* output, size_t n);
curandStatus_t curandGenerateNormal(curandGenerator_t generator, float* output, size_t n,
                                    float mean, float stddev);
curandStatus_t curandGenerateNormalDouble(curandGenerator_t generator, double* output, size_t n,
                                          double mean, double stddev);

#endif  // CAFFE_CUDA_EMU_CURAND_H_
