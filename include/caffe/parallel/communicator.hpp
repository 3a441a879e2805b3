// Communicator: how a group of learners sums a buffer (allreduce). One class per algorithm, in
// the style of gloo. Between processes (DDL, over MPI): RingCommunicator, MpiCommunicator
// (MPI_Reduce_scatter + MPI_Allgatherv), RcsCommunicator (recursive halving / doubling), and
// HierarchicalCommunicator, which composes them dimension by dimension of an XxYxZ topology.
// Between the solver threads of one process: SharedMemoryCommunicator. On GPUs, in or across
// processes: NcclCommunicator. docs/DDL.md gives each algorithm's cost model.
//
// Legend: P members in the group, n elements in the buffer; block i of a buffer is the part member
// i owns after a reduce-scatter.
#ifndef CAFFE_PARALLEL_COMMUNICATOR_HPP_
#define CAFFE_PARALLEL_COMMUNICATOR_HPP_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace caffe {

/// Where each member's block of a buffer lies: block i is [offset[i], offset[i] + count[i]).
/// Blocks are contiguous and in member order (block i+1 starts where block i ends).
struct Blocks {
  std::vector<size_t> offset, count;
  /// n elements in P contiguous blocks in member order whose sizes differ by at most one (the
  /// first n % P blocks are the larger); blocks may be empty when n < P.
  static Blocks Even(size_t total, int parts);
  int parts() const { return static_cast<int>(count.size()); }
  size_t total() const { return count.empty() ? 0 : offset.back() + count.back(); }
  size_t largest() const;
};

/// An allreduce over a fixed group of learners.
template <typename Dtype>
class Communicator {
 public:
  virtual ~Communicator() = default;
  /// The algorithm ("ring", "mpi", "rcs", "nccl", or a composition such as "ring|rcs").
  virtual std::string name() const = 0;
  /// In place: buffer[0, n) becomes the element-wise sum over the members. All members end with
  /// bitwise the same values (each element is added up once, then copied), so learners' weights
  /// never drift apart.
  virtual void Allreduce(Dtype* buffer, size_t count) = 0;
  /// Whether buffers are device (GPU) memory; otherwise host memory.
  virtual bool on_device() const { return false; }
  virtual int rank() const = 0;
  virtual int size() const = 0;
};

/// An algorithm made of a reduce-scatter and an allgather; the hierarchical communicator uses the
/// two phases separately (reduce-scatter inside a host, allreduce of the shard across hosts,
/// allgather inside the host).
template <typename Dtype>
class TwoPhaseCommunicator : public Communicator<Dtype> {
 public:
  /// In place: afterwards block rank() of `blocks` holds the sum over the members; the other
  /// blocks hold partial sums. blocks.parts() must equal size().
  virtual void ReduceScatter(Dtype* buffer, const Blocks& blocks) = 0;
  /// In place: each member's block rank() is copied into every member's buffer.
  virtual void Allgather(Dtype* buffer, const Blocks& blocks) = 0;
  /// ReduceScatter then Allgather over Blocks::Even.
  void Allreduce(Dtype* buffer, size_t count) override;

 protected:
  /// Throws caffe::Error unless `blocks` has one block per member, is contiguous and each block
  /// fits one message (an int count, as MPI and NCCL's callers here take them).
  void CheckBlocks(const Blocks& blocks) const;
};

/// dst[i] += src[i] for i < count.
template <typename Dtype>
void AddInto(Dtype* dst, const Dtype* src, size_t count);

}  // namespace caffe

#endif  // CAFFE_PARALLEL_COMMUNICATOR_HPP_
