// The hierarchical ("enhanced") allreduce over an XxYxZ topology, and the factory that builds the
// allreduce a -ddl mode asks for. With stages for the dimensions larger than 1, in order x, y, z:
// the first stage reduce-scatters the buffer among its members (inside a host), each later stage
// allreduces this member's shard among its members (across hosts, then across groups), and the
// first stage allgathers the shards back. Traffic across hosts is n/X per learner instead of n.
// With a single stage it is that stage's allreduce. Each stage may use a different algorithm
// (mode b: NCCL or ring inside a host, the measured fastest across hosts; mode p: measured
// everywhere). Time spent per stage is kept for -dump_iter.
//
// Legend: X learners per host, Y hosts per group, Z groups; n elements in the buffer.
#ifndef CAFFE_PARALLEL_HIERARCHICAL_COMMUNICATOR_HPP_
#define CAFFE_PARALLEL_HIERARCHICAL_COMMUNICATOR_HPP_

#include <memory>
#include <string>
#include <vector>

#include "caffe/parallel/communicator.hpp"
#include "caffe/parallel/ddl_options.hpp"

namespace caffe {

/// Per-dimension reduce-scatter / allreduce / allgather; see the file comment.
template <typename Dtype>
class HierarchicalCommunicator : public Communicator<Dtype> {
 public:
  struct Stage {
    int dim = 0;  // 0: x (inside a host), 1: y (across hosts), 2: z (across groups)
    std::unique_ptr<TwoPhaseCommunicator<Dtype>> comm;
    std::string why;  // how the algorithm was chosen, for logs ("fixed by -mode r", timings)
  };
  /// `stages`: one per dimension larger than 1, in dimension order. `device_buffers`: Allreduce
  /// gets device memory (GPU learners); stages that work on the host are staged through a host
  /// copy.
  HierarchicalCommunicator(std::vector<Stage> stages, int world_rank, int world_size,
                           bool device_buffers);
  std::string name() const override;
  void Allreduce(Dtype* buffer, size_t count) override;
  bool on_device() const override { return device_buffers_; }
  int rank() const override { return world_rank_; }
  int size() const override { return world_size_; }

  const std::vector<Stage>& stages() const { return stages_; }
  /// Seconds spent in each stage (the first: reduce-scatter + allgather) since ResetTimes().
  const std::vector<double>& stage_seconds() const { return stage_seconds_; }
  void ResetTimes();

 private:
  /// Makes buffer[offset, offset + count) current where the stage works (host or device).
  Dtype* Place(Dtype* buffer, size_t offset, size_t count, bool on_device);

  std::vector<Stage> stages_;
  int world_rank_, world_size_;
  bool device_buffers_;
  bool data_on_host_ = false;  // device_buffers_ only: the live copy is host_ (else the buffer)
  std::vector<Dtype> host_;    // host staging of device buffers
  std::vector<double> stage_seconds_;
};

/// Builds the allreduce `options` ask for over all of MPI_COMM_WORLD. Collective: every learner
/// calls it with the same arguments. `gpu_learner`: buffers will be device memory (NCCL is used
/// where the mode allows and the build has it). `sample_count`: the buffer size the explorer
/// times candidates with (the gradient bucket size). Logs the choice per dimension on rank 0.
template <typename Dtype>
std::unique_ptr<HierarchicalCommunicator<Dtype>> CreateDdlCommunicator(const DdlOptions& options,
                                                                       const DdlTopology& topology,
                                                                       bool gpu_learner,
                                                                       size_t sample_count);

/// Whether this build has NCCL (GPU learners can use modes n, b, p with it).
bool DdlHasNccl();

}  // namespace caffe

#endif  // CAFFE_PARALLEL_HIERARCHICAL_COMMUNICATOR_HPP_
