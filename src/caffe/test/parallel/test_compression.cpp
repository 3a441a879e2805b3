// Gradient compression's conversions (-ddl "-compress"): names parse both ways; a decompressed
// value is within the unit roundoff of the original (fp16's subnormals: within half their step);
// DecompressAdd adds in the buffer's type; RoundAsCompressed gives what a receiver gets and is
// idempotent (the property that keeps members bitwise equal); and both buffer types, across the
// chunk boundary.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "caffe/parallel/compression.hpp"

namespace caffe {

namespace {

template <typename Dtype>
std::vector<Dtype> Gradients(size_t count) {
  std::vector<Dtype> values(count);
  for (size_t i = 0; i < count; ++i) {
    values[i] = static_cast<Dtype>((i % 2 ? -1.0 : 1.0) * std::exp(-0.01 * (i % 1500)) / 3.0);
  }
  return values;
}

}  // namespace

template <typename Dtype>
class CompressionTest : public ::testing::Test {};
using CompressionDtypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CompressionTest, CompressionDtypes);

TEST(CompressionNamesTest, ParseAndNameAgree) {
  for (Compression compression : {Compression::kNone, Compression::kFp16, Compression::kBf16}) {
    Compression parsed = Compression::kNone;
    ASSERT_TRUE(ParseCompression(CompressionName(compression), &parsed));
    EXPECT_EQ(parsed, compression);
  }
  Compression parsed = Compression::kFp16;
  EXPECT_FALSE(ParseCompression("half", &parsed));
  EXPECT_EQ(parsed, Compression::kFp16);
  EXPECT_EQ(CompressedBytes(Compression::kNone, 4), 4u);
  EXPECT_EQ(CompressedBytes(Compression::kBf16, 4), 2u);
  EXPECT_EQ(CompressionUnitRoundoff(Compression::kNone), 0);
}

TYPED_TEST(CompressionTest, RoundTripErrsByAtMostTheUnitRoundoff) {
  const size_t count = 3000;  // crosses the 1024-value chunks
  const std::vector<TypeParam> values = Gradients<TypeParam>(count);
  for (Compression compression : {Compression::kFp16, Compression::kBf16}) {
    std::vector<uint16_t> wire(count);
    std::vector<TypeParam> back(count);
    Compress(compression, values.data(), count, wire.data());
    Decompress(compression, wire.data(), count, back.data());
    // fp16's subnormals (below 2^-14) are spaced 2^-24 apart: there the error is absolute.
    const double subnormal_error = compression == Compression::kFp16 ? std::ldexp(1.0, -25) : 0;
    size_t changed = 0;
    for (size_t i = 0; i < count; ++i) {
      EXPECT_LE(std::abs(back[i] - values[i]),
                CompressionUnitRoundoff(compression) * std::abs(values[i]) + subnormal_error)
          << CompressionName(compression) << " element " << i;
      changed += back[i] != values[i];
    }
    EXPECT_GT(changed, count / 2) << "full-precision values should lose bits in 16";
  }
}

TYPED_TEST(CompressionTest, DecompressAddAddsInTheBufferType) {
  const size_t count = 2500;
  const std::vector<TypeParam> values = Gradients<TypeParam>(count);
  for (Compression compression : {Compression::kFp16, Compression::kBf16}) {
    std::vector<uint16_t> wire(count);
    Compress(compression, values.data(), count, wire.data());
    std::vector<TypeParam> decoded(count), sum(values);
    Decompress(compression, wire.data(), count, decoded.data());
    DecompressAdd(compression, wire.data(), count, sum.data());
    for (size_t i = 0; i < count; ++i) {
      ASSERT_EQ(sum[i], values[i] + decoded[i]) << CompressionName(compression) << " " << i;
    }
  }
}

TYPED_TEST(CompressionTest, RoundAsCompressedIsWhatAReceiverGetsAndIdempotent) {
  const size_t count = 2049;
  const std::vector<TypeParam> values = Gradients<TypeParam>(count);
  for (Compression compression : {Compression::kFp16, Compression::kBf16}) {
    std::vector<uint16_t> wire(count), again(count);
    std::vector<TypeParam> received(count), rounded(values);
    Compress(compression, values.data(), count, wire.data());
    Decompress(compression, wire.data(), count, received.data());
    RoundAsCompressed(compression, rounded.data(), count);
    EXPECT_EQ(rounded, received) << CompressionName(compression);
    Compress(compression, rounded.data(), count, again.data());
    EXPECT_EQ(again, wire) << CompressionName(compression);
  }
  std::vector<TypeParam> untouched(values);
  RoundAsCompressed(Compression::kNone, untouched.data(), count);
  EXPECT_EQ(untouched, values);
}

}  // namespace caffe
