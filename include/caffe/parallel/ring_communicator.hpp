// The ring: members pass blocks to their right neighbour. Reduce-scatter takes P-1 steps; at step
// s member r sends block (r-s-1) mod P, receives block (r-s-2) mod P from its left neighbour and
// adds it in, so block r is complete at r after the last step. Allgather takes P-1 more steps,
// forwarding complete blocks. Each member sends 2(P-1)/P n elements in 2(P-1) messages: bandwidth
// optimal, latency linear in P. Large blocks go in segments so adding one segment overlaps
// receiving the next.
#ifndef CAFFE_PARALLEL_RING_COMMUNICATOR_HPP_
#define CAFFE_PARALLEL_RING_COMMUNICATOR_HPP_

#include <memory>
#include <string>
#include <vector>

#include "caffe/parallel/mpi_group_communicator.hpp"

namespace caffe {

/// Ring reduce-scatter + allgather over point-to-point MPI (host buffers).
template <typename Dtype>
class RingCommunicator : public MpiGroupCommunicator<Dtype> {
 public:
  explicit RingCommunicator(std::shared_ptr<MpiGroup> group,
                            Compression compression = Compression::kNone)
      : MpiGroupCommunicator<Dtype>(std::move(group), compression) {}
  std::string name() const override { return "ring"; }
  void ReduceScatter(Dtype* buffer, const Blocks& blocks) override;
  void Allgather(Dtype* buffer, const Blocks& blocks) override;
};

}  // namespace caffe

#endif  // CAFFE_PARALLEL_RING_COMMUNICATOR_HPP_
