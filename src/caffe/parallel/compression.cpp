#include "caffe/parallel/compression.hpp"

#include <glog/logging.h>

#include <algorithm>
#include <type_traits>

#include "caffe/util/float16.hpp"

namespace caffe {

namespace {

// Values are converted through a float array of this many elements on the stack.
constexpr size_t kChunk = 1024;

void ToWire(Compression compression, const float* src, size_t count, uint16_t* dst) {
  CHECK(compression != Compression::kNone) << "no 16-bit form without compression";
  if (compression == Compression::kFp16) {
    FloatsToFp16(src, count, dst);
  } else {
    FloatsToBf16(src, count, dst);
  }
}

void FromWire(Compression compression, const uint16_t* src, size_t count, float* dst) {
  CHECK(compression != Compression::kNone) << "no 16-bit form without compression";
  if (compression == Compression::kFp16) {
    Fp16ToFloats(src, count, dst);
  } else {
    Bf16ToFloats(src, count, dst);
  }
}

}  // namespace

const char* CompressionName(Compression compression) {
  switch (compression) {
    case Compression::kFp16:
      return "fp16";
    case Compression::kBf16:
      return "bf16";
    case Compression::kNone:
      break;
  }
  return "none";
}

bool ParseCompression(const std::string& text, Compression* compression) {
  for (Compression candidate : {Compression::kNone, Compression::kFp16, Compression::kBf16}) {
    if (text == CompressionName(candidate)) {
      *compression = candidate;
      return true;
    }
  }
  return false;
}

double CompressionUnitRoundoff(Compression compression) {
  switch (compression) {
    case Compression::kFp16:
      return 1.0 / 2048;  // 11 significant bits
    case Compression::kBf16:
      return 1.0 / 256;  // 8 significant bits
    case Compression::kNone:
      break;
  }
  return 0;
}

size_t CompressedBytes(Compression compression, size_t native) {
  return compression == Compression::kNone ? native : sizeof(uint16_t);
}

template <typename Dtype>
void Compress(Compression compression, const Dtype* src, size_t count, uint16_t* dst) {
  if constexpr (std::is_same_v<Dtype, float>) {
    ToWire(compression, src, count, dst);
  } else {
    float chunk[kChunk];
    for (size_t begin = 0; begin < count; begin += kChunk) {
      const size_t n = std::min(kChunk, count - begin);
      std::copy(src + begin, src + begin + n, chunk);
      ToWire(compression, chunk, n, dst + begin);
    }
  }
}

template <typename Dtype>
void Decompress(Compression compression, const uint16_t* src, size_t count, Dtype* dst) {
  float chunk[kChunk];
  for (size_t begin = 0; begin < count; begin += kChunk) {
    const size_t n = std::min(kChunk, count - begin);
    FromWire(compression, src + begin, n, chunk);
    std::copy(chunk, chunk + n, dst + begin);
  }
}

template <typename Dtype>
void DecompressAdd(Compression compression, const uint16_t* src, size_t count, Dtype* dst) {
  float chunk[kChunk];
  for (size_t begin = 0; begin < count; begin += kChunk) {
    const size_t n = std::min(kChunk, count - begin);
    FromWire(compression, src + begin, n, chunk);
    Dtype* target = dst + begin;
    for (size_t i = 0; i < n; ++i) target[i] += chunk[i];
  }
}

template <typename Dtype>
void RoundAsCompressed(Compression compression, Dtype* data, size_t count) {
  if (compression == Compression::kNone) return;
  uint16_t wire[kChunk];
  for (size_t begin = 0; begin < count; begin += kChunk) {
    const size_t n = std::min(kChunk, count - begin);
    Compress(compression, data + begin, n, wire);
    Decompress(compression, wire, n, data + begin);
  }
}

template void Compress<float>(Compression, const float*, size_t, uint16_t*);
template void Compress<double>(Compression, const double*, size_t, uint16_t*);
template void Decompress<float>(Compression, const uint16_t*, size_t, float*);
template void Decompress<double>(Compression, const uint16_t*, size_t, double*);
template void DecompressAdd<float>(Compression, const uint16_t*, size_t, float*);
template void DecompressAdd<double>(Compression, const uint16_t*, size_t, double*);
template void RoundAsCompressed<float>(Compression, float*, size_t);
template void RoundAsCompressed<double>(Compression, double*, size_t);

}  // namespace caffe
