// fp16 and bf16 conversions: every fp16 value survives a round trip through float; known values,
// ties to even, overflow to infinity, subnormals and NaN in both formats; the array functions
// (F16C's instructions where the build targets them) agree with the scalar ones bit for bit on a
// million random floats; and bf16's rounding picks the nearer of its two neighbours.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "caffe/util/float16.hpp"

namespace caffe {

namespace {

float FloatOfBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// Random bit patterns (every class of float: zeros, subnormals, normals, infinities, NaNs), plus
// the values around fp16's limits.
std::vector<float> TestFloats() {
  std::vector<float> values;
  std::mt19937 random(7);
  for (int i = 0; i < 1000000; ++i) values.push_back(FloatOfBits(random()));
  for (float edge : {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 6.1035156e-5f, 5.9604645e-8f,
                     2.9802322e-8f, 2.9802326e-8f, 1.0f, 1.00048828125f, 1e-40f,
                     std::numeric_limits<float>::max(), std::numeric_limits<float>::infinity()}) {
    values.push_back(edge);
    values.push_back(-edge);
  }
  values.push_back(0.1f);  // an odd count: the array functions' tails run too
  return values;
}

}  // namespace

TEST(Float16Test, EveryFp16ValueSurvivesARoundTripThroughFloat) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const uint16_t half = static_cast<uint16_t>(bits);
    const float value = FloatFromFp16(half);
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(FloatFromFp16(Fp16FromFloat(value)))) << bits;
    } else {
      EXPECT_EQ(Fp16FromFloat(value), half) << "fp16 0x" << std::hex << bits;
    }
  }
}

TEST(Float16Test, Fp16KnownValuesRoundToNearestEven) {
  EXPECT_EQ(Fp16FromFloat(1.0f), 0x3c00);
  EXPECT_EQ(Fp16FromFloat(-2.0f), 0xc000);
  EXPECT_EQ(Fp16FromFloat(-0.0f), 0x8000);
  EXPECT_EQ(Fp16FromFloat(65504.0f), 0x7bff);        // the largest
  EXPECT_EQ(Fp16FromFloat(65519.99f), 0x7bff);       // below the halfway point
  EXPECT_EQ(Fp16FromFloat(65520.0f), 0x7c00);        // halfway to 2^16: to infinity
  EXPECT_EQ(Fp16FromFloat(1.00048828125f), 0x3c00);  // 1 + 2^-11, a tie: to even
  EXPECT_EQ(Fp16FromFloat(1.00146484375f), 0x3c02);  // 1 + 3 x 2^-11, a tie: to even
  EXPECT_EQ(Fp16FromFloat(5.9604645e-8f), 0x0001);   // 2^-24, the smallest subnormal
  EXPECT_EQ(Fp16FromFloat(2.98023224e-8f), 0x0000);  // 2^-25, a tie: to even (zero)
  EXPECT_EQ(Fp16FromFloat(2.98023259e-8f), 0x0001);  // just above 2^-25
  EXPECT_EQ(Fp16FromFloat(6.1035156e-5f), 0x0400);   // 2^-14, the smallest normal
  EXPECT_EQ(Fp16FromFloat(1e-40f), 0x0000);          // an fp32 subnormal
  EXPECT_EQ(Fp16FromFloat(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_TRUE(std::isnan(FloatFromFp16(Fp16FromFloat(std::nanf("")))));
  EXPECT_EQ(FloatFromFp16(0x3555), 0.333251953125f);
  EXPECT_EQ(FloatFromFp16(0x8001), -5.9604645e-8f);
}

TEST(Float16Test, Bf16KnownValuesRoundToNearestEven) {
  EXPECT_EQ(Bf16FromFloat(1.0f), 0x3f80);
  EXPECT_EQ(Bf16FromFloat(FloatOfBits(0x3f808000)), 0x3f80);            // a tie: to even
  EXPECT_EQ(Bf16FromFloat(FloatOfBits(0x3f818000)), 0x3f82);            // a tie: to even
  EXPECT_EQ(Bf16FromFloat(FloatOfBits(0x3f808001)), 0x3f81);            // above the tie
  EXPECT_EQ(Bf16FromFloat(std::numeric_limits<float>::max()), 0x7f80);  // rounds to infinity
  EXPECT_EQ(Bf16FromFloat(1e-40f), 0x0001);  // fp32's subnormals are bf16's too
  EXPECT_EQ(FloatFromBf16(0xc040), -3.0f);
  EXPECT_TRUE(std::isnan(FloatFromBf16(Bf16FromFloat(std::nanf("")))));
  EXPECT_TRUE(std::isnan(FloatFromBf16(Bf16FromFloat(FloatOfBits(0x7f800001)))));  // stays NaN
}

TEST(Float16Test, Bf16PicksTheNearerNeighbour) {
  for (float value : TestFloats()) {
    if (!std::isfinite(value) || std::abs(value) > 3.3e38f) continue;
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    const float below = FloatOfBits(bits & 0xffff0000u);
    const float above = FloatOfBits((bits & 0xffff0000u) + 0x10000u);
    const float got = FloatFromBf16(Bf16FromFloat(value));
    const double error = std::abs(static_cast<double>(got) - value);
    EXPECT_LE(error, std::abs(static_cast<double>(below) - value)) << value;
    EXPECT_LE(error, std::abs(static_cast<double>(above) - value)) << value;
  }
}

TEST(Float16Test, ArrayConversionsEqualTheScalarOnes) {
  const std::vector<float> values = TestFloats();
  std::vector<uint16_t> half(values.size()), brain(values.size());
  FloatsToFp16(values.data(), values.size(), half.data());
  FloatsToBf16(values.data(), values.size(), brain.data());
  std::vector<float> from_half(values.size()), from_brain(values.size());
  Fp16ToFloats(half.data(), half.size(), from_half.data());
  Bf16ToFloats(brain.data(), brain.size(), from_brain.data());
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(half[i], Fp16FromFloat(values[i])) << "element " << i << ": " << values[i];
    ASSERT_EQ(brain[i], Bf16FromFloat(values[i])) << "element " << i << ": " << values[i];
    const float expected_half = FloatFromFp16(half[i]);
    const float expected_brain = FloatFromBf16(brain[i]);
    ASSERT_EQ(std::memcmp(&from_half[i], &expected_half, sizeof(float)), 0) << i;
    ASSERT_EQ(std::memcmp(&from_brain[i], &expected_brain, sizeof(float)), 0) << i;
  }
}

}  // namespace caffe
