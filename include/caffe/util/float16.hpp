// 16-bit floating-point numbers as they are stored and sent: IEEE 754 binary16 ("fp16": 1 sign,
// 5 exponent, 10 mantissa bits; normal from 6.1e-5 to 65504, subnormal down to 6e-8) and bfloat16
// ("bf16": the upper half of an fp32, 1-8-7 bits; fp32's range, 8 significant bits). Conversions
// from float round to nearest, ties to even, as the hardware does (F16C's VCVTPS2PH, AVX-512
// BF16's VCVTNEPS2BF16, CUDA's __float2half_rn and __float2bfloat16_rn), so a value converted here
// equals one converted on a GPU; values beyond the range become infinities and NaN stays NaN.
// Conversions to float are exact.
#ifndef CAFFE_UTIL_FLOAT16_HPP_
#define CAFFE_UTIL_FLOAT16_HPP_

#include <cstddef>
#include <cstdint>

namespace caffe {

uint16_t Fp16FromFloat(float value);
float FloatFromFp16(uint16_t bits);
uint16_t Bf16FromFloat(float value);
float FloatFromBf16(uint16_t bits);

/// Arrays, dst[i] = convert(src[i]): the same results as the scalar functions, with the CPU's
/// conversion instructions where the build targets them (F16C for fp16, AVX2 for bf16).
void FloatsToFp16(const float* src, size_t count, uint16_t* dst);
void Fp16ToFloats(const uint16_t* src, size_t count, float* dst);
void FloatsToBf16(const float* src, size_t count, uint16_t* dst);
void Bf16ToFloats(const uint16_t* src, size_t count, float* dst);

}  // namespace caffe

#endif  // CAFFE_UTIL_FLOAT16_HPP_
