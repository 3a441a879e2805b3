#include "caffe/util/float16.hpp"

#include <cstring>
#if defined(__F16C__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace caffe {

namespace {

uint32_t BitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float FloatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

}  // namespace

uint16_t Fp16FromFloat(float value) {
  uint32_t bits = BitsOf(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  bits &= 0x7fffffffu;
  if (bits > 0x7f800000u) {  // NaN: keep the top of the payload, always quiet
    return static_cast<uint16_t>(sign | 0x7e00u | ((bits >> 13) & 0x3ffu));
  }
  // 65520 (65504 plus half its ulp) and beyond round to infinity.
  if (bits >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (bits >= 0x38800000u) {  // normal in fp16 (2^-14 and up)
    // Rebias the exponent (127 -> 15), then round the 13 dropped bits to nearest, ties to even;
    // a carry out of the mantissa correctly bumps the exponent.
    const uint32_t odd = (bits >> 13) & 1u;
    bits = bits - (112u << 23) + 0xfffu + odd;
    return static_cast<uint16_t>(sign | (bits >> 13));
  }
  // Subnormal or zero in fp16: adding 0.5f lines fp16's subnormal step (2^-24) up with the last
  // mantissa bit of the sum, so the float addition itself rounds to nearest even.
  const float sum = FloatOf(bits) + 0.5f;
  return static_cast<uint16_t>(sign | (BitsOf(sum) - 0x3f000000u));
}

float FloatFromFp16(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t magnitude = half & 0x7fffu;
  if (magnitude >= 0x7c00u) return FloatOf(sign | 0x7f800000u | ((magnitude & 0x3ffu) << 13));
  if (magnitude >= 0x0400u) return FloatOf(sign | ((magnitude << 13) + (112u << 23)));
  // Subnormal or zero: magnitude x 2^-24, exact in float.
  const float value = static_cast<float>(magnitude) * 5.9604644775390625e-8f;
  return sign ? -value : value;
}

uint16_t Bf16FromFloat(float value) {
  const uint32_t bits = BitsOf(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  const uint32_t odd = (bits >> 16) & 1u;
  return static_cast<uint16_t>((bits + 0x7fffu + odd) >> 16);
}

float FloatFromBf16(uint16_t bits) { return FloatOf(static_cast<uint32_t>(bits) << 16); }

void FloatsToFp16(const float* src, size_t count, uint16_t* dst) {
  size_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= count; i += 8) {
    const __m128i half = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), half);
  }
#endif
  for (; i < count; ++i) dst[i] = Fp16FromFloat(src[i]);
}

void Fp16ToFloats(const uint16_t* src, size_t count, float* dst) {
  size_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= count; i += 8) {
    const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(half));
  }
#endif
  for (; i < count; ++i) dst[i] = FloatFromFp16(src[i]);
}

void FloatsToBf16(const float* src, size_t count, uint16_t* dst) {
  size_t i = 0;
#if defined(__AVX2__)
  // Bf16FromFloat on 8 floats at once: round the upper halves, quiet NaNs instead, then pack.
  const __m256i one = _mm256_set1_epi32(1), half_ulp = _mm256_set1_epi32(0x7fff);
  const __m256i magnitude = _mm256_set1_epi32(0x7fffffff), infinity = _mm256_set1_epi32(0x7f800000);
  const __m256i quiet = _mm256_set1_epi32(0x40);
  for (; i + 8 <= count; i += 8) {
    const __m256i bits = _mm256_castps_si256(_mm256_loadu_ps(src + i));
    const __m256i upper = _mm256_srli_epi32(bits, 16);
    const __m256i odd = _mm256_and_si256(upper, one);
    const __m256i rounded =
        _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_add_epi32(half_ulp, odd)), 16);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, magnitude), infinity);
    const __m256i value = _mm256_blendv_epi8(rounded, _mm256_or_si256(upper, quiet), nan);
    // packus works per 128-bit lane: take the low 64 bits of each lane.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(value, value), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm256_castsi256_si128(packed));
  }
#endif
  for (; i < count; ++i) dst[i] = Bf16FromFloat(src[i]);
}

void Bf16ToFloats(const uint16_t* src, size_t count, float* dst) {
  size_t i = 0;
#if defined(__AVX2__)
  for (; i + 8 <= count; i += 8) {
    const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m256i bits = _mm256_slli_epi32(_mm256_cvtepu16_epi32(half), 16);
    _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(bits));
  }
#endif
  for (; i < count; ++i) dst[i] = FloatFromBf16(src[i]);
}

}  // namespace caffe
