// RCS (IBM DDL's mode c): reduce-scatter by recursive halving, allgather by recursive doubling
// (Rabenseifner's allreduce). With P a power of two, at step k members 2^k apart swap half of
// what they still hold and add, so after log2 P steps each member holds its block summed; the
// allgather runs the steps backwards. log2 P messages per phase (latency better than the ring's
// P-1) for the same 2(P-1)/P n elements sent.
//
// Any P: with p = the largest power of two <= P and r = P - p, members 2i and 2i+1 (i < r) first
// fold together (2i sends everything to 2i+1), the p remaining "virtual" members run the power of
// two algorithm over the merged blocks, and 2i+1 hands block 2i back at the end (the allgather
// mirrors this). The folded members cost one extra full-buffer message.
#ifndef CAFFE_PARALLEL_RCS_COMMUNICATOR_HPP_
#define CAFFE_PARALLEL_RCS_COMMUNICATOR_HPP_

#include <memory>
#include <string>

#include "caffe/parallel/mpi_group_communicator.hpp"

namespace caffe {

/// Recursive halving reduce-scatter + recursive doubling allgather (host buffers).
template <typename Dtype>
class RcsCommunicator : public MpiGroupCommunicator<Dtype> {
 public:
  explicit RcsCommunicator(std::shared_ptr<MpiGroup> group,
                           Compression compression = Compression::kNone);
  std::string name() const override { return "rcs"; }
  void ReduceScatter(Dtype* buffer, const Blocks& blocks) override;
  void Allgather(Dtype* buffer, const Blocks& blocks) override;

 private:
  /// The member that runs the power-of-two algorithm for virtual member v.
  int RealRank(int virtual_rank) const;
  /// Where virtual member v's merged blocks start (v == power_ gives the end of the buffer).
  size_t VirtualStart(const Blocks& blocks, int virtual_rank) const;

  int power_;    // p: the largest power of two <= P
  int folded_;   // r = P - p: pairs (2i, 2i+1), i < r, fold into one virtual member
  int virtual_;  // this member's virtual rank, or -1 if it sits out (folded into rank + 1)
};

}  // namespace caffe

#endif  // CAFFE_PARALLEL_RCS_COMMUNICATOR_HPP_
