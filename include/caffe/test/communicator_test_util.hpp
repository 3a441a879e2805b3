// Checks for DDL's communicators, run on every rank of an MPI test (see mpi_test_main.hpp). Each
// rank contributes (rank + 1) * ((i % 251) - 125) + (i % 7) at element i: small integers, so every
// float and double sum is exact whatever the order of addition, and a misplaced block or a
// missing rank shows as a wrong value. Lengths cover empty, fewer elements than ranks, odd and
// prime sizes, and the 64 Ki-element segment boundaries of the point-to-point algorithms.
#ifndef CAFFE_TEST_COMMUNICATOR_TEST_UTIL_HPP_
#define CAFFE_TEST_COMMUNICATOR_TEST_UTIL_HPP_

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "caffe/parallel/communicator.hpp"
#include "caffe/parallel/compression.hpp"
#include "caffe/test/mpi_test_main.hpp"
#include "caffe/util/error.hpp"

namespace caffe {

inline std::vector<size_t> CommunicatorTestLengths() {
  return {0, 1, 2, 3, 5, 7, 13, 127, 1000, 4097, 65535, 65536, 65537, 3 * 65536 + 11, 300007};
}

template <typename Dtype>
Dtype Contribution(int rank, size_t i) {
  return static_cast<Dtype>((rank + 1) * (static_cast<long>(i % 251) - 125) +
                            static_cast<long>(i % 7));
}

/// The exact sum over `size` ranks at element i.
template <typename Dtype>
Dtype ExpectedSum(int size, size_t i) {
  return static_cast<Dtype>(static_cast<long>(size) * (size + 1) / 2 *
                                (static_cast<long>(i % 251) - 125) +
                            static_cast<long>(size) * static_cast<long>(i % 7));
}

template <typename Dtype>
std::vector<Dtype> Contributions(int rank, size_t count) {
  std::vector<Dtype> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = Contribution<Dtype>(rank, i);
  return values;
}

/// Index of the first element of [begin, end) that is not the exact sum over `size` ranks, or
/// end if all are.
template <typename Dtype>
size_t FirstWrongSum(const std::vector<Dtype>& values, int size, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) {
    if (values[i] != ExpectedSum<Dtype>(size, i)) return i;
  }
  return end;
}

/// Allreduce of every test length over `comm` (whose members are `group_size` ranks) gives the
/// exact sum everywhere.
template <typename Dtype>
void ExpectExactAllreduce(Communicator<Dtype>* comm, int group_rank, int group_size) {
  for (size_t count : CommunicatorTestLengths()) {
    std::vector<Dtype> buffer = Contributions<Dtype>(group_rank, count);
    comm->Allreduce(buffer.data(), count);
    const size_t wrong = FirstWrongSum(buffer, group_size, 0, count);
    EXPECT_EQ(wrong, count) << comm->name() << ": " << count << " elements, element " << wrong
                            << " is " << (wrong < count ? buffer[wrong] : 0) << ", expected "
                            << ExpectedSum<Dtype>(group_size, wrong);
  }
}

/// Blocks of very different sizes, some empty: member i gets ((i * 7) % 5) * unit elements,
/// plus 3 for the last one.
inline Blocks UnevenBlocks(int parts, size_t unit) {
  Blocks blocks;
  size_t offset = 0;
  for (int i = 0; i < parts; ++i) {
    blocks.offset.push_back(offset);
    blocks.count.push_back(((i * 7) % 5) * unit + (i == parts - 1 ? 3 : 0));
    offset += blocks.count.back();
  }
  return blocks;
}

/// ReduceScatter leaves each member its block summed; Allgather then completes every block.
template <typename Dtype>
void ExpectReduceScatterThenAllgather(TwoPhaseCommunicator<Dtype>* comm, const Blocks& blocks) {
  const size_t total = blocks.total();
  const int rank = comm->rank(), size = comm->size();
  std::vector<Dtype> buffer = Contributions<Dtype>(rank, total);
  comm->ReduceScatter(buffer.data(), blocks);
  const size_t begin = blocks.offset[rank], end = begin + blocks.count[rank];
  EXPECT_EQ(FirstWrongSum(buffer, size, begin, end), end)
      << comm->name() << ": reduce-scatter of " << total << " elements, own block [" << begin
      << ", " << end << ")";
  // Only the own block counts for the allgather: scribble over the rest.
  for (size_t i = 0; i < total; ++i) {
    if (i < begin || i >= end) buffer[i] = Dtype(-999);
  }
  comm->Allgather(buffer.data(), blocks);
  EXPECT_EQ(FirstWrongSum(buffer, size, 0, total), total)
      << comm->name() << ": allgather of " << total << " elements";
}

/// ExpectReduceScatterThenAllgather over uneven blocks (some empty, one over a segment) and over
/// even blocks of fewer, as many and more elements than members.
template <typename Dtype>
void ExpectUnevenAndEmptyBlocksWork(TwoPhaseCommunicator<Dtype>* comm) {
  const int size = comm->size();
  for (size_t unit : {0, 1, 5, 70001}) {
    ExpectReduceScatterThenAllgather(comm, UnevenBlocks(size, unit));
  }
  for (size_t total : {size_t(1), size_t(size - 1), size_t(size + 1)}) {
    ExpectReduceScatterThenAllgather(comm, Blocks::Even(total, size));
  }
}

/// Blocks for one member more or fewer than the group are a caffe::Error in both phases.
template <typename Dtype>
void ExpectBlocksForAnotherGroupSizeRejected(TwoPhaseCommunicator<Dtype>* comm) {
  std::vector<Dtype> buffer(10);
  EXPECT_THROW(comm->ReduceScatter(buffer.data(), Blocks::Even(10, comm->size() + 1)), Error);
  EXPECT_THROW(comm->Allgather(buffer.data(), Blocks::Even(10, comm->size() - 1)), Error);
}

/// After an allreduce of inexact values (sums depend on the order of addition) every member
/// holds bitwise the same result.
template <typename Dtype>
void ExpectBitwiseIdenticalResults(Communicator<Dtype>* comm, MPI_Comm members, size_t count) {
  std::vector<Dtype> buffer(count);
  for (size_t i = 0; i < count; ++i) {
    buffer[i] = static_cast<Dtype>(1.0 / (3.0 + i) + 0.1 * comm->rank() + 1e-3 * (i % 17));
  }
  comm->Allreduce(buffer.data(), count);
  std::vector<Dtype> first(buffer);
  MPI_Bcast(first.data(), static_cast<int>(count * sizeof(Dtype)), MPI_BYTE, 0, members);
  EXPECT_EQ(std::memcmp(first.data(), buffer.data(), count * sizeof(Dtype)), 0)
      << comm->name() << ": members disagree after an allreduce of " << count << " elements";
}

/// A value no 16-bit format holds exactly (a full mantissa), of either sign and of magnitudes
/// from about 1e-3 to 10, rank r's at element i.
template <typename Dtype>
Dtype InexactContribution(int rank, size_t i) {
  const double sign = (i + rank) % 3 == 0 ? -1.0 : 1.0;
  return static_cast<Dtype>(sign * (1.0 / (3.0 + i % 1009) + 0.37 * rank + 1e-3 * (i % 17)) *
                            (1 + i % 10));
}

/// With `compression` (the communicator's own), an allreduce of each of `lengths` over `comm`
/// (whose members are `group_size` ranks) ends with: every element within the rounding's bound
/// of the exact sum (2P roundings of at most the unit roundoff of the sum of magnitudes), every
/// element a value the 16-bit format holds (so the values did travel in 16 bits: a full-precision
/// transfer would keep fp32's mantissa), and bitwise the same buffer on every member.
template <typename Dtype>
void ExpectCompressedAllreduceWithinRounding(Communicator<Dtype>* comm, int group_rank,
                                             int group_size, MPI_Comm members,
                                             Compression compression,
                                             const std::vector<size_t>& lengths) {
  const double bound = 2.0 * group_size * CompressionUnitRoundoff(compression);
  for (size_t count : lengths) {
    std::vector<Dtype> buffer(count);
    for (size_t i = 0; i < count; ++i) buffer[i] = InexactContribution<Dtype>(group_rank, i);
    comm->Allreduce(buffer.data(), count);
    size_t outside = count, unrounded = count;
    for (size_t i = 0; i < count; ++i) {
      double exact = 0, magnitude = 0;
      for (int r = 0; r < group_size; ++r) {
        exact += static_cast<double>(InexactContribution<Dtype>(r, i));
        magnitude += std::abs(static_cast<double>(InexactContribution<Dtype>(r, i)));
      }
      if (outside == count && std::abs(buffer[i] - exact) > bound * magnitude) outside = i;
      Dtype rounded = buffer[i];
      RoundAsCompressed(compression, &rounded, 1);
      if (unrounded == count && group_size > 1 && rounded != buffer[i]) unrounded = i;
    }
    EXPECT_EQ(outside, count) << comm->name() << " " << CompressionName(compression) << ": "
                              << count << " elements, element " << outside
                              << " is further from the exact sum than the rounding allows";
    EXPECT_EQ(unrounded, count) << comm->name() << " " << CompressionName(compression) << ": "
                                << count << " elements, element " << unrounded << " ("
                                << (unrounded < count ? buffer[unrounded] : 0)
                                << ") is not a 16-bit value";
    if (count == 0) continue;
    std::vector<Dtype> first(buffer);
    MPI_Bcast(first.data(), static_cast<int>(count * sizeof(Dtype)), MPI_BYTE, 0, members);
    EXPECT_EQ(std::memcmp(first.data(), buffer.data(), count * sizeof(Dtype)), 0)
        << comm->name() << " " << CompressionName(compression) << ": members disagree after an "
        << "allreduce of " << count << " elements";
  }
}

}  // namespace caffe

#endif  // CAFFE_TEST_COMMUNICATOR_TEST_UTIL_HPP_
