// Gradient compression for DDL's allreduce (`-ddl "-compress fp16|bf16"`, Horovod's
// Compression.fp16): the communicators that move buffers with MPI send each value in 16 bits and
// add what they receive in the buffer's own type (fp32), so every addition is a 32-bit one and only
// the values in flight are rounded. Half the bytes cross the network; the result is the sum with
// a relative error of at most about (hops) x the format's unit roundoff (fp16 2^-11, bf16 2^-8).
// fp16 keeps 3 more bits, but below 6.1e-5 its values are subnormal (spaced 6e-8 apart: small
// gradients lose their relative precision, and those below 3e-8 become zero), and above 65504 it
// overflows to infinity; bf16 has fp32's range. NCCL stages (GPU learners) move fp32 regardless.
// Every member still ends with bitwise the same values: each member rounds its own reduced block to
// the format before sending it round (RoundAsCompressed), so what it keeps equals what the others
// receive.
#ifndef CAFFE_PARALLEL_COMPRESSION_HPP_
#define CAFFE_PARALLEL_COMPRESSION_HPP_

#include <cstddef>
#include <cstdint>
#include <string>

namespace caffe {

enum class Compression { kNone, kFp16, kBf16 };

/// "none", "fp16", "bf16".
const char* CompressionName(Compression compression);
/// The inverse of CompressionName; false for any other text.
bool ParseCompression(const std::string& text, Compression* compression);
/// The largest relative error of one rounding to the format (0 for kNone).
double CompressionUnitRoundoff(Compression compression);
/// Bytes one value takes on the wire (`native` for kNone).
size_t CompressedBytes(Compression compression, size_t native);

/// dst[i] = the 16-bit form of src[i]. compression must not be kNone.
template <typename Dtype>
void Compress(Compression compression, const Dtype* src, size_t count, uint16_t* dst);
/// dst[i] = the value of src[i].
template <typename Dtype>
void Decompress(Compression compression, const uint16_t* src, size_t count, Dtype* dst);
/// dst[i] += the value of src[i], added in Dtype.
template <typename Dtype>
void DecompressAdd(Compression compression, const uint16_t* src, size_t count, Dtype* dst);
/// data[i] = the value its 16-bit form has (what a receiver of data[i] gets); no-op for kNone.
template <typename Dtype>
void RoundAsCompressed(Compression compression, Dtype* data, size_t count);

}  // namespace caffe

#endif  // CAFFE_PARALLEL_COMPRESSION_HPP_
